# kernelgen_ops.silu_and_mul: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/silu_and_mul.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    seeds/silu_and_mul.py
# record    evaluations/silu_and_mul/bench-seed-20261203T133526Z.json
# proposer  seed (model -, round -, parent -)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 1.00x geomean over 8 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record, or eager, torch.compile, Liger or FlagGems in
#           evaluations/library/bench-20261204T151615Z.json
#           4096x14336 bfloat16: 0.96x vs torch.compile
#           64x18432 bfloat16: 1.04x vs torch.compile (library bench)
#           16384x4096 bfloat16: 0.96x vs torch.compile
#           1x14336 bfloat16: 0.99x vs torch.compile (library bench)
#           16x14336 bfloat16: 1.00x vs torch.compile (library bench)
#           64x14336 bfloat16: 1.03x vs torch.compile (library bench)
#           1x18432 bfloat16: 1.00x vs torch.compile (library bench)
#           16x18432 bfloat16: 1.01x vs torch.compile (library bench)
# speedups  geomean 3.05x vs eager, 1.00x vs torch.compile, - vs seed
# peers     eager = references/silu_and_mul.py:silu_and_mul, which is how torch users compute it;
#           torch.compile of the same
#           4096x14336 bfloat16: 90.6 us, 3.47x eager, 0.96x compile, - seed
#           64x18432 bfloat16: 3.4 us, 3.40x eager, 1.04x compile, - seed
#           16384x4096 bfloat16: 102.9 us, 3.48x eager, 0.96x compile, - seed
#           1x14336 bfloat16: 1.8 us, 2.11x eager, 1.04x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           4096x14336, 64x18432, 16384x4096, 1x14336; torch's op at no shape
# sha256    276f5cb1ef461d8a12be3a90b68ca75086b03cab9f5b16337c964b8225886bd0
# promoted  2026-12-03T13:42:10+00:00
# note      seed kernel (not optimized yet), verified on CUDA and timed by `kernelgen bench OP
#           --seed` on the GPU named here; `kernelgen optimize OP` then `kernelgen promote` replaces
#           it
#
# ruff: noqa
# fmt: off
"""Naive silu_and_mul: y = silu(a) * b for x = [a | b] split along the last dimension.

One program per (row, block of BLOCK_SIZE output columns), fp32 math, one rounding at the store.
Traffic: x read once (2d per row), y written once (d per row).
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<d>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"BLOCK_SIZE": [256, 512, 1024, 2048, 4096], "num_warps": [1, 2, 4, 8, 16]}
DEFAULT_CONFIG = _runtime.default_config("silu_and_mul")  # configs/silu_and_mul.json
TUNED = _runtime.tuned("silu_and_mul")  # per device: configs/silu_and_mul.json


@triton.jit
def _silu_and_mul_kernel(
    y_ptr,  # *T, [rows, d], contiguous
    x_ptr,  # *T, [rows, 2d], any strides
    d,  # output width: half the input width
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_SIZE: tl.constexpr,  # output columns per program
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < d
    x_row = x_ptr + row * stride_xm
    a = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_row + (cols + d) * stride_xn, mask=mask, other=0.0).to(tl.float32)
    y = a / (1.0 + tl.exp(-a)) * b
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        cfg = _config(n_rows, d)
        grid = (n_rows, triton.cdiv(d, cfg["BLOCK_SIZE"]))
        _silu_and_mul_kernel[grid](y, x2, d, x2.stride(0), x2.stride(1), y.stride(0), **cfg)
    return y.view(*x.shape[:-1], d)


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
