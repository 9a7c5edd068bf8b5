"""The interpreter made to compute what the H200 computes, where Triton 3.6's does not."""

from __future__ import annotations

import os
import subprocess
import sys

# Run in a fresh interpreter: TRITON_INTERPRET is read when triton is imported, and the patch
# is the sandboxed runner's, not this process's.
_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, y_ptr, out_ptr, PROPAGATE: tl.constexpr):
    i = tl.arange(0, 4)
    x = tl.load(x_ptr + i)
    y = tl.load(y_ptr + i)
    if PROPAGATE:
        hi = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
        lo = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    else:
        hi = tl.maximum(x, y)
        lo = tl.minimum(x, y)
    tl.store(out_ptr + i, hi)
    tl.store(out_ptr + 4 + i, lo)

nan = float("nan")
x = torch.tensor([nan, 1.0, nan, -float("inf")])
y = torch.tensor([2.0, nan, nan, 3.0])
for propagate in (False, True):
    out = torch.empty(8)
    k[(1,)](x, y, out, PROPAGATE=propagate)
    print(propagate, out.tolist())
"""


def _probe(install: bool) -> dict[str, str]:
    code = _PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_max_and_min_drop_nan_as_the_gpu_does() -> None:
    seen = _probe(install=True)
    # PTX max.f32/min.f32: NaN only when both are NaN.
    assert seen["False"] == "[2.0, 1.0, nan, 3.0, 2.0, 1.0, nan, -inf]"
    # PropagateNan.ALL keeps NaN, on the GPU and here.
    assert seen["True"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"


def test_the_interpreter_alone_differs() -> None:
    # What the patch is for: without it, the CPU keeps the NaN the GPU drops.
    assert _probe(install=False)["False"] == "[nan, nan, nan, 3.0, nan, nan, nan, -inf]"


_FP8_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(x_ptr, q_ptr, back_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    q = tl.load(x_ptr + i, mask=i < n).to(tl.float8e4nv)
    tl.store(q_ptr + i, q, mask=i < n)
    tl.store(back_ptr + i, q.to(tl.float32), mask=i < n)

g = torch.Generator().manual_seed(0)
# Values that round up to a power of two, ties, the saturating top, NaN, zeros, a subnormal.
x = torch.cat([torch.tensor([31.6, 124.4, 17.0, 18.0, 500.0, -1e6, float("nan"), 0.0, -0.0,
               3e-3]), torch.randn(1000, generator=g) * 100])
q = torch.empty(x.numel(), dtype=torch.float8_e4m3fn)
back = torch.empty(x.numel())
k[(1,)](x, q, back, x.numel(), BLOCK=2048)
want = x.clamp(-448, 448).to(torch.float8_e4m3fn).float()
same = lambda a: bool(((a == want) | (a.isnan() & want.isnan())).all())
print("q", same(q.float()), "back", same(back), q[:10].float().tolist())
"""


def _fp8_probe(install: bool) -> str:
    code = _FP8_PROBE.format(install="interpreter.install()" if install else "")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_fp8_casts_round_and_saturate_as_the_gpu_does() -> None:
    # cvt.rn.satfinite: nearest even (17 -> 16, 18 -> 18), saturated at 448, NaN kept.
    assert _fp8_probe(install=True) == (
        "q True back True [32.0, 128.0, 16.0, 18.0, 448.0, -448.0, nan, 0.0, -0.0, 0.00390625]"
    )


def test_the_interpreter_alone_rounds_fp8_wrongly() -> None:
    assert _fp8_probe(install=False).startswith("q False")


_BF16_PROBE = """
import torch, triton, triton.language as tl
from kernelgen.verify import interpreter
{install}

@triton.jit
def k(a_ptr, b_ptr, c_ptr, h_ptr, N: tl.constexpr):
    i = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + i).to(tl.bfloat16)
    tl.store(h_ptr + i, a.to(tl.float32))
    tl.store(c_ptr + i, tl.dot(a, tl.load(b_ptr + i).to(tl.bfloat16)))

g = torch.Generator().manual_seed(0)
a, b = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
c, h = torch.empty(32, 32), torch.empty(32, 32)
k[(1,)](a, b, c, h, N=32)
want = a.bfloat16().float() @ b.bfloat16().float()
print(bool((h == a.bfloat16().float()).all()), float((c - want).abs().max()) < 1e-4)
"""


def test_bf16_rounds_to_nearest_even_and_dots_multiply_values() -> None:
    """cvt.rn.bf16.f32 and a tensor-core dot of bf16 values (exact products, fp32 sums): what
    kernels that split fp32 into bf16 pieces rely on. Without the patch both are wrong."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    for install, want in (("interpreter.install()", "True True"), ("", "False False")):
        out = subprocess.run(
            [sys.executable, "-c", _BF16_PROBE.format(install=install)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert out == want, (install, out)
