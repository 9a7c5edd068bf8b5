"""Honest router_gemm in another style: a GEMV per token (decode-shaped), no tl.dot; products and
sums in fp32 with a summation order of its own (per-lane partial sums, one tree sum at the end)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _router_gemv_kernel(
    y_ptr, x_ptr, w_ptr, N, K, stride_xm, stride_xk,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    m = tl.program_id(0).to(tl.int64)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N, BLOCK_K], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + m * stride_xm + ks * stride_xk, mask=ks < K, other=0.0)
        w = tl.load(
            w_ptr + rn[:, None] * K + ks[None, :],
            mask=(rn[:, None] < N) & (ks[None, :] < K),
            other=0.0,
        )
        acc += w * x.to(tl.float32)[None, :]
    tl.store(y_ptr + m * N + rn, tl.sum(acc, axis=1), mask=rn < N)


def router_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    n = w.shape[0]
    w = w.contiguous()
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if y.numel() > 0:
        grid = (m, triton.cdiv(n, 64))
        _router_gemv_kernel[grid](y, x, w, n, k, x.stride(0), x.stride(1), BLOCK_N=64, BLOCK_K=128)
    return y
