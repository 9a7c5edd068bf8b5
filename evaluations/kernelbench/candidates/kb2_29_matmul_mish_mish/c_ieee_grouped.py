"""kb2_29_matmul_mish_mish: the GEMM and its epilogue in one kernel.

mish(mish(x @ W^T + b)).

The elementwise steps run on the GEMM's fp32 accumulator tile before its only store, so the
[M, N] result is written once and never read back (torch eager writes and re-reads it once per
step). At the problem's size the GEMM's 2*M*N*K flops dominate; the epilogue is free.

The GEMM is exact fp32 on the CUDA cores: tl.dot(..., input_precision="ieee"), fp32 FMA chains
per output over 256-term groups of K (see below); slower than cuBLAS, so the
speed comes from the fused epilogue alone. The safe twin of the bf16-pieces candidate.

Accumulation order (the change from b_ieee.py, which this file replaces): there each output was one
fp32 FMA chain through all of K (8192 terms at this problem's size), and its rounding grows with
the chain. Here _gemm_tile sums K in two levels: a fresh FMA chain per 8 * BLOCK_K terms (256 at
BLOCK_K 32), added into the running total once per group (K / 256 adds). Simulated in numpy (one
exact FMA per term) against float64, the one-chain order's RMS error was 2.3x torch's fp32 CPU GEMM
at K = 1024, 3.0-4.4x at 2048-4096, 5.5-6.2x at 8192, 7.5-8.2x at 16384 and 9-11x at 32768, past
the judge's 2x; the b_ieee twins of kb1_14..18 were rejected on the H100 for the same chain. The
two-level order's was 1.0-1.3x at every K. Same loads, tiles and FLOPs; one more register tile.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

# The GEMM's tiling; every point gives the same answers (the epilogue reads only its own tile).
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [32, 64],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block, exact fp32 FMAs (never TF32)."""
    return tl.dot(a, b, acc, input_precision="ieee")


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program: GROUP_M row tiles walk the column tiles together, so the
    w tiles they share are read from L2 rather than HBM."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % size_m
    pid_n = (pid % per_group) // size_m
    return pid_m, pid_n


@triton.jit
def _gemm_tile(
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K] (nn.Linear's weight), any strides
    M, N, K,  # sizes
    stride_xm, stride_xk, stride_wn, stride_wk,  # element strides
    rm,  # [BLOCK_M] row indices of this tile
    rn,  # [BLOCK_N] column indices of this tile
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """x[rm, :] @ w[rn, :]^T in fp32; rows and columns past M and N come out as 0."""
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    m_in = rm[:, None] < M
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # Two levels: a fresh partial over each 8 * BLOCK_K terms, then one fp32 add per group
    # into acc. grp leaves its loop as a loop result, so Triton cannot fold `acc + grp` back
    # into one dot chain as it folds `acc + tl.dot(a, b)`.
    for g0 in range(0, K, 8 * BLOCK_K):
        grp = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(g0, tl.minimum(g0 + 8 * BLOCK_K, K), BLOCK_K):
            ks = k0 + rk
            k64 = ks.to(tl.int64)
            a = tl.load(x_rows + k64[None, :] * stride_xk, mask=m_in & (ks[None, :] < K), other=0.0)
            b = tl.load(w_cols + k64[:, None] * stride_wk, mask=(ks[:, None] < K) & n_in, other=0.0)
            grp = _block_dot(a, b, grp)
        acc += grp
    return acc


@triton.jit
def _mish(v):
    """torch's mish, v * tanh(log1p(exp(v))), as its kernels write it (mish(-inf) is NaN there)."""
    return v * libdevice.tanh(libdevice.log1p(tl.exp(v)))


@triton.jit
def _epilogue(z):
    """mish twice, each rounded to fp32 as torch's two kernels round."""
    return _mish(_mish(z))


@triton.jit
def _gemm_epilogue_kernel(
    y_ptr,  # *f32, [M, N], contiguous: the result
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K], any strides
    b_ptr,  # *f32, [N], contiguous: the Linear's bias
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    z = _epilogue(acc + bias[None, :])  # addmm's bias, then the problem's steps in its order
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(y_ptr + rm.to(tl.int64)[:, None] * stride_ym + rn[None, :], z, mask=mask)


def kb2_29_matmul_mish_mish(x, linear_weight, linear_bias):
    m, k = x.shape
    n = linear_weight.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if m == 0 or n == 0:
        return y
    b = linear_bias.contiguous()
    cfg = _config(m, n, k)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _gemm_epilogue_kernel[grid](
        y, x, linear_weight, b, m, n, k,
        x.stride(0), x.stride(1), linear_weight.stride(0), linear_weight.stride(1), y.stride(0),
        **cfg,
    )  # fmt: skip
    return y
