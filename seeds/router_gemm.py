"""Naive router GEMM: scores[M, N] = x[M, K] @ w[N, K].T, x in 16 bits, w and scores in fp32.

One program per [BLOCK_M, BLOCK_N] tile of the scores, a loop over K in BLOCK_K steps. x is
converted to fp32 as it is loaded and the dot runs in IEEE fp32 (no TF32, no bf16 copy of w):
the router's top-k is decided by small differences in the scores. Traffic: every tile row
reads its x rows once per N tile and every tile column reads w once per M tile (L2 absorbs most).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<M>x<N>x<K>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [32, 64, 128],
    "BLOCK_K": [32, 64, 128],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _router_gemm_kernel(
    y_ptr,  # *fp32, [M, N], contiguous
    x_ptr,  # *T (bf16/fp16), [M, K], any strides
    w_ptr,  # *fp32, [N, K], any strides
    M,  # tokens
    N,  # experts
    K,  # hidden size
    stride_xm,  # elements between rows of x
    stride_xk,  # elements between columns of x
    stride_wn,  # elements between rows of w
    stride_wk,  # elements between columns of w
    stride_ym,  # elements between rows of y
    BLOCK_M: tl.constexpr,  # tokens per tile, >= 16 (tl.dot's minimum)
    BLOCK_N: tl.constexpr,  # experts per tile, >= 16
    BLOCK_K: tl.constexpr,  # reduction step, >= 16
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # 64-bit offsets: M * K at prefill sizes passes 2^31 elements in x's padded layouts.
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        x = tl.load(
            x_rows + ks[None, :] * stride_xk,
            mask=(rm[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        ).to(tl.float32)
        # w^T tile, [BLOCK_K, BLOCK_N], read straight from w's [N, K] rows.
        w = tl.load(
            w_cols + ks[:, None] * stride_wk,
            mask=(ks[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        acc = tl.dot(x, w, acc, input_precision="ieee")
    y = y_ptr + rm.to(tl.int64)[:, None] * stride_ym + rn[None, :]
    tl.store(y, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def router_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if y.numel() > 0:
        cfg = _config(m, n, k)
        grid = (triton.cdiv(m, cfg["BLOCK_M"]), triton.cdiv(n, cfg["BLOCK_N"]))
        _router_gemm_kernel[grid](
            y, x, w, m, n, k,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0),
            **cfg,
        )
    return y
