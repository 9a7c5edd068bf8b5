"""Host overhead of kernelgen_ops on decode-sized inputs (CUDA).

Per operator, the per-call cost of
- `kernelgen_ops.<op>(...)` (the public function: contract checks, launcher, config lookup),
- the custom op `torch.ops.kernelgen_ops.<op>` (what torch.compile graphs call),
- a bare launch of the same compiled kernel with pre-computed arguments and output (the floor
  for a Python caller),
- torch eager on the same input,
each as the mean of many back-to-back calls with one synchronize at the end (the enqueue rate,
which is what a decode step pays when kernels are tiny), and as a CUDA-graph replay for the GPU
time alone. Writes JSON to the path given (default: stdout only).
"""

from __future__ import annotations

import json
import sys
import time

import kernelgen_ops
import torch
import triton
from kernelgen_ops import rms_norm as rms_mod
from kernelgen_ops import silu_and_mul as silu_mod
from kernelgen_ops import softmax as softmax_mod

CALLS = 2000


def per_call_us(fn) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / CALLS * 1e6


def graph_us(fn) -> float:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(100):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / 1000


def cases():
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(1, 32000, device=dev, dtype=dt)
    y = torch.empty_like(x)
    cfg = softmax_mod._config(1, 32000)
    block = triton.next_power_of_2(32000)
    yield (
        "softmax",
        "1x32000",
        lambda: kernelgen_ops.softmax(x),
        lambda: torch.ops.kernelgen_ops.softmax(x),
        lambda: softmax_mod._softmax_kernel[(1,)](
            y, x, 32000, x.stride(0), x.stride(1), y.stride(0), BLOCK_SIZE=block, **cfg
        ),
        lambda: torch.softmax(x, -1),
    )

    h = torch.randn(1, 4096, device=dev, dtype=dt)
    w = torch.rand(4096, device=dev, dtype=dt) + 0.5
    o = torch.empty_like(h)
    cfg = rms_mod._config(1, 4096)
    yield (
        "rms_norm",
        "1x4096",
        lambda: kernelgen_ops.rms_norm(h, w, 1e-6),
        lambda: torch.ops.kernelgen_ops.rms_norm(h, w, 1e-6),
        lambda: rms_mod._rms_norm_kernel[(1,)](
            o, h, w, 4096, 1e-6, h.stride(0), h.stride(1), o.stride(0), BLOCK_SIZE=4096, **cfg
        ),
        lambda: torch.nn.functional.rms_norm(h, (4096,), w, 1e-6),
    )

    g = torch.randn(1, 2 * 14336, device=dev, dtype=dt)
    out = torch.empty(1, 14336, device=dev, dtype=dt)
    cfg = silu_mod._config(1, 14336)
    grid = (1, triton.cdiv(14336, cfg["BLOCK_SIZE"]))
    yield (
        "silu_and_mul",
        "1x14336",
        lambda: kernelgen_ops.silu_and_mul(g),
        lambda: torch.ops.kernelgen_ops.silu_and_mul(g),
        lambda: silu_mod._silu_and_mul_kernel[grid](
            out, g, 14336, g.stride(0), g.stride(1), out.stride(0), **cfg
        ),
        lambda: torch.nn.functional.silu(g[..., :14336]) * g[..., 14336:],
    )


def main() -> None:
    rows = []
    for op, shape, public, custom, bare, eager in cases():
        row = {
            "op": op,
            "shape": shape,
            "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "triton": triton.__version__,
        }
        for name, fn in (
            ("public", public),
            ("custom_op", custom),
            ("bare_launch", bare),
            ("eager", eager),
        ):
            row[f"{name}_us"] = round(per_call_us(fn), 2)
        row["gpu_graph_us"] = round(graph_us(bare), 2)
        row["overhead_vs_bare_us"] = round(row["public_us"] - row["bare_launch_us"], 2)
        rows.append(row)
        print(json.dumps(row))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
