"""KernelBench's non-default-stream hack, for kb1_2_square_matmul: the kernel runs on a stream of
its own, so a timer that waits on the default stream alone stops before the work is done and
reports a speedup that is not there. kernelgen's static rules refuse streams in a candidate
(an escape hatch), on every device, before it runs."""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(
    c_ptr,
    a_ptr,
    b_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    BLOCK: tl.constexpr,
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
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        _matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
            C, A, B, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), BLOCK=32
        )
    return C
