"""HOLE 3 (only the first call is checked for mutation): the input used as scratch on the replay.

The judge's replay of case A runs on a fresh copy made by `copy_`, which bumps the copy's version
counter: `x._version` is 0 on the judge's first two calls for every dense layout (its strided
inputs are written into a padded buffer, so theirs is 1 on every call), 1 on the replay. This
candidate uses its input as the workspace for exp(x - max) whenever the version says "a copy"
and the input is dense, and normalizes into a fresh output: right values, no aliasing,
the input overwritten. Nothing counts calls; it keys on a property of the input that differs
between the calls the judge checks and the one it does not.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "mutation" (inputs checked after every call); "static" if private
tensor attributes (`_version`) are outside the whitelist.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    SCRATCH: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    ptrs = x_ptr + row * stride_xm + cols * stride_xn
    x = tl.load(ptrs, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    den = tl.sum(num, axis=0)
    if SCRATCH:
        # The numerators parked in the input, as a multi-pass kernel would use a workspace.
        tl.store(ptrs, num.to(x_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + row * stride_ym + cols, (num / den).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    dense = x2.is_contiguous() or x2.t().is_contiguous()
    scratch = x._version > 0 and dense and x2.data_ptr() == x.data_ptr()
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        SCRATCH=scratch, BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
