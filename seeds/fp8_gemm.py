"""Naive block-scaled FP8 GEMM: out[M, N] = (a * a_scale) @ (b * b_scale).T, e4m3 a and b, bf16 out.

One program per [BLOCK_M, BLOCK_N] tile of out, a loop over K in steps of 128, the width of a
scale block: each step's fp8 dot (fp32 result) is multiplied by its rows' a scales and its
columns' b scales and added into an fp32 accumulator, rounded to bf16 once at the store. The b
scales are read per column (row n // 128 of b_scale), so any BLOCK_N is right. Traffic: every
tile row reads its a rows once per N tile and every tile column its b rows once per M tile (L2
absorbs most).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

GROUP = 128  # entries per scale block along K (and along N for b)
# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<M>x<N>x<K>" rounded up to powers of two; shapes between buckets take the nearest one. The K
# step is not tunable: it is the scale block.
TUNE_SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [32, 64, 128, 256],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _fp8_gemm_kernel(
    out_ptr,  # *bf16, [M, N], contiguous
    a_ptr,  # *fp8e4nv, [M, K], rows any stride
    a_s_ptr,  # *fp32, [M, K / GROUP], rows contiguous
    b_ptr,  # *fp8e4nv, [N, K]
    b_s_ptr,  # *fp32, [cdiv(N, GROUP), K / GROUP], rows contiguous
    M,  # tokens
    N,  # output features
    K,  # input features, a multiple of GROUP
    stride_am,  # elements between rows of a
    stride_ak,  # elements between columns of a
    stride_asm,  # elements between rows of a_scale
    stride_bn,  # elements between rows of b
    stride_bk,  # elements between columns of b
    stride_bsn,  # elements between rows of b_scale
    stride_om,  # elements between rows of out
    BLOCK_M: tl.constexpr,  # tokens per tile, >= 16 (tl.dot's minimum)
    BLOCK_N: tl.constexpr,  # output features per tile, >= 16
    GROUP: tl.constexpr,  # the K step: one scale block
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, GROUP)
    m_ok = rm < M
    n_ok = rn < N
    # 64-bit row offsets: M * K passes 2^31 from 299594 tokens of 7168 (a long prefill).
    a_rows = a_ptr + rm.to(tl.int64)[:, None] * stride_am
    b_cols = b_ptr + rn.to(tl.int64)[None, :] * stride_bn
    a_s_rows = a_s_ptr + rm * stride_asm
    b_s_cols = b_s_ptr + (rn // GROUP) * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, K // GROUP):
        ks = kb * GROUP + rk
        a = tl.load(a_rows + ks[None, :] * stride_ak, mask=m_ok[:, None], other=0.0)
        # b^T tile, [GROUP, BLOCK_N], read straight from b's [N, K] rows (K-major, as the fp8
        # tensor cores take it).
        b = tl.load(b_cols + ks[:, None] * stride_bk, mask=n_ok[None, :], other=0.0)
        a_s = tl.load(a_s_rows + kb, mask=m_ok, other=0.0)
        b_s = tl.load(b_s_cols + kb, mask=n_ok, other=0.0)
        acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
    out = out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def fp8_gemm(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[0]
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    if out.numel() > 0:
        cfg = _config(m, n, k)
        grid = (triton.cdiv(m, cfg["BLOCK_M"]), triton.cdiv(n, cfg["BLOCK_N"]))
        _fp8_gemm_kernel[grid](
            out, a, a_scale, b, b_scale, m, n, k,
            a.stride(0), a.stride(1), a_scale.stride(0), b.stride(0), b.stride(1),
            b_scale.stride(0), out.stride(0),
            GROUP=GROUP, **cfg,
        )
    return out
