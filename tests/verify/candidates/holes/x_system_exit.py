"""EXIT CODE: raises SystemExit(5) at call time, from the launcher.

`kernelgen verify` must exit 0, 1 or 2 whatever the candidate does. A SystemExit raised inside
the candidate's call must become a rejection ("crash"), not the exit code of the judge's process
or of the CLI.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: rejected, "crash" (exit 1).
Fixed verifier: rejected, "crash" (exit 1).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


def softmax(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() > 0:
        raise SystemExit(5)
    _zeros_kernel[(1,)](y, y.numel(), BLOCK=16)
    return y
