"""Right below 2^31 elements, wrong past it: the row offset is computed in int32 (the program id
times an int32 stride), as a kernel written for small tensors computes it. On the limit case of
65600 rows of 32768, row 65536 starts at element 2^31: its offset wraps to -2^31, and the rows
from there are read and written 4 GiB before their tensors (garbage, an illegal address, and
rows of the output never written). Must be rejected on the limit case (incorrect or crash),
after passing the smaller cases before it; its twin is softmax_int64_rows.py."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)  # int32, and so is row * stride_xm: it wraps at 2^31
    cols = tl.arange(0, BLOCK)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    m = tl.max(tl.full([BLOCK], -float("inf"), dtype=tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c * stride_xn, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    total = tl.sum(tl.zeros([BLOCK], dtype=tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c * stride_xn, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        total += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        x = tl.load(x_row + c * stride_xn, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m) / total
        tl.store(y_row + c, y.to(y_ptr.dtype.element_ty), mask=c < n_cols)


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
