"""Block-scaled FP8 GEMM: out[M, N] = (a * a_scale) @ (b * b_scale).T, e4m3 a and b, bf16 out.

What changed from r01 (L2-grouped tiles, wrapped unmasked loads), and why:
- The accumulator is the dot's own. r01 summed each 128-wide K block's dot into a fresh tile and
  added it, scaled, to the accumulator: two fp32 tiles in registers, which ruled out 128x256
  tiles. Here the accumulator is kept in units of the current block's scale u_k (the product of
  the a and b scales of each entry): before block k it is multiplied by u_{k-1} / u_k and the
  block's dot accumulates into it (`tl.dot(a, b, acc)`, the tensor cores' own accumulation);
  after the last block it is multiplied by u_last. The true sum is u_last * acc, up to fp32
  rounding of the ratios (one rounding per block, 2^-24 each).
- So prefill takes 128x256 tiles with 8 warps: twice the flops per byte loaded of 128x128.
- BLOCK_N may span two 128-row groups of b: b's scale is then a vector over the tile's columns
  (the scales of 256 columns are two values, read once per K block).
- Scales are positive in the contract (amax / 448 of a block with a nonzero entry); a zero
  scale would make the ratio infinite, as it makes the reference's quantized values NaN.
"""

import functools
import math

import torch
import triton
import triton.language as tl

GROUP = 128  # entries per scale block along K (and along N for b)
TUNE_SPACE = {
    "BLOCK_M": [16, 64, 128],
    "BLOCK_N": [64, 128, 256],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [3, 4],
}
DEFAULT_CONFIG = {"BLOCK_M": 64, "BLOCK_N": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4}
# Keyed "<M>x<N>x<K>" rounded up to powers of two; a shape takes the nearest bucket.
TUNED: dict[str, dict[str, int]] = {
    "16x8192x2048": {"BLOCK_M": 16, "BLOCK_N": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    "1x4096x8192": {"BLOCK_M": 16, "BLOCK_N": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    "128x8192x2048": {"BLOCK_M": 64, "BLOCK_N": 64, "GROUP_M": 8, "num_warps": 4, "num_stages": 4},
    "4096x8192x2048": {
        "BLOCK_M": 128, "BLOCK_N": 256, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
    },
    "4096x4096x8192": {
        "BLOCK_M": 128, "BLOCK_N": 256, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
    },
}


@triton.jit
def _fp8_gemm_kernel(
    out_ptr,  # *bf16, [M, N], contiguous
    a_ptr,  # *fp8e4nv, [M, K], rows any stride
    a_s_ptr,  # *fp32, [M, K / GROUP]
    b_ptr,  # *fp8e4nv, [N, K]
    b_s_ptr,  # *fp32, [cdiv(N, GROUP), K / GROUP]
    M,
    N,
    K,  # a multiple of GROUP
    stride_am,
    stride_ak,
    stride_asm,
    stride_bn,
    stride_bk,
    stride_bsn,
    stride_om,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    GROUP_M: tl.constexpr,  # tile rows per L2 group
    GROUP: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    first_m = (pid // width) * GROUP_M
    rows_here = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % rows_here
    pid_n = (pid % width) // rows_here

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Wrapped indices for the loads: rows past M (columns past N) read valid memory, and their
    # results are masked at the store.
    lm = (rm % M).to(tl.int64)
    ln = (rn % N).to(tl.int64)
    rk = tl.arange(0, GROUP)
    a_tile = a_ptr + lm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + ln[None, :] * stride_bn + rk[:, None] * stride_bk
    a_s_rows = a_s_ptr + lm * stride_asm
    b_s_cols = b_s_ptr + (ln // GROUP) * stride_bsn

    # u_k = a_scale[row, k] * b_scale[col // 128, k]; acc holds sum_j u_j D_j / u_k.
    sa_prev = tl.load(a_s_rows)
    sb_prev = tl.load(b_s_cols)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, K // GROUP):
        sa = tl.load(a_s_rows + kb)
        sb = tl.load(b_s_cols + kb)
        a = tl.load(a_tile)
        b = tl.load(b_tile)
        acc = acc * ((sa_prev / sa)[:, None] * (sb_prev / sb)[None, :])
        acc = tl.dot(a, b, acc)
        sa_prev, sb_prev = sa, sb
        a_tile += GROUP * stride_ak
        b_tile += GROUP * stride_bk
    acc = acc * (sa_prev[:, None] * sb_prev[None, :])

    out = out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=(rm < M)[:, None] & (rn < N)[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def fp8_gemm(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[0]
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    if out.numel() > 0:
        cfg = _config(m, n, k)
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        _fp8_gemm_kernel[grid](
            out, a, a_scale, b, b_scale, m, n, k,
            a.stride(0), a.stride(1), a_scale.stride(0), b.stride(0), b.stride(1),
            b_scale.stride(0), out.stride(0),
            GROUP=GROUP, **cfg,
        )  # fmt: skip
    return out
