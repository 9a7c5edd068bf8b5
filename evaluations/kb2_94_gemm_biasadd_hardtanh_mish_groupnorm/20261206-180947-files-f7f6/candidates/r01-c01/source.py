"""kb2_94_gemm_biasadd_hardtanh_mish_groupnorm: y = x @ W^T + b + bias; h = hardtanh(y, -1, 1); m =
mish(h) = h * tanh(softplus(h)); out = GroupNorm(256, m).

hardtanh keeps NaN (torch's clamp); softplus is log1p(exp(h)) (torch's threshold 20 is never
reached on [-1, 1]); tanh and log1p from libdevice. On the H100 this file was rejected for
precision at the groups of one: mish's product was fused into the centring subtraction
(Triton's fp fusion), which left its rounding error, times rstd, in a group that torch
centres to exactly 0; the product is now rounded on its own (see the kernel).

GroupNorm in the GEMM's epilogue: a group's 32 channels lie within one tile (BLOCK_N is a multiple
of the group size), so the tile is reshaped to [BLOCK_M, BLOCK_N / G, G] and each group's mean and
biased variance are taken two-pass in registers (eps 1e-5), then * gn_weight + gn_bias. num_groups
is a constant of the module that no input's shape carries: it is taken as the module's 256, capped
at the channel count (the import's CPU sizes scale it with the channels: 128 groups of 1 at 128
channels); the channels must split into power-of-two groups.

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

Traffic at the problem's size (M=1024, N=K=8192): x and w read (w once from HBM), out written once
(32 MB); torch eager runs the GEMM and then an add, a hardtanh, a mish and GroupNorm's passes over
[1024, 8192]. The GEMM's 137 GFLOP decide the time.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

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
NUM_GROUPS = 256  # the module's num_groups
GN_EPS = 1e-5  # GroupNorm's default eps


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
def _kb2_94_gemm_biasadd_hardtanh_mish_groupnorm_kernel(
    y_ptr,  # *fp32, [M, N], contiguous: the output
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K], any strides
    b_ptr,  # *fp32, [N]: the Linear's bias
    gw_ptr, gb_ptr,  # *fp32, [N]: GroupNorm's weight and bias
    c_ptr,  # *fp32, [N]: the added bias parameter
    M, N, K,  # the GEMM's sizes
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
    c = tl.load(c_ptr + rn, mask=n_ok, other=0.0)
    v = v + c[None, :]
    v = tl.where(v < -1.0, -1.0, tl.where(v > 1.0, 1.0, v))  # NaN compares false: kept
    # mish's product rounded on its own (mul_rn): Triton lets ptxas fuse a multiply into the
    # add that follows it, and `g - mean` below would then take v * t exactly, minus its
    # rounding in the mean: a group of one (the CPU sizes' 128 groups of 128 channels) must
    # centre to exactly 0, as torch's does, not to that rounding times rstd (316 at eps 1e-5).
    v = libdevice.mul_rn(v, libdevice.tanh(libdevice.log1p(tl.exp(v))))
    g = tl.reshape(v, (BLOCK_M, BLOCK_N // GROUP, GROUP))
    mean = tl.sum(g, axis=2) / GROUP
    d = g - mean[:, :, None]
    rstd = 1.0 / tl.sqrt_rn(tl.sum(d * d, axis=2) / GROUP + eps)
    z = tl.reshape(d * rstd[:, :, None], (BLOCK_M, BLOCK_N))
    gw = tl.load(gw_ptr + rn, mask=n_ok, other=0.0)
    gb = tl.load(gb_ptr + rn, mask=n_ok, other=0.0)
    z = z * gw[None, :] + gb[None, :]
    out = z
    y = y_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :]
    tl.store(y, out, mask=m_ok[:, None] & n_ok[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb2_94_gemm_biasadd_hardtanh_mish_groupnorm(
    x, bias, gemm_weight, gemm_bias, groupnorm_weight, groupnorm_bias
) -> torch.Tensor:
    gw, gb = groupnorm_weight, groupnorm_bias
    m, k = x.shape
    n = gemm_weight.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = dict(_config(m, n, k))
    groups = min(NUM_GROUPS, n)
    group = n // groups
    if group * groups != n or group & (group - 1):
        raise ValueError(
            f"kb2_94_gemm_biasadd_hardtanh_mish_groupnorm: {n} channels in {groups} groups: "
            "power-of-two groups expected"
        )
    # A tile no taller than the batch (tl.dot's least is 16): small batches waste no rows.
    block_m = min(cfg.pop("BLOCK_M"), max(16, triton.next_power_of_2(m)))
    cfg["BLOCK_N"] = max(cfg["BLOCK_N"], group)  # whole groups per tile
    nt = triton.cdiv(n, cfg["BLOCK_N"])
    grid = (triton.cdiv(m, block_m) * nt,)
    _kb2_94_gemm_biasadd_hardtanh_mish_groupnorm_kernel[grid](
        y, x, gemm_weight, gemm_bias.contiguous(), gw.contiguous(), gb.contiguous(),
        bias.contiguous(), m, n, k,
        x.stride(0), x.stride(1), gemm_weight.stride(0), gemm_weight.stride(1), GN_EPS,
        BLOCK_M=block_m, GROUP=group, **cfg,
    )  # fmt: skip
    return y
