"""kb2_12_gemm_multiply_leakyrelu: the GEMM and its epilogue in one kernel.

leaky_relu((x @ W^T + b) * 2.0, 0.1).

The elementwise steps run on the GEMM's fp32 accumulator tile before its only store, so the
[M, N] result is written once and never read back (torch eager writes and re-reads it once per
step). At the problem's size the GEMM's 2*M*N*K flops dominate; the epilogue is free.

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
def _epilogue(z):
    """z * 2.0, then LeakyReLU(0.1): z if z > 0 else 0.1 z (a NaN stays NaN)."""
    z = z * 2.0
    return tl.where(z > 0.0, z, z * 0.1)


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


def kb2_12_gemm_multiply_leakyrelu(x, gemm_weight, gemm_bias):
    m, k = x.shape
    n = gemm_weight.shape[0]
    y = torch.empty((m, n), dtype=torch.float32, device=x.device)
    if m == 0 or n == 0:
        return y
    b = gemm_bias.contiguous()
    cfg = _config(m, n, k)
    bm, bn = cfg["BLOCK_M"], cfg["BLOCK_N"]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    _gemm_epilogue_kernel[grid](
        y, x, gemm_weight, b, m, n, k,
        x.stride(0), x.stride(1), gemm_weight.stride(0), gemm_weight.stride(1), y.stride(0),
        **cfg,
    )  # fmt: skip
    return y
