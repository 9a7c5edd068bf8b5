"""What each step a decode-sized call could take costs on this GPU host (CUDA).

    python scripts/host_floor.py [OUT.json]

kernelgen_ops' host budget per call is torch eager's + 2 us ([H]). Whether a launch path can meet
it depends on what its steps cost here, and on the H200's host they cost three times what they do
on a workstation (a tensor's .shape: 0.25-0.31 us). This times each step alone in a bare process:
tensor reads a key would make, the ways to allocate an output, the ways to ask for the stream,
Triton's compiled launch with integer pointers (the floor for a Python caller), and torch's own
calls the library is measured against. Each figure is the median over rounds of the mean of many
back-to-back calls (one synchronize per round); the steps are timed in rotated order per round,
so a slow spell of the host does not fall on one of them.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from kernelgen.bench.timing import host_us  # back-to-back calls, one synchronize at each end

CALLS = 3000
ROUNDS = 7


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def steps(x: torch.Tensor, w: torch.Tensor) -> dict[str, Callable[[], Any]]:
    dev = x.device
    shape, dtype, stride = x.shape, x.dtype, x.stride()
    y = torch.empty_like(x)
    kernel = _copy_kernel[(1,)](x, y, x.numel(), BLOCK=1024)  # compiled once, here
    grid = (1, 1, 1)
    run, fn, packed = kernel.run, kernel.function, kernel.packed_metadata
    # Triton 3.6's CudaLauncher hands its C function two flags and two scratch buffers more
    # (kernelgen_ops/_plans.py's _direct); this kernel needs no scratch.
    direct = getattr(run, "launch", None)
    raw_stream = torch._C._cuda_getCurrentRawStream
    get_device = torch._C._cuda_getDevice
    n = x.numel()
    xp, yp = x.data_ptr(), y.data_ptr()
    kept = {(shape,): True}
    nothing = lambda: None  # noqa: E731

    def launch_ints() -> None:
        run(*grid, raw_stream(0), fn, packed, None, None, None, xp, yp, n, 1024)

    def launch_direct() -> None:
        direct(
            *grid,
            raw_stream(0),
            fn,
            run.launch_cooperative_grid,
            run.launch_pdl,
            None,
            None,
            packed,
            None,
            None,
            None,
            xp,
            yp,
            n,
            1024,
        )

    def python_frame() -> None:
        nothing()

    return {
        "python_call": python_frame,
        "x.shape": lambda: x.shape,
        "x.stride()": lambda: x.stride(),
        "x.dtype": lambda: x.dtype,
        "x.device": lambda: x.device,
        "x.get_device()": lambda: x.get_device(),
        "x.data_ptr()": lambda: x.data_ptr(),
        "x.requires_grad": lambda: x.requires_grad,
        "x.is_neg()": lambda: x.is_neg(),
        "x.is_cuda": lambda: x.is_cuda,
        "torch.is_grad_enabled()": torch.is_grad_enabled,
        "torch.compiler.is_compiling()": torch.compiler.is_compiling,
        "shape_lookup": lambda: kept.get((x.shape,)),
        "key7": lambda: (
            x.dtype,
            x.device,
            x.shape,
            x.stride(),
            x.data_ptr() & 15,
            x.requires_grad,
            x.is_neg(),
        ),
        "key5": lambda: (x.dtype, x.shape, x.stride(), x.data_ptr() & 15, x.requires_grad),
        "device_index": get_device,
        "raw_stream(0)": lambda: raw_stream(0),
        "raw_stream(device_index)": lambda: raw_stream(get_device()),
        "torch.cuda.current_stream()": torch.cuda.current_stream,
        "empty_like(x)": lambda: torch.empty_like(x),
        "empty(shape,dtype,device)": lambda: torch.empty(shape, dtype=dtype, device=dev),
        "empty(shape,dtype,'cuda')": lambda: torch.empty(shape, dtype=dtype, device="cuda"),
        "x.new_empty(shape)": lambda: x.new_empty(shape),
        "empty_strided": lambda: torch.empty_strided(shape, stride, dtype=dtype, device=dev),
        "triton_launch_ints": launch_ints,
        "triton_launch_direct": launch_direct,
        "triton_jit_launch": lambda: _copy_kernel[(1,)](x, y, n, BLOCK=1024),
        "torch.neg(x)": lambda: torch.neg(x),
        "x.neg_()": lambda: x.neg_(),
        "torch.softmax(x,-1)": lambda: torch.softmax(x, -1),
        "torch.softmax(x,dim=-1)": lambda: torch.softmax(x, dim=-1),
        "x.softmax(-1)": lambda: x.softmax(-1),
        "F.softmax(x,-1)": lambda: F.softmax(x, -1),
        "F.rms_norm": lambda: F.rms_norm(x, (x.shape[-1],), w, 1e-6),
        "torch.rms_norm": lambda: torch.rms_norm(x, (x.shape[-1],), w, 1e-6),
    }


def main() -> None:
    torch.set_grad_enabled(False)
    x = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    named = steps(x, w)
    for fn in named.values():  # warm: compiles, allocator pools, lazy imports
        for _ in range(50):
            fn()
    names = list(named)
    rounds: dict[str, list[float]] = {n: [] for n in names}
    for r in range(ROUNDS):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            rounds[name].append(host_us(named[name], CALLS))
    frame = statistics.median(rounds["python_call"])
    rows = {
        name: {
            "us": round(statistics.median(v), 3),
            "minus_lambda_us": round(statistics.median(v) - frame, 3),
            "low": round(min(v), 3),
            "high": round(max(v), 3),
        }
        for name, v in rounds.items()
    }
    record = {
        "what": "host cost per call of single steps, bf16 1x4096 on CUDA; each step is called "
        "through a lambda, whose own cost is python_call's",
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "calls": CALLS,
        "rounds": ROUNDS,
        "steps": rows,
    }
    for name, row in rows.items():
        print(f"{row['us']:8.3f} us  (-frame {row['minus_lambda_us']:7.3f})  {name}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(record, f, indent=2)


if __name__ == "__main__":
    main()
