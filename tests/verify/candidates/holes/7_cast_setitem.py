"""HOLE 7 (a dtype cast in the launcher passes): fp32 kernel, cast by item assignment.

The kernel computes in fp32 and stores fp32 into an fp32 buffer; the launcher then casts into
the output with `y[:] = tmp`. The guard flags a dtype change only in `_to_copy` (what `.to()`
dispatches to); item assignment dispatches to `copy_`, which it lets through as a layout copy,
and the static rules see an item assignment into a local. The rounding is the same as a cast
in the kernel, so the values pass: the cheat is the arithmetic (and the extra pass over memory)
outside the candidate's kernels.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "provenance" (a copy_ that changes dtype is a cast).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_ym + cols, num / tl.sum(num, axis=0), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    tmp = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
    _softmax_kernel[(n_rows,)](
        tmp, x2, n_cols, x2.stride(0), x2.stride(1), tmp.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    if x.dtype == torch.float32:
        return tmp.view(x.shape)
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    y[:] = tmp
    return y.view(x.shape)
