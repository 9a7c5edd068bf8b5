"""kb1_1_softmax: softmax over dim 1 of a 2-D input, one program per row, the whole row in one
block (the plain Triton softmax)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr,  # *fp32, [rows, cols], contiguous
    x_ptr,  # *fp32, [rows, cols]
    n_cols,  # row length
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    BLOCK: tl.constexpr,  # power of two >= n_cols
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, num / tl.sum(num, axis=0), mask=mask)


def kb1_1_softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    _softmax_kernel[(rows,)](
        y, x, cols, x.stride(0), x.stride(1), BLOCK=triton.next_power_of_2(cols)
    )
    return y
