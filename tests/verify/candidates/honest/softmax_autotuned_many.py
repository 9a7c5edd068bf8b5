"""Honest softmax with a large autotune space: eight configs (block size x warps), every one of
them right. One row per program, three passes over the row in blocks (max, sum, normalize), so
any block size works for any row length.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: accepted (152 s). Must stay accepted.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=1),
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 512}, num_warps=2),
        triton.Config({"BLOCK": 512}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=16),
    ],
    key=["n_cols"],
)
@triton.jit
def _softmax_tuned_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        m = tl.maximum(m, x.to(tl.float32))
    m_row = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        s += tl.exp(x.to(tl.float32) - m_row)
    s_row = tl.sum(s, axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
        y = tl.exp(x.to(tl.float32) - m_row) / s_row
        tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_tuned_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0)
        )
    return y.view(x.shape)
