"""Honest softmax in another style: fixed-size column blocks, two passes with an online max/sum
(so rows of any length fit), several rows per program."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_online_kernel(
    y_ptr,
    x_ptr,
    n_rows,
    n_cols,
    stride_xm,
    stride_xn,
    stride_ym,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    for r in range(ROWS):
        row = tl.program_id(0) * ROWS + r
        if row < n_rows:
            x_row = x_ptr + row.to(tl.int64) * stride_xm
            m = tl.full([BLOCK], -float("inf"), tl.float32)
            s = tl.zeros([BLOCK], tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
                x = x.to(tl.float32)
                # NaN kept: without propagate_nan the GPU's max returns the other operand.
                m_new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
                # Lanes that have seen only -inf keep a zero sum (avoid inf - inf = nan).
                scale = tl.where(m_new == -float("inf"), 0.0, tl.exp(m - m_new))
                s = s * scale + tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new))
                m = m_new
            m_row = tl.max(m, axis=0)
            s_row = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - m_row)), axis=0)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols < n_cols
                x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
                y = tl.exp(x.to(tl.float32) - m_row) / s_row
                tl.store(
                    y_ptr + row.to(tl.int64) * stride_ym + cols,
                    y.to(y_ptr.dtype.element_ty),
                    mask=mask,
                )


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    rows = 4
    _softmax_online_kernel[(triton.cdiv(n_rows, rows),)](
        y, x2, n_rows, n_cols, x2.stride(0), x2.stride(1), y.stride(0), ROWS=rows, BLOCK=512
    )
    return y.view(x.shape)
