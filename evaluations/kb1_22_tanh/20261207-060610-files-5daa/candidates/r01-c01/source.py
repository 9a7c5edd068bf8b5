"""Tanh through libdevice's tanhf, the function torch.tanh calls on CUDA.

Math (fp32, as torch's CUDA kernel computes it): y = tanh(x) (libdevice.tanh: accurate near 0 and
saturating to +-1, no overflow).

Traffic: one read of x and one write of y, 8 bytes per element (4096 x 393216 fp32: 12.9 GB), so
the op is memory-bound: the aim is one pass at the H200's bandwidth. A contiguous x (the timed
layout) is walked as one flat array in BLOCK_SIZE chunks, with int64 offsets because the problem's
own tensor has more than 2^31 elements; 16 fp32 per thread at 4096/8 warps gives 128-bit loads and
stores and enough bytes in flight per SM. Any other 2-D layout is read through its strides in the
same kernel (the row/column split of the flat index), so no layout copy is made. y is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

TUNE_SPACE = {"BLOCK_SIZE": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}
DEFAULT_CONFIG = {"BLOCK_SIZE": 4096, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _tanh_kernel(
    y_ptr,  # *fp32, [n_rows, n_cols], contiguous
    x_ptr,  # *fp32, [n_rows, n_cols], strides (stride_xm, stride_xn)
    n_elements,  # n_rows * n_cols
    n_cols,  # row length (used by the strided path only)
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    STRIDED: tl.constexpr,  # False: x is contiguous and read flat
    BLOCK_SIZE: tl.constexpr,  # elements per program
):
    # int64: the problem's own tensor has over 2^31 elements.
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    if STRIDED:
        rows = offs // n_cols
        cols = offs - rows * n_cols
        x = tl.load(x_ptr + rows * stride_xm + cols * stride_xn, mask=mask)
    else:
        x = tl.load(x_ptr + offs, mask=mask)
    x = x.to(tl.float32)
    # Not 2*sigmoid(2x)-1: that loses relative accuracy near 0.
    y = libdevice.tanh(x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_22_tanh(x):
    if x.dim() != 2 and not x.is_contiguous():
        x = x.contiguous()  # the strided path reads 2-D views only
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = y.numel()
    if n == 0:
        return y
    strided = not x.is_contiguous()
    n_cols = x.shape[-1] if x.dim() > 0 else 1
    sm, sn = (x.stride(0), x.stride(1)) if strided else (0, 1)
    cfg = _config(n // max(n_cols, 1), n_cols)
    grid = (triton.cdiv(n, cfg["BLOCK_SIZE"]),)
    _tanh_kernel[grid](y, x, n, n_cols, sm, sn, STRIDED=strided, **cfg)
    return y
