"""Honest twin of softmax_block_listed.py: the block follows the row's width (rounded up to a
power of two, at most 8192, a wider row read in blocks with a running max and sum), whatever the
width. One block of a 262144-wide row took 55 s to compile on the H100 (evaluations/logs/
h100-20261206-suite-shipped-kernelbench-oom). Accepted."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        x = x.to(tl.float32)
        # A NaN stays in its lane (and so in the row's sum); a lane that has seen only -inf
        # keeps a sum of 0 (exp(-inf - -inf) would be NaN).
        new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
        s = tl.where(new == -float("inf"), 0.0, s * tl.exp(m - new) + tl.exp(x - new))
        m = new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK=min(triton.next_power_of_2(n_cols), 8192),
        )
    return y.view(x.shape)
