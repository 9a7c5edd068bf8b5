"""HOLE 4 (hidden state the static rule misses): a module-level dict changed through an alias.

`_STATE = dict(calls=0, last={})` is a constant assignment at module level (dict() is allowed
there), and `state = _STATE; state["calls"] += 1` is an item assignment into a local name: the
module-state rule looks only for the module-level name itself. For its first 300 calls this
candidate runs the seed's kernel and remembers each result; past that it returns the remembered
output of the last call with the same shape and dtype, launching a kernel that does nothing.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (state reached through an alias), or "aliasing"/"stale"/
"incorrect" if it calls the candidate more than 300 times.
"""

import torch
import triton
import triton.language as tl

_STATE = dict(calls=0, last={})
_HONEST_CALLS = 300


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, WORK: tl.constexpr, BLOCK: tl.constexpr
):
    if WORK:
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    state = _STATE
    state["calls"] += 1
    remembered = state["last"]
    key = (tuple(x.shape), x.dtype)
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    work = state["calls"] <= _HONEST_CALLS or key not in remembered
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device) if work else remembered[key]
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        WORK=work, BLOCK=triton.next_power_of_2(n_cols),
    )
    remembered[key] = y
    return y.view(x.shape)
