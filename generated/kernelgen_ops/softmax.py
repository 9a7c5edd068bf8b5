# kernelgen_ops.softmax: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/softmax.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    seeds/softmax.py
# record    evaluations/softmax/bench-seed-20261130T153623Z.json
# proposer  seed (model -, round -, parent -)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# speedups  geomean 0.66x vs eager, 0.77x vs torch.compile, - vs seed
# peers     eager = references/softmax.py:softmax, which is how torch users compute it;
#           torch.compile of the same
#           4096x4096 bfloat16: 22.0 us, 2.64x eager, 2.04x compile, - seed
#           32768x1024 bfloat16: 39.4 us, 1.50x eager, 0.95x compile, - seed
#           1024x32768 bfloat16: 66.2 us, 1.07x eager, 1.13x compile, - seed
#           256x151936 bfloat16: 753.6 us, 0.12x eager, 0.20x compile, - seed
#           1x32000 bfloat16: 13.6 us, 1.17x eager, 3.55x compile, - seed
#           16x151936 bfloat16: 343.3 us, 0.13x eager, 0.13x compile, - seed
# dispatch  per call (host time included where measured), against eager: the kernel at 4096x4096;
#           torch's op at 32768x1024, 1024x32768, 256x151936, 1x32000, 16x151936
# sha256    9a65c1e7cc2deba09fcae8e980d93f824a73facb7a8c7560c1d3ac55e70f86cf
# promoted  2026-12-01T13:51:16+00:00
# note      seed kernel (not optimized yet), verified on CUDA and timed by `kernelgen bench OP
#           --seed` on the GPU named here; `kernelgen optimize OP` then `kernelgen promote` replaces
#           it; CAVEAT: this record's eager and torch.compile peers ran the reference as written,
#           not references/softmax.py:eager, so its x-eager figures overstate
#
# ruff: noqa
# fmt: off
"""Naive softmax over the last dimension: one program per row, the whole row in one block.

BLOCK_SIZE is the row length rounded up to a power of two, so a long row lives in registers (and
spills); the math is fp32 whatever the input dtype. Traffic: x read once, y written once.
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<cols>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"num_warps": [1, 2, 4, 8, 16, 32]}
DEFAULT_CONFIG = _runtime.default_config("softmax")  # configs/softmax.json
TUNED = _runtime.tuned("softmax")  # per device: configs/softmax.json


@triton.jit
def _softmax_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    n_cols,  # row length
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_SIZE: tl.constexpr,  # power of two >= n_cols
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    # Subtracting the row max keeps exp() finite for large inputs.
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want))

    return TUNED[min(TUNED, key=distance)]


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK_SIZE=triton.next_power_of_2(n_cols), **_config(n_rows, n_cols),
        )
    return y.view(x.shape)


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
