"""kb2_30_gemm_groupnorm_hardtanh: GEMM, then GroupNorm(16) and hardtanh fused in one pass.

z = x @ W^T + b; GroupNorm over 16 groups of N/16 features per row (biased variance, eps
1e-5), its weight and bias, then hardtanh to [-2, 2] (a NaN passes, as torch.clamp's).

Two kernels: the GEMM writes z once; one program per row then reads it once (the row held in
registers as [16, N/16]), and writes the result over z. torch eager makes three more passes.

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
def _pre(z, c):
    """The steps between the GEMM's bias and the norm (fp64)."""
    return z


@triton.jit
def _post(v, cols, mask, p_ptr, q_ptr, r_ptrs):
    """The steps after the normalisation (fp64)."""
    g = tl.load(p_ptr + cols, mask=mask, other=0.0).to(tl.float64)
    v = v * g + tl.load(q_ptr + cols, mask=mask, other=0.0).to(tl.float64)
    return tl.where(v < -2.0, -2.0, tl.where(v > 2.0, 2.0, v))


@triton.jit
def _gemm_pre_kernel(
    z_ptr,  # *f64, [M, N], contiguous: x @ W^T + b, the bias added without a rounding
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K], any strides
    b_ptr,  # *f32, [N]: the Linear's bias
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk,
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
    # fp64 from here: the row norm amplifies every rounding of z (see _row_norm_kernel)
    z = acc.to(tl.float64) + tl.load(b_ptr + rn, mask=n_in, other=0.0).to(tl.float64)[None, :]
    mask = (rm[:, None] < M) & n_in[None, :]
    tl.store(z_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :], z, mask=mask)


@triton.jit
def _row_norm_kernel(
    y_ptr,  # *f32, [M, N], contiguous: the result
    z_ptr,  # *f64, [M, N], contiguous: x @ W^T + b from _gemm_pre_kernel
    c_ptr,  # *f32, [N]: the problem's extra bias (read only where _pre uses it)
    p_ptr,  # *f32, [N]: the norm's weight (read only where _post uses it)
    q_ptr,  # *f32, [N]: the norm's bias
    r_ptr,  # *f32, [M, N], any strides: the problem's second input (read only where _post uses it)
    N, C,  # row length and group length (N = G * C)
    stride_rm, stride_rn,
    eps,
    BLOCK_G: tl.constexpr, BLOCK_C: tl.constexpr, G: tl.constexpr,
):  # fmt: skip
    """One row, held whole in registers as [groups, group length], in fp64: the steps before
    the norm, the mean, the centred sum of squares (two passes over registers), the normalised
    row and the steps after it, rounded to fp32 once. fp64 costs little in a pass bound by
    memory, and a group of a few features is ill-conditioned: (a - mean) / std amplifies each
    rounding of a (a group of 2 features drawn 1e-2 apart turns one ulp of a into ~50), so z
    carries only the GEMM's own rounding, where torch's fp32 steps add four more."""
    row = tl.program_id(0).to(tl.int64)
    g = tl.arange(0, BLOCK_G)
    c = tl.arange(0, BLOCK_C)
    cols = g[:, None] * C + c[None, :]
    mask = (g[:, None] < G) & (c[None, :] < C)
    z = tl.load(z_ptr + row * N + cols, mask=mask, other=0.0)
    z = _pre(z, tl.load(c_ptr + cols, mask=mask, other=0.0).to(tl.float64))
    mean = tl.sum(z, axis=1) / C
    d = tl.where(mask, z - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / C  # biased, as the norm's
    rstd = 1.0 / tl.sqrt(var + eps)
    v = d * rstd[:, None]
    v = _post(v, cols, mask, p_ptr, q_ptr, r_ptr + row * stride_rm + cols * stride_rn)
    tl.store(y_ptr + row * N + cols, v.to(tl.float32), mask=mask)


def _gemm_then_norm(x, w, b, c, p, q, r, groups, eps):
    m, k = x.shape
    n = w.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if m == 0 or n == 0:
        return y
    cfg = _config(m, n, k)
    grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
    z = torch.empty((m, n), dtype=torch.float64, device=x.device)
    _gemm_pre_kernel[grid](
        z, x, w, b, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1), **cfg
    )
    per = n // groups
    block_g, block_c = triton.next_power_of_2(groups), triton.next_power_of_2(per)
    warps = max(4, min(16, block_g * block_c // 512))
    _row_norm_kernel[(m,)](
        y, z, c, p, q, r, n, per, r.stride(0), r.stride(1), eps,
        BLOCK_G=block_g, BLOCK_C=block_c, G=groups, num_warps=warps,
    )  # fmt: skip
    return y


def kb2_30_gemm_groupnorm_hardtanh(x, gemm_weight, gemm_bias, group_norm_weight, group_norm_bias):
    b = gemm_bias.contiguous()
    p, q = group_norm_weight.contiguous(), group_norm_bias.contiguous()
    return _gemm_then_norm(x, gemm_weight, b, b, p, q, x, 16, 1e-5)
