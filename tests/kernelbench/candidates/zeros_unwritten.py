"""An output zeroed and never written, for kb1_2_square_matmul: C is allocated as zeros and the
kernel launched stores nothing into it. Zeros are not NaN, so only the comparison with the
reference catches it: rejected as incorrect."""

import torch
import triton
import triton.language as tl


@triton.jit
def _noop_kernel(c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(c_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n * 0)


def kb1_2_square_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    C = torch.zeros((A.shape[0], B.shape[1]), dtype=A.dtype, device=A.device)
    _noop_kernel[(1,)](C, C.numel(), BLOCK=16)
    return C
