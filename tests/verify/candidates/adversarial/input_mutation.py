"""Right answer, but it writes the result into its input as well (in-place softmax)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    ptrs = x_ptr + row * stride_xm + cols * stride_xn
    x = tl.load(ptrs, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(ptrs, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    y = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    _softmax_kernel[(x2.shape[0],)](
        y, x2, n, x2.stride(0), x2.stride(1), BLOCK_SIZE=triton.next_power_of_2(n)
    )
    return y.view(x.shape)
