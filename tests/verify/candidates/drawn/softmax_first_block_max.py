"""DRAWN 4 (values too kind): the row max taken from the first block only.

A looping softmax (2048-wide blocks: sum of exp, then the outputs) that subtracts the first
block's max instead of the row's. exp(x - m) is shift-invariant, so it is right as long as no
later value exceeds that max by more than exp() can take (88 in fp32): on the CPU grid's centred
draws it never does (`wide` rows, N(0, 40^2), of a few thousand columns come within ~60 of it),
and the fixed CPU rows that hold an inf fit in one block. A large value after the first block
makes exp() overflow: inf / inf is NaN.

Fixed grid only (draws=0), `--device cpu`: ACCEPTED. With drawn cases: rejected, "incorrect", on
a drawn `spike` case, named in the reason. On CUDA the fixed grid's 64 `wide` rows of 151936
columns may hold one already whose max lies past its first block's by more than 88 (on an H100,
seed 1, row 27 of `vocab/bfloat16/wide` did).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_xm
    first = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(first.to(tl.float32), axis=0)
    total = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c * stride_xn, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        total += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c * stride_xn, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m) / total
        tl.store(y_ptr + row * stride_ym + c, y.to(y_ptr.dtype.element_ty), mask=c < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0), BLOCK=2048
        )
    return y.view(x.shape)
