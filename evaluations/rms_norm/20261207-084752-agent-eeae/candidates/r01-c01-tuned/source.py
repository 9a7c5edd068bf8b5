"""Naive RMSNorm over the last dimension: one program per row, the whole row in one block.

y = x * rsqrt(mean(x^2) + eps) * weight, in fp32, stored in x's dtype. Traffic: x read once,
y written once, the weight read by every row (it stays in L2).
"""

import functools
import math

import torch
import triton
import triton.language as tl

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<cols>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"num_warps": [2, 4, 8, 16, 32]}
DEFAULT_CONFIG = {"num_warps": 4}
TUNED: dict[str, dict[str, int]] = {'131072x128': {'num_warps': 4},
 '16384x8192': {'num_warps': 16},
 '1x4096': {'num_warps': 16},
 '4096x4096': {'num_warps': 8},
 '64x8192': {'num_warps': 16},
 '8x8192': {'num_warps': 16}}


@triton.jit
def _rms_norm_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    w_ptr,  # *T, [n_cols], contiguous
    n_cols,  # row length
    eps,  # added to the mean square before the rsqrt
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_SIZE: tl.constexpr,  # power of two >= n_cols
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * stride_ym + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _rms_norm_kernel[(n_rows,)](
            y, x2, w, n_cols, eps, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK_SIZE=triton.next_power_of_2(n_cols), **_config(n_rows, n_cols),
        )
    return y.view(x.shape)
