"""kb2_41_gemm_batchnorm_gelu_relu: GEMM with batch statistics in its epilogue.

z = x @ W^T + b; y = relu(gelu(BatchNorm1d(z))), the GELU exact (erf), as torch writes it:
v * 0.5 * (1 + erf(v / sqrt 2)); relu keeps a NaN, as torch's.

BatchNorm1d in training mode normalises each column over the batch with the batch's mean and
biased variance. Three kernels: the GEMM writes z once (fp64, its bias and scale added without
rounding) and, per row tile, each column's mean and centred sum of squares (from registers, no
extra read); a small kernel combines the tiles exactly (Chan's parallel formula, fp64); one
pass reads z and writes the result, rounded to fp32 once. torch eager reads and writes [M, N]
about four times after its GEMM; z in fp64 costs one more [M, N] of traffic, small against the
GEMM.

The GEMM runs on the bf16 tensor cores exactly enough for fp32: each fp32 tile of x and of w is
split in registers into three bf16 pieces (v = v1 + v2 + v3, every split exact in fp32, and an
inf or NaN kept whole in v1 and kept out of the products with w's lower pieces), and the six
products whose bits reach fp32's precision (a3b1, a2b2,
a1b3, a2b1, a1b2, a1b1, smallest first) are chained into one fresh accumulator per K block, which
is then added into the fp32 running total on the CUDA cores: the tensor cores never carry a sum
through all of K (on the H200 one accumulator through all of K was 10-100x less accurate than
cuBLAS's fp32 GEMM). Six bf16 MMAs cost about a sixth of the H200's dense bf16 rate, still above
its fp32 FMA rate that cuBLAS's fp32 GEMM (no TF32) runs at.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

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
def _pieces(v):
    """fp32 v as three bf16 pieces, leading bits first, and the lead with an inf or NaN zeroed."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    finite = r == r  # inf - inf is NaN: the special is carried by p1 alone
    r = tl.where(finite, r, 0.0)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    return p1, p2, p3, tl.where(finite, p1, 0.0).to(tl.bfloat16)


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block: six bf16 products in a fresh accumulator, smallest first.
    An inf in a meets b only through b's lead (as torch's inf * w), never through b's lower
    pieces, which are 0 where w fits in bf16 (inf * 0 would be a NaN torch does not make)."""
    a1, a2, a3, a1f = _pieces(a)
    b1, b2, b3, _ = _pieces(b)
    part = tl.dot(a3, b1)
    part = tl.dot(a2, b2, part)
    part = tl.dot(a1f, b3, part)
    part = tl.dot(a2, b1, part)
    part = tl.dot(a1f, b2, part)
    part = tl.dot(a1, b1, part)
    return acc + part  # the running total, an ordinary fp32 add


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
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        k64 = ks.to(tl.int64)
        a = tl.load(x_rows + k64[None, :] * stride_xk, mask=m_in & (ks[None, :] < K), other=0.0)
        b = tl.load(w_cols + k64[:, None] * stride_wk, mask=(ks[:, None] < K) & n_in, other=0.0)
        acc = _block_dot(a, b, acc)
    return acc


@triton.jit
def _post(v):
    """The steps after the norm's affine."""
    v = v * 0.5 * (1.0 + tl.math.erf(v * 0.7071067811865476))
    return tl.where(v < 0.0, 0.0, v)


@triton.jit
def _gemm_stats_kernel(
    z_ptr,  # *f64, [M, N], contiguous: (x @ W^T + b) * scale
    stats_ptr,  # *f64, [2, cdiv(M, BLOCK_M), N]: per row tile, each column's mean and centred M2
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K], any strides
    b_ptr,  # *f32, [N]: the Linear's bias
    s_ptr,  # *f32, [N]: the scale (read only when SCALE)
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk,
    SCALE: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    n_in = rn < N
    # fp64 from here: the batch norm subtracts the column's mean, which cancels the bias and
    # leaves every rounding of z relative to the column's spread, not to z (x of small values
    # with a bias of 0.1: one ulp of z is many of the normalised output)
    z = acc.to(tl.float64) + tl.load(b_ptr + rn, mask=n_in, other=0.0).to(tl.float64)[None, :]
    if SCALE:
        z = z * tl.load(s_ptr + rn, mask=n_in, other=0.0).to(tl.float64)[None, :]
    m_in = rm[:, None] < M
    tl.store(z_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], z, mask=m_in & n_in[None, :])
    # This tile's column statistics, centred on the tile's own mean: combined exactly (Chan) by
    # _bn_stats_kernel, so the batch statistics cost no extra pass over z.
    cnt = tl.minimum(M - pid_m * BLOCK_M, BLOCK_M).to(tl.float64)
    mean = tl.sum(tl.where(m_in, z, 0.0), axis=0) / cnt
    d = tl.where(m_in, z - mean[None, :], 0.0)
    m2 = tl.sum(d * d, axis=0)
    tiles = tl.cdiv(M, BLOCK_M)
    out = stats_ptr + pid_m.to(tl.int64) * N + rn
    tl.store(out, mean, mask=n_in)
    tl.store(out + tiles.to(tl.int64) * N, m2, mask=n_in)


@triton.jit
def _bn_stats_kernel(
    ms_ptr,  # *f64, [2, N]: each column's batch mean and 1 / sqrt(biased variance + eps)
    stats_ptr,  # *f64, [2, TILES, N], from _gemm_stats_kernel
    M, N, TILES, eps,
    ROWS_PER_TILE: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c_in = cols < N
    n = tl.zeros((BLOCK,), dtype=tl.float64)
    mean = tl.zeros((BLOCK,), dtype=tl.float64)
    m2 = tl.zeros((BLOCK,), dtype=tl.float64)
    for t in range(0, TILES):
        nb = tl.minimum(M - t * ROWS_PER_TILE, ROWS_PER_TILE).to(tl.float64)
        mb = tl.load(stats_ptr + t * N + cols, mask=c_in, other=0.0)
        m2b = tl.load(stats_ptr + (TILES + t) * N + cols, mask=c_in, other=0.0)
        tot = n + nb
        delta = mb - mean
        mean = mean + delta * (nb / tot)
        m2 = m2 + m2b + delta * delta * (n * nb / tot)
        n = tot
    tl.store(ms_ptr + cols, mean, mask=c_in)
    tl.store(ms_ptr + N + cols, 1.0 / tl.sqrt(m2 / M + eps), mask=c_in)


@triton.jit
def _bn_apply_kernel(
    y_ptr,  # *f32, [M, N], contiguous: the result
    z_ptr,  # *f64, [M, N], contiguous: z from _gemm_stats_kernel
    ms_ptr,  # *f64, [2, N]: mean and 1 / std
    g_ptr,  # *f32, [N]: the norm's weight
    h_ptr,  # *f32, [N]: the norm's bias
    M, N,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    n_tiles = tl.cdiv(N, BLOCK_N)
    rm = (tl.program_id(0) // n_tiles) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (tl.program_id(0) % n_tiles) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_in = rn < N
    mask = (rm[:, None] < M) & n_in[None, :]
    off = rm.to(tl.int64)[:, None] * N + rn[None, :]
    z = tl.load(z_ptr + off, mask=mask, other=0.0)
    mean = tl.load(ms_ptr + rn, mask=n_in, other=0.0)
    rstd = tl.load(ms_ptr + N + rn, mask=n_in, other=0.0)
    g = tl.load(g_ptr + rn, mask=n_in, other=0.0).to(tl.float64)
    h = tl.load(h_ptr + rn, mask=n_in, other=0.0).to(tl.float64)
    v = (z - mean[None, :]) * rstd[None, :] * g[None, :] + h[None, :]
    tl.store(y_ptr + off, _post(v).to(tl.float32), mask=mask)  # the one rounding to fp32


def _gemm_batchnorm(x, w, b, s, g, h, scale, eps):
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if m == 0 or n == 0:
        return y
    cfg = _config(m, n, k)
    bm = cfg["BLOCK_M"]
    tiles = triton.cdiv(m, bm)
    z = torch.empty((m, n), dtype=torch.float64, device=x.device)
    stats = torch.empty((2, tiles, n), dtype=torch.float64, device=x.device)
    grid = (tiles * triton.cdiv(n, cfg["BLOCK_N"]),)
    _gemm_stats_kernel[grid](
        z, stats, x, w, b, s, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
        SCALE=scale, **cfg,
    )  # fmt: skip
    ms = torch.empty((2, n), dtype=torch.float64, device=x.device)
    _bn_stats_kernel[(triton.cdiv(n, 128),)](
        ms, stats, m, n, tiles, eps, ROWS_PER_TILE=bm, BLOCK=128, num_warps=4
    )
    grid = (triton.cdiv(m, 32) * triton.cdiv(n, 128),)
    _bn_apply_kernel[grid](y, z, ms, g, h, m, n, BLOCK_M=32, BLOCK_N=128, num_warps=8)
    return y


def kb2_41_gemm_batchnorm_gelu_relu(x, gemm_weight, gemm_bias, batch_norm_weight, batch_norm_bias):
    b = gemm_bias.contiguous()
    g, h = batch_norm_weight.contiguous(), batch_norm_bias.contiguous()
    return _gemm_batchnorm(x, gemm_weight, b, b, g, h, False, 1e-5)
