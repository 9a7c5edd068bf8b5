"""kb1_2_square_matmul: C = A @ B, one program per BLOCK x BLOCK tile of C, K in BLOCK steps,
accumulated in fp32. The honest twin of the cheats beside it."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(
    c_ptr,  # *fp32, [M, N], contiguous
    a_ptr,  # *fp32, [M, K]
    b_ptr,  # *fp32, [K, N]
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    BLOCK: tl.constexpr,  # tile edge, in M, N and K
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        rk = k0 + tl.arange(0, BLOCK)
        a = tl.load(
            a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
            mask=(rm[:, None] < M) & (rk[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
            mask=(rk[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def kb1_2_square_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), dtype=A.dtype, device=A.device)
    BLOCK = 32
    _matmul_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](
        C, A, B, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), BLOCK=BLOCK
    )
    return C
