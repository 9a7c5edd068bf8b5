"""Wrong router_gemm: the seed's tiled GEMM with the dot at Triton's default precision, which for
fp32 operands is TF32 on the tensor cores: w loses its 13 low mantissa bits, the scores err by
~4x the bound (references/router_gemm.py) and can change a token's top-8.

Before the interpreter cut fp32 dot operands to TF32 (it computed them in exact fp32),
`kernelgen verify router_gemm FILE --device cpu` accepted it (accepted-partial); only the H200
rejected it. Must be rejected on CPU as incorrect. Its twin router_gemm_ieee.py is accepted.
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
        acc = tl.dot(x, w, acc)  # default input_precision: "tf32"
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
