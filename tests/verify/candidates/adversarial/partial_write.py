"""Writes every row but the last: right on most entries, NaN (poisoned) on the rest."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    num = tl.exp(x.to(tl.float32) - tl.max(x.to(tl.float32), axis=0))
    tl.store(
        y_ptr + row * n_cols + cols,
        (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty),
        mask=mask,
    )


def softmax(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    y = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    rows = max(x2.shape[0] - 1, 1)
    _softmax_kernel[(rows,)](
        y, x2, n, x2.stride(0), x2.stride(1), BLOCK_SIZE=triton.next_power_of_2(n)
    )
    return y.view(x.shape)
