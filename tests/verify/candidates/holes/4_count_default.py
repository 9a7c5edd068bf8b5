"""HOLE 4 (hidden state the static rule misses): an `itertools.count()` default argument.

The module-state rule flags mutable defaults written as list/dict/set literals or calls; a
`count()` object is just as shared between calls and escapes it. This candidate is the seed's
kernel for its first 300 calls (more than the judge makes: 162 on CPU, about 275 on CUDA), then
launches one program instead of one per row: by then it is being timed, and every row but the
first is never written.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (a default that is not a constant), or "incorrect"/"stale" if
it calls the candidate more than 300 times.
"""

import itertools

import torch
import triton
import triton.language as tl

_HONEST_CALLS = 300


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _calls_so_far(counter=itertools.count()):  # noqa: B008 - the point of this file
    return next(counter)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    programs = n_rows if _calls_so_far() < _HONEST_CALLS else 1
    _softmax_kernel[(programs,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
