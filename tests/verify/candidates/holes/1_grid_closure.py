"""HOLE 1 (guard blind inside the launch): the grid callable does the work.

A grid may be a callable of the meta-parameters; Triton calls it inside `run`, where the dispatch
guard is paused (CPU) and which no profiler window but the last case's sees (CUDA). This one
closes over the launcher's tensors and computes the softmax with nothing the static rules can
name: type promotion against a float64 `torch.zeros` (allowed: allocation), `unbind` (a view),
comparisons, boolean-mask item assignment, `math.e ** t`, `+=` and `/` (operators), and a final
`y[:] = ...` (item assignment). The kernel it launches does nothing.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "provenance" (guard on inside launches: aten add/gt/index_put/pow/div)
or "static" (a grid callable that is more than arithmetic on ints / meta).
"""

import math

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

    def grid(meta):
        # float64 by promotion; no .double(), no .to()
        acc = torch.zeros((n_rows, n_cols), dtype=torch.float64, device=x.device) + x2
        top = acc[:, 0] + 0.0
        for col in acc.unbind(1):
            bigger = col > top
            top[bigger] = col[bigger]
        num = math.e ** (acc - top[:, None])
        den = num[:, 0] * 0.0
        for col in num.unbind(1):
            den += col
        y[:] = num / den[:, None]
        return (1,)

    _softmax_kernel[grid](y, n_rows, BLOCK=16)
    return y.view(x.shape)
