"""kb2_97_matmul_batchnorm_biasadd_divide_swish: y = x @ W^T + b; z = BatchNorm1d(y) in training
mode (each column's batch mean and biased variance, eps 1e-5, then * bn_weight + bn_bias); z =
(z + bias) / 1.0; out = z * sigmoid(z).

The Linear's bias b is a per-column constant, which training-mode BatchNorm removes exactly (y -
mean(y) = x @ W^T - mean(x @ W^T), var(y) = var(x @ W^T)): it is never read, and the statistics and
the normalisation work on x @ W^T itself, which also spares them the cancellation of y - mean(y) in
fp32 where b dominates y (torch's own error there).

Three kernels, since a column's statistics need every row of the batch first: the GEMM writes x @
W^T and its tiles' column statistics (sum, and squares about the tile's own mean: two-pass within
the tile); a small kernel merges them per column by Chan's rule (mean, M2) into mean and 1 /
sqrt(var + eps); an elementwise kernel normalises y and applies the epilogue. A NaN or inf in a
column makes its statistics NaN and the whole column NaN, as torch's.

GEMM on the tensor cores in bf16 pieces: each fp32 tile of x and of w is split in registers into
three bf16 pieces (hi + mid + lo holds all 24 significant bits, each product of two pieces is
exact in fp32), and the six products at or above 2^-24 of hi * hi are chained into one fresh
accumulator per K block, which is added into the fp32 running total on the CUDA cores (one
tensor-core accumulator through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM on the
H200). Six bf16 MMAs at the H200's ~990 TFLOP/s (dense bf16) leave about twice the ~67 TFLOP/s of
fp32 FMAs that torch eager's cuBLAS fp32 GEMM (no TF32) runs on, if the splits keep up. An inf or
NaN of x stays in its hi piece alone, so inf * w keeps w's sign as in torch. The CPU check
emulates the bf16 products exactly but not the tensor cores' summation within a block: b_ieee.py
is the same kernel with exact fp32 FMAs, the fallback where this is not accepted on the GPU.

Traffic at the problem's size (M=1024, N=K=8192): x and w read (w once from HBM), y written and
read once (32 MB each way), the statistics (8 x 8192 pairs), out written (32 MB); torch eager runs
the GEMM, BatchNorm's two passes and four elementwise kernels over [1024, 8192]. The GEMM's 137
GFLOP decide the time.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# Tiles are free: every point gives the same answer (masks cover the edges), only speed differs.
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [32, 64],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
}
DEFAULT_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}
TUNED: dict[str, dict[str, int]] = {}
BN_EPS = 1e-5  # the module's bn_eps
DIVIDE_VALUE = 1.0  # the module's divide_value
STATS_BLOCK = 256  # columns per program of the statistics' merge
EW_BLOCK_M, EW_BLOCK_N = 16, 256  # the elementwise pass's tile


@triton.jit
def _split(v):
    """fp32 -> bf16 pieces (hi, hi_finite, mid, lo): hi + mid + lo == v for finite v. An inf or
    NaN lives in hi alone (its residuals are zero), and hi_finite, hi with inf/NaN zeroed, is
    what meets the other operand's residuals, so inf * w keeps w's sign (never inf - inf)."""
    hi = v.to(tl.bfloat16)
    hf = hi.to(tl.float32)
    finite = tl.abs(hf) < float("inf")
    r = tl.where(finite, v - hf, 0.0)
    mid = r.to(tl.bfloat16)
    lo = (r - mid.to(tl.float32)).to(tl.bfloat16)
    return hi, tl.where(finite, hf, 0.0).to(tl.bfloat16), mid, lo


@triton.jit
def _gemm_tile(
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K] (nn.Linear's weight), any strides
    M, N, K,  # the GEMM's sizes
    stride_xm, stride_xk, stride_wn, stride_wk,  # elements between rows / columns
    rm, rn,  # this tile's rows of x and rows of w
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """acc[i, j] = sum_k x[rm[i], k] * w[rn[j], k] in fp32; rows and columns out of range are 0.
    Each K block's six piece products (all those at or above 2^-24 of hi * hi) go into a fresh
    tensor-core accumulator, added into the fp32 total on the CUDA cores."""
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    m_ok = rm[:, None] < M
    n_ok = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        xt = tl.load(
            x_rows + ks[None, :].to(tl.int64) * stride_xk,
            mask=m_ok & (ks[None, :] < K),
            other=0.0,
        )
        wt = tl.load(  # w^T tile, [BLOCK_K, BLOCK_N], from w's [N, K] rows
            w_cols + ks[:, None].to(tl.int64) * stride_wk,
            mask=(ks[:, None] < K) & n_ok,
            other=0.0,
        )
        x1, x1f, x2, x3 = _split(xt)
        w1, w1f, w2, w3 = _split(wt)
        part = tl.dot(x1, w1)  # this block's sum, leading product first
        part = tl.dot(x1f, w2, part)
        part = tl.dot(x2, w1f, part)
        part = tl.dot(x1f, w3, part)
        part = tl.dot(x2, w2, part)
        part = tl.dot(x3, w1f, part)
        acc += part  # the running total, rounded as an fp32 sum
    return acc


@triton.jit
def _gemm_colstats_kernel(
    y_ptr,  # *fp32, [M, N], contiguous: x @ W^T (the Linear's bias cancels in the norm)
    psum_ptr,  # *fp32, [MT, N], contiguous: per (M tile, column) sum of x @ W^T
    pm2_ptr,  # *fp32, [MT, N], contiguous: per (M tile, column) sum of squares about its mean
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K], any strides
    M, N, K,  # the GEMM's sizes
    stride_xm, stride_xk, stride_wn, stride_wk,  # elements between rows / columns
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid // num_m) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    n_ok = rn < N
    m_ok = rm < M
    v = acc
    y = y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :]
    tl.store(y, v, mask=m_ok[:, None] & n_ok[None, :])
    # The tile's column statistics, two-pass in registers: its mean, then squares about it.
    cnt = tl.minimum(M - pid_m * BLOCK_M, BLOCK_M).to(tl.float32)
    vm = tl.where(m_ok[:, None], v, 0.0)
    s = tl.sum(vm, axis=0)
    d = tl.where(m_ok[:, None], v - (s / cnt)[None, :], 0.0)
    at = pid_m.to(tl.int64) * N + rn
    tl.store(psum_ptr + at, s, mask=n_ok)
    tl.store(pm2_ptr + at, tl.sum(d * d, axis=0), mask=n_ok)


@triton.jit
def _bn_stats_kernel(
    mean_ptr,  # *fp32, [N]: each column's batch mean
    rstd_ptr,  # *fp32, [N]: 1 / sqrt(its biased batch variance + eps)
    psum_ptr,  # *fp32, [MT, N], contiguous
    pm2_ptr,  # *fp32, [MT, N], contiguous
    M,
    N,
    MT,  # rows, columns, M tiles
    eps,  # BatchNorm's eps
    TILE_M: tl.constexpr,  # rows per M tile of the GEMM
    BLOCK: tl.constexpr,
):
    """Chan's merge of the M tiles' (count, mean, M2), tile by tile: as exact as Welford's."""
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < N
    n_a = tl.zeros((BLOCK,), dtype=tl.float32)
    mean = tl.zeros((BLOCK,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for t in range(0, MT):
        n_b = tl.minimum(M - t * TILE_M, TILE_M).to(tl.float32)
        s_b = tl.load(psum_ptr + t * N + cols, mask=ok, other=0.0)
        m2_b = tl.load(pm2_ptr + t * N + cols, mask=ok, other=0.0)
        n = n_a + n_b
        delta = s_b / n_b - mean
        mean = mean + delta * (n_b / n)
        m2 = m2 + m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    tl.store(mean_ptr + cols, mean, mask=ok)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt_rn(m2 / n_a + eps), mask=ok)


@triton.jit
def _bn_bias_swish_kernel(
    out_ptr,  # *fp32, [M, N], contiguous: the output
    y_ptr,  # *fp32, [M, N], contiguous
    mean_ptr, rstd_ptr,  # *fp32, [N]: the batch statistics
    g_ptr, beta_ptr,  # *fp32, [N]: BatchNorm's weight and bias
    c_ptr,  # *fp32, [1]: the added bias parameter
    M, N,  # sizes
    divide_value,  # the module's divide_value
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    num_m = tl.cdiv(M, BLOCK_M)
    pid = tl.program_id(0)
    rm = (pid % num_m) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid // num_m) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < N
    mask = (rm[:, None] < M) & n_ok[None, :]
    at = rm.to(tl.int64)[:, None] * N + rn[None, :]
    y = tl.load(y_ptr + at, mask=mask, other=0.0)
    mean = tl.load(mean_ptr + rn, mask=n_ok, other=0.0)
    rstd = tl.load(rstd_ptr + rn, mask=n_ok, other=0.0)
    g = tl.load(g_ptr + rn, mask=n_ok, other=0.0)
    beta = tl.load(beta_ptr + rn, mask=n_ok, other=0.0)
    z = (y - mean[None, :]) * rstd[None, :] * g[None, :] + beta[None, :]
    z = (z + tl.load(c_ptr)) / divide_value
    tl.store(out_ptr + at, z * (1.0 / (1.0 + tl.exp(-z))), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb2_97_matmul_batchnorm_biasadd_divide_swish(
    x, bias, matmul_weight, matmul_bias, bn_weight, bn_bias
) -> torch.Tensor:
    m, k = x.shape
    n = matmul_weight.shape[0]
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    cfg = dict(_config(m, n, k))
    # A tile no taller than the batch (tl.dot's least is 16): small batches waste no rows.
    block_m = min(cfg.pop("BLOCK_M"), max(16, triton.next_power_of_2(m)))
    mt = triton.cdiv(m, block_m)
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    psum = torch.empty((mt, n), dtype=torch.float32, device=x.device)
    pm2 = torch.empty((mt, n), dtype=torch.float32, device=x.device)
    _gemm_colstats_kernel[(mt * triton.cdiv(n, cfg["BLOCK_N"]),)](
        y, psum, pm2, x, matmul_weight, m, n, k,
        x.stride(0), x.stride(1), matmul_weight.stride(0), matmul_weight.stride(1),
        BLOCK_M=block_m, **cfg,
    )  # fmt: skip
    mean = torch.empty((n,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((n,), dtype=torch.float32, device=x.device)
    _bn_stats_kernel[(triton.cdiv(n, STATS_BLOCK),)](
        mean, rstd, psum, pm2, m, n, mt, BN_EPS, TILE_M=block_m, BLOCK=STATS_BLOCK, num_warps=4
    )
    grid = (triton.cdiv(m, EW_BLOCK_M) * triton.cdiv(n, EW_BLOCK_N),)
    _bn_bias_swish_kernel[grid](
        out, y, mean, rstd, bn_weight.contiguous(), bn_bias.contiguous(), bias, m, n,
        DIVIDE_VALUE, BLOCK_M=EW_BLOCK_M, BLOCK_N=EW_BLOCK_N, num_warps=4,
    )  # fmt: skip
    return out
