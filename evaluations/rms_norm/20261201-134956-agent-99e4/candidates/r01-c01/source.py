"""RMSNorm over the last dimension: the whole row in registers, warps sized to the row.

Rows up to 1024 wide go several to a program ([ROWS, BLOCK] tile), so each program moves enough
bytes to hide memory latency and loads the weight once for all its rows. Wider rows take one
program each, with enough warps that a thread holds at most 16 values (no spills) and each
issues 16-byte loads. y = x * rsqrt(mean(x^2) + eps) * weight in fp32, one rounding at the store.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    w_ptr,  # *T, [n_cols], contiguous
    n_rows,
    n_cols,
    eps,
    stride_xm,
    stride_xn,
    stride_ym,
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # power of two >= n_cols
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    col_ok = cols < n_cols
    mask = (rows[:, None] < n_rows) & col_ok[None, :]
    x = tl.load(
        x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask, other=0.0
    ).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / n_cols + eps)
    y = x * inv[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    block = triton.next_power_of_2(n_cols)
    rows = max(1, min(16, 2048 // block))
    warps = max(1, min(16, rows * block // (16 * 32)))
    _rms_norm_kernel[(triton.cdiv(n_rows, rows),)](
        y, x2, w, n_rows, n_cols, eps, x2.stride(0), x2.stride(1), y.stride(0),
        ROWS=rows, BLOCK=block, num_warps=warps,
    )
    return y.view(x.shape)
