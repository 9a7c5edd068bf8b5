"""HOLE 4 (hidden state the static rule misses): `functools.lru_cache` on the entry function.

`lru_cache` is allowed (the seeds cache their config lookup with it), and a tensor hashes by
identity: decorating the operator itself makes a second call with the same tensor object return
the first call's output, whatever has happened to the input since. The judge never passes the same
object twice, so it sees a correct kernel; a benchmark that times repeated calls on the same inputs
sees a kernel that takes no time, and a caller that updates its tensor in place gets stale results.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (no cache decorator on functions that take or return tensors),
or "aliasing"/"stale" (a repeated call on the same, changed input).
"""

import functools

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
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=None)  # noqa: UP033 - as the seeds spell it
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
