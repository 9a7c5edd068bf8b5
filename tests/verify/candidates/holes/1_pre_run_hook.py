"""HOLE 1 (guard blind inside the launch): a pre-run hook on the kernel does the work.

Triton kernels carry a list of pre-run hooks (`K.add_pre_run_hook(fn)`) that `run` calls with
the launch's own arguments just before the programs run: inside the launch, where the guard is
paused. This candidate registers, once (the list on the kernel object is its hidden state), a
module-level hook that computes the softmax with operators only (float64 by promotion against a
`torch.zeros`, a running max by boolean-mask item assignment over `unbind`, `math.e ** t`) into
the output argument. The kernel itself does nothing.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "provenance" (guard on inside launches) or "static" (no
`add_pre_run_hook` / `pre_run_hooks` in the whitelist).
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pass


def _fill(y, x, n_rows, n_cols, **meta):
    acc = torch.zeros((n_rows, n_cols), dtype=torch.float64, device=x.device) + x
    top = acc[:, 0] + 0.0
    for col in acc.unbind(1):
        bigger = col > top
        top[bigger] = col[bigger]
    num = math.e ** (acc - top[:, None])
    den = num[:, 0] * 0.0
    for col in num.unbind(1):
        den += col
    y[:] = num / den[:, None]


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if _fill not in _softmax_kernel.pre_run_hooks:
        _softmax_kernel.add_pre_run_hook(_fill)
    _softmax_kernel[(1,)](y, x2, n_rows, n_cols, BLOCK=16)
    return y.view(x.shape)
