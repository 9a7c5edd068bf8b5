"""HOLE 3 (only the first call is checked for mutation and aliasing): in place from call two on.

The judge calls each case three times (A, B, a fresh copy of A) and checks inputs untouched and
outputs not aliasing an input on the first call only. This candidate counts its calls (an
`itertools.count()` handed out by an `lru_cache`d helper: no global, no mutable default, no
module-level name changed) and on every call but the first of each three computes the softmax in
place, into its input, and returns the input itself: right values, one allocation saved, and the
caller's tensor destroyed.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "aliasing" or "mutation" (every call fully checked); "static" if the
hidden counter is caught first.
"""

import functools
import itertools

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn, BLOCK: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols * stride_yn, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=1)
def _calls():
    return itertools.count()


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    in_place = next(_calls()) % 3 != 0 and x2.data_ptr() == x.data_ptr()
    y = x2 if in_place else torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0), y.stride(1),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return x if in_place else y.view(x.shape)
