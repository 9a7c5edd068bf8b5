"""Naive Hadamard transform: y = x @ H_D * D^-0.5, the matrix never stored: H[i, j] is
(-1)^popcount(i & j), computed where it is needed.

One program per (row, block of BLOCK_J output columns). It walks the row's D inputs in BLOCK_I
steps and adds x[i] * H[i, j] over a [BLOCK_I, BLOCK_J] tile of signs, in fp32, one rounding at
the store. Dense work, D^2 multiply-adds per row where the fast transform needs D * log2(D) adds,
and the row is read D / BLOCK_J times (L2 catches the repeats).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<D>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"BLOCK_J": [32, 64, 128], "num_warps": [2, 4, 8]}
DEFAULT_CONFIG = {"BLOCK_J": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _hadamard_kernel(
    y_ptr,  # *T, [rows, D], contiguous
    x_ptr,  # *T, [rows, D], any strides
    d,  # D, a power of two
    scale,  # D^-0.5
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_I: tl.constexpr,  # inputs per step
    BLOCK_J: tl.constexpr,  # output columns per program
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_J + tl.arange(0, BLOCK_J)
    col_ok = cols < d
    acc = tl.zeros((BLOCK_J,), dtype=tl.float32)
    for i0 in range(0, d, BLOCK_I):
        ins = i0 + tl.arange(0, BLOCK_I)
        xv = tl.load(x_ptr + row * stride_xm + ins * stride_xn, mask=ins < d, other=0.0)
        # The parity of i & j, its 32 bits folded into the lowest.
        bits = ins[:, None] & cols[None, :]
        bits = bits ^ (bits >> 16)
        bits = bits ^ (bits >> 8)
        bits = bits ^ (bits >> 4)
        bits = bits ^ (bits >> 2)
        bits = bits ^ (bits >> 1)
        sign = 1.0 - 2.0 * (bits & 1).to(tl.float32)
        acc += tl.sum(xv.to(tl.float32)[:, None] * sign, axis=0)
    y = acc * scale
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=col_ok)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def hadamard(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1]
    x2 = x.reshape(-1, d)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        cfg = _config(n_rows, d)
        grid = (n_rows, triton.cdiv(d, cfg["BLOCK_J"]))
        _hadamard_kernel[grid](
            y, x2, d, d**-0.5, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK_I=min(64, d), **cfg,
        )  # fmt: skip
    return y.view(x.shape)
