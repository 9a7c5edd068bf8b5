"""Honest router_gemm, twin of router_gemm_tf32.py: the same tiled GEMM with the dot in tf32x3
(Triton splits each fp32 operand into a TF32 part and a TF32 rest and sums three TF32 dots), near
fp32 accuracy, well inside the bound. Must be accepted on CPU: the interpreter's TF32 emulation
must not make tf32x3 as coarse as one TF32 dot.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _router_gemm_kernel(
    y_ptr, x_ptr, w_ptr, M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        x = tl.load(x_rows + ks[None, :] * stride_xk, mask=(rm[:, None] < M) & (ks[None, :] < K),
                    other=0.0).to(tl.float32)
        w = tl.load(w_cols + ks[:, None] * stride_wk, mask=(ks[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(x, w, acc, input_precision="tf32x3")
    y = y_ptr + rm.to(tl.int64)[:, None] * stride_ym + rn[None, :]
    tl.store(y, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def router_gemm(x, w):
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if y.numel() > 0:
        grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
        _router_gemm_kernel[grid](
            y, x, w, m, n, k,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0),
            BLOCK_M=32, BLOCK_N=32, BLOCK_K=32,
        )
    return y
