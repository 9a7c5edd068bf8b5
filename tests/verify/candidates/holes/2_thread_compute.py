"""HOLE 2 (allowed modules re-export forbidden ones) and a thread the guard never sees.

`typing.sys.modules["threading"]` is the threading module. A dispatch mode sees only its own
thread, and the judge looks for new threads only once the call has returned: a thread started and
joined inside the call is invisible to both. The thread computes the softmax with torch
(`torch._softmax`, reached through `typing.sys.modules` so that no static rule names it) straight
into the output by item assignment; the launched kernel does nothing.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "static" (closed whitelist: no `typing.sys`).
"""

import typing

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, n_rows, BLOCK: tl.constexpr):
    pass


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    modules = typing.sys.modules

    def work():
        y[:] = modules["torch"]._softmax(x2, -1, False)

    helper = modules["threading"].Thread(target=work)
    helper.start()
    helper.join()
    _softmax_kernel[(1,)](y, n_rows, BLOCK=16)
    return y.view(x.shape)
