"""The operators as torch custom ops: schema, fake implementations, and torch.compile graphs.

aot_eager runs Dynamo and AOTAutograd through the fake implementations without generating code;
Inductor compiles the rest of the graph around the opaque kernels (C++ on CPU, Triton on CUDA).
"""

import os
import shutil

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import kernelgen_ops

OPS = {
    "softmax": lambda x: (x,),
    "rms_norm": lambda x: (x, torch.rand(x.shape[-1], dtype=x.dtype, device=x.device) + 0.5, 1e-6),
    "silu_and_mul": lambda x: (x,),
}


def _inputs(device: str, dtype: torch.dtype) -> list[torch.Tensor]:
    x = torch.randn(5, 3, 40, generator=torch.Generator().manual_seed(0)).to(device, dtype)
    return [x, x.transpose(0, 1), x[..., 10:]]  # contiguous, permuted rows, sliced columns


@pytest.mark.parametrize("op", sorted(OPS))
def test_opcheck(op: str, device: str) -> None:
    # Schema, fake vs real outputs (shapes, dtypes, strides), AOT dispatch with dynamic shapes.
    overload = getattr(torch.ops.kernelgen_ops, op).default
    for x in _inputs(device, torch.float32):
        torch.library.opcheck(overload, OPS[op](x))


@pytest.mark.parametrize("op", sorted(OPS))
def test_fake_outputs(op: str, device: str, dtype: torch.dtype) -> None:
    overload = getattr(torch.ops.kernelgen_ops, op).default
    for x in _inputs(device, dtype):
        real = overload(*OPS[op](x))
        with FakeTensorMode() as mode:
            args = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in OPS[op](x)]
            fake = overload(*args)
        assert (fake.shape, fake.dtype, fake.device) == (real.shape, real.dtype, real.device)
        assert fake.stride() == real.stride()
        meta = overload(*[a.to("meta") if isinstance(a, torch.Tensor) else a for a in OPS[op](x)])
        assert meta.shape == real.shape and meta.dtype == real.dtype


def test_fake_checks_the_contract(device: str) -> None:
    with FakeTensorMode(), pytest.raises(ValueError, match="must be even"):
        torch.ops.kernelgen_ops.silu_and_mul(torch.empty(4, 7, device=device))


def _model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = kernelgen_ops.rms_norm(x * 2, w, 1e-6)
    return kernelgen_ops.softmax(h) + kernelgen_ops.silu_and_mul(torch.cat([h, h], -1))


def _expected(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.nn.functional.rms_norm(x * 2, (x.shape[-1],), w, 1e-6)
    return torch.softmax(h, -1) + torch.nn.functional.silu(h) * h


def _compile_and_run(backend: str, device: str, dynamic: bool) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_model, backend=backend, fullgraph=True, dynamic=dynamic)
    for rows in (7, 12):
        x = torch.randn(rows, 48, generator=torch.Generator().manual_seed(rows)).to(device)
        w = torch.rand(48).to(device) + 0.5
        torch.testing.assert_close(compiled(x, w), _expected(x, w), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_aot_eager(dynamic: bool, device: str) -> None:
    _compile_and_run("aot_eager", device, dynamic)


def test_compile_graph_holds_the_custom_ops(device: str) -> None:
    seen: list[str] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list) -> torch.fx.GraphModule:
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm

    torch._dynamo.reset()
    x, w = torch.randn(4, 16).to(device), torch.ones(16).to(device)
    torch.compile(_model, backend=backend, fullgraph=True)(x, w)
    for op in OPS:
        assert f"kernelgen_ops.{op}.default" in seen


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_inductor(dynamic: bool, device: str) -> None:
    # Inductor generates C++ for the graph's other ops on CPU, Triton on CUDA.
    if device == "cpu" and shutil.which(os.environ.get("CXX", "g++")) is None:
        pytest.skip("Inductor on CPU needs a C++ compiler")
    _compile_and_run("inductor", device, dynamic)
