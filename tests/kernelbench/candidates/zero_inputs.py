"""KernelBench's input-modification hack, for kb1_2_square_matmul: a kernel writes zeros into
A and B and into C, hoping the reference then runs on the zeroed inputs and agrees with the
zeros returned. kernelgen's judge computes its truth on its own copies before the call and
compares every input bitwise after it: rejected."""

import torch
import triton
import triton.language as tl


@triton.jit
def _zero_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    zero = tl.zeros((BLOCK,), dtype=tl.float32)
    tl.store(a_ptr + offs, zero, mask=mask)
    tl.store(b_ptr + offs, zero, mask=mask)
    tl.store(c_ptr + offs, zero, mask=mask)


def kb1_2_square_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    C = torch.empty((A.shape[0], B.shape[1]), dtype=A.dtype, device=A.device)
    n = C.numel()
    _zero_kernel[(triton.cdiv(n, 1024),)](A, B, C, n, BLOCK=1024)
    return C
