"""Honest silu_and_mul on a 2-D grid of tiles: BLOCK_M rows x BLOCK_N output columns per program
(column tiles on grid axis 0, which has no 65535 limit; row tiles on axis 1), fp32 math, one
rounding at the store.

HEAD (c167456), `kernelgen verify silu_and_mul FILE --device cpu`: accepted (20 s).
Must stay accepted.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul_tile_kernel(
    y_ptr, x_ptr,
    n_rows, d,
    stride_xm, stride_xn, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.program_id(1).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < d)
    x_rows = x_ptr + rows[:, None] * stride_xm
    a = tl.load(x_rows + cols[None, :] * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_rows + (cols[None, :] + d) * stride_xn, mask=mask, other=0.0).to(tl.float32)
    y = a / (1.0 + tl.exp(-a)) * b
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty),
             mask=mask)


def silu_and_mul(x):
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        block_m, block_n = 8, 256
        grid = (triton.cdiv(d, block_n), triton.cdiv(n_rows, block_m))
        _silu_and_mul_tile_kernel[grid](
            y, x2,
            n_rows, d,
            x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4,
        )
    return y.view(*x.shape[:-1], d)
