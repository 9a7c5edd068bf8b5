"""EXIT CODE: `os._exit(5)` at call time, through `triton.tools.disasm.os`.

`triton.tools.disasm` imports `os` (and `subprocess`); the static rules resolve the path to
triton, not to os. The process ends at once, with no verdict written: the judge must report a
"crash" and the CLI exit 1, not 5.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: rejected, "crash" (exit 1).
Fixed verifier: rejected, "static" (closed whitelist), else "crash"; exit 1 either way.
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
    triton.tools.disasm.os._exit(5)
    _zeros_kernel[(1,)](y, y.numel(), BLOCK=16)
    return y
