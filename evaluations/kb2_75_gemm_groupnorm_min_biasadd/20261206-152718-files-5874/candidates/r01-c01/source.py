"""kb2_75_gemm_groupnorm_min_biasadd: y = x @ W^T + b; z = GroupNorm(512, y); r = min(z, dim=1)
(keepdim, [M, 1]); out = r + bias, bias [1, N, 1, 1], so out is [1, N, M, 1]: out[0, n, m, 0] =
r[m] + bias[n].

GroupNorm in the GEMM's epilogue: a group's 16 channels lie within one tile (BLOCK_N is a multiple
of the group size), so the tile is reshaped to [BLOCK_M, BLOCK_N / G, G] and each group's mean and
biased variance are taken two-pass in registers (eps 1e-5), then * gn_weight + gn_bias. num_groups
is a constant of the module that no input's shape carries: it is taken as the module's 512, capped
at the channel count (the import's CPU sizes scale it with the channels: 128 groups of 1 at 128
channels); the channels must split into power-of-two groups.

Each GEMM program reduces its normed tile to a per (row, N tile) min (NaN-propagating, as
torch.min); a row kernel takes a row's min over its partials; a broadcast kernel writes the [N, M]
sums with M fastest, as the output's storage is.

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

Traffic at the problem's size (M=1024, N=K=8192): x and w read (w once from HBM), the partials
(1024 x 64) twice, out written once (32 MB); torch eager writes and reads the [1024, 8192] result
for each of GroupNorm's passes and the min. The GEMM's 137 GFLOP decide the time.
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
NUM_GROUPS = 512  # the module's num_groups
GN_EPS = 1e-5  # GroupNorm's default eps
MIN_BLOCK = 512  # partials a row's min reads at a time
OUT_BLOCK_N, OUT_BLOCK_M = 16, 256  # the broadcast's tile: [channels, batch rows]


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
def _gemm_groupnorm_min_kernel(
    part_ptr,  # *fp32, [M, NT], contiguous: per (row, N tile) min of the normed tile
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K], any strides
    b_ptr,  # *fp32, [N]: the Linear's bias
    gw_ptr, gb_ptr,  # *fp32, [N]: GroupNorm's weight and bias
    M, N, K, NT,  # the GEMM's sizes; NT = cdiv(N, BLOCK_N)
    stride_xm, stride_xk, stride_wn, stride_wk,  # elements between rows / columns
    eps,  # GroupNorm's eps
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP: tl.constexpr,  # channels per group, a power of two dividing BLOCK_N
):  # fmt: skip
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    pid_n = pid // num_m
    rm = (pid % num_m) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    n_ok = rn < N
    m_ok = rm < M
    b = tl.load(b_ptr + rn, mask=n_ok, other=0.0)
    v = acc + b[None, :]
    g = tl.reshape(v, (BLOCK_M, BLOCK_N // GROUP, GROUP))
    mean = tl.sum(g, axis=2) / GROUP
    d = g - mean[:, :, None]
    rstd = 1.0 / tl.sqrt_rn(tl.sum(d * d, axis=2) / GROUP + eps)
    z = tl.reshape(d * rstd[:, :, None], (BLOCK_M, BLOCK_N))
    gw = tl.load(gw_ptr + rn, mask=n_ok, other=0.0)
    gb = tl.load(gb_ptr + rn, mask=n_ok, other=0.0)
    z = z * gw[None, :] + gb[None, :]
    z = tl.where(n_ok[None, :], z, float("inf"))
    nans = tl.sum((z != z).to(tl.int32), axis=1)
    lo = tl.where(nans > 0, float("nan"), tl.min(z, axis=1))  # a NaN wins, as in torch.min
    tl.store(part_ptr + rm.to(tl.int64) * NT + pid_n, lo, mask=m_ok)


@triton.jit
def _row_min_kernel(
    r_ptr,  # *fp32, [M]: each row's min
    part_ptr,  # *fp32, [M, NT], contiguous
    NT,  # partials per row
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    lo = tl.full((BLOCK,), float("inf"), dtype=tl.float32)
    nans = tl.zeros((BLOCK,), dtype=tl.int32)
    for c0 in range(0, NT, BLOCK):
        p = tl.load(part_ptr + row * NT + c0 + cols, mask=c0 + cols < NT, other=float("inf"))
        nans += (p != p).to(tl.int32)
        lo = tl.minimum(lo, p)
    tl.store(r_ptr + row, tl.where(tl.sum(nans, axis=0) > 0, float("nan"), tl.min(lo, axis=0)))


@triton.jit
def _broadcast_add_kernel(
    out_ptr,  # *fp32, [N, M] (the [1, N, M, 1] output), contiguous
    r_ptr,  # *fp32, [M]
    c_ptr,  # *fp32, [N]: the bias parameter
    M, N,  # sizes
    BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    num_m = tl.cdiv(M, BLOCK_M)
    pid = tl.program_id(0)
    rm = (pid % num_m) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid // num_m) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < M
    n_ok = rn < N
    r = tl.load(r_ptr + rm, mask=m_ok, other=0.0)
    c = tl.load(c_ptr + rn, mask=n_ok, other=0.0)
    at = rn.to(tl.int64)[:, None] * M + rm[None, :]
    tl.store(out_ptr + at, r[None, :] + c[:, None], mask=n_ok[:, None] & m_ok[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb2_75_gemm_groupnorm_min_biasadd(
    x, bias, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias
) -> torch.Tensor:
    gw, gb = group_norm_weight, group_norm_bias
    m, k = x.shape
    n = gemm_weight.shape[0]
    out = torch.empty((1, n, m, 1), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    cfg = dict(_config(m, n, k))
    groups = min(NUM_GROUPS, n)
    group = n // groups
    if group * groups != n or group & (group - 1):
        raise ValueError(
            f"kb2_75_gemm_groupnorm_min_biasadd: {n} channels in {groups} groups: "
            "power-of-two groups expected"
        )
    # A tile no taller than the batch (tl.dot's least is 16): small batches waste no rows.
    block_m = min(cfg.pop("BLOCK_M"), max(16, triton.next_power_of_2(m)))
    cfg["BLOCK_N"] = max(cfg["BLOCK_N"], group)  # whole groups per tile
    nt = triton.cdiv(n, cfg["BLOCK_N"])
    part = torch.empty((m, nt), dtype=torch.float32, device=x.device)
    _gemm_groupnorm_min_kernel[(triton.cdiv(m, block_m) * nt,)](
        part, x, gemm_weight, gemm_bias.contiguous(), gw.contiguous(), gb.contiguous(), m, n, k, nt,
        x.stride(0), x.stride(1), gemm_weight.stride(0), gemm_weight.stride(1), GN_EPS,
        BLOCK_M=block_m, GROUP=group, **cfg,
    )  # fmt: skip
    r = torch.empty((m,), dtype=torch.float32, device=x.device)
    _row_min_kernel[(m,)](
        r, part, nt, BLOCK=min(MIN_BLOCK, triton.next_power_of_2(nt)), num_warps=4
    )
    grid = (triton.cdiv(m, OUT_BLOCK_M) * triton.cdiv(n, OUT_BLOCK_N),)
    _broadcast_add_kernel[grid](
        out, r, bias.reshape(n), m, n, BLOCK_N=OUT_BLOCK_N, BLOCK_M=OUT_BLOCK_M, num_warps=4
    )
    return out
