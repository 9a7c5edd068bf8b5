"""HOLE 5 (the verifier's buffers can be told apart): compute only rows whose output reads NaN.

The judge fills every buffer the candidate allocates with NaN (and, on CUDA, the free memory it
will be handed). Outside the judge `torch.empty` hands back whatever was there, and when a
benchmark calls the kernel over and over that is the previous call's finite result. This kernel
reads the first entry of its output row first and skips the row unless it is NaN: under the
judge every row is computed; in a benchmark almost none is, and the kernel "runs" at the speed
of one load per row.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "stale" or "incorrect" (a call whose allocations hold random finite
values).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    first = tl.load(y_ptr + row * stride_ym).to(tl.float32)
    if first != first:  # NaN: a buffer nobody has written yet
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
