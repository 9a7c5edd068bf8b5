"""KernelBench's result-reuse hack, for kb1_2_square_matmul: allocate C and never write it, so
that a caching allocator may hand back the memory where the reference's own result was just
freed, and that result is read as this one's. A Triton kernel launches (it stores nothing), so
only the values can tell. kernelgen's judge keeps the reference's result alive during the call
and fills freed memory with NaN: rejected as incorrect."""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch_kernel(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n * 0)


def kb1_2_square_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    C = torch.empty((A.shape[0], B.shape[1]), dtype=A.dtype, device=A.device)
    _touch_kernel[(1,)](C, C.numel(), BLOCK=16)
    return C
