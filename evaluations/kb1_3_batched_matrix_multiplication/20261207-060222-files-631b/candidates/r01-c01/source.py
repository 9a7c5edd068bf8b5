"""kb1_3_batched_matrix_multiplication: C = bmm(A, B), A [Bt, m, k], B [Bt, k, n].

At the problem's size (Bt=128, m=512, k=1024, n=2048): 275 GFLOP against 1.9 GB, compute-bound.
One launch: the batch is grid axis 2, each operand walked with its own three strides (a strided,
transposed or leading view costs no copy).

The GEMM runs on the bf16 tensor cores exactly enough for fp32: each fp32 tile of a and of b is
split in registers into three bf16 pieces (v = v1 + v2 + v3, every split exact in fp32), and the
six products whose bits reach fp32's precision (a3b1, a2b2, a1b3, a2b1, a1b2, a1b1, smallest
first) are chained into one fresh accumulator per K block, which is then added into the fp32
running total on the CUDA cores: the tensor cores never carry a sum through all of K (on the
H200 one accumulator through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM).
Specials: an inf or NaN is carried by its leading piece alone (its residual pieces are 0), and
the products of a residual piece take the other side's leading piece with its specials zeroed,
so inf * (a residual piece that is exactly 0) never makes a NaN that torch's inf * b has not.
Six bf16 MMAs cost a sixth of the H200's dense bf16 rate (~165 TFLOP/s), above the fp32 FMA
rate (~60 TFLOP/s) that torch's fp32 GEMM (no TF32) runs at.

Where the output has fewer tiles than the GPU has SMs and K is long, K is split: each split
writes its fp32 partial tile to a scratch [S, Z, M, N], and a second pass adds the S partials in
order (deterministic; no atomics, so no zeroing pass over the NaN-filled output).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The GEMM's tiling; every point gives the same answers (each output is one tile's K loop, or
# the in-order sum of its splits' loops).
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128, 256],
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
    """fp32 v as bf16 pieces, leading bits first: (v1, v1 with inf/NaN zeroed, v2, v3). A
    special stays whole in v1; its residuals are 0 (inf - inf is NaN, so it is replaced)."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    r = tl.where(r == r, r, 0.0)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    p1f = tl.where(tl.abs(v) < float("inf"), p1.to(tl.float32), 0.0).to(tl.bfloat16)
    return p1, p1f, p2, p3


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block: six bf16 products in a fresh accumulator, smallest first;
    only a1 b1 sees the specials, so inf times a zero residual never turns into NaN."""
    a1, a1f, a2, a3 = _pieces(a)
    b1, b1f, b2, b3 = _pieces(b)
    part = tl.dot(a3, b1f)
    part = tl.dot(a2, b2, part)
    part = tl.dot(a1f, b3, part)
    part = tl.dot(a2, b1f, part)
    part = tl.dot(a1f, b2, part)
    part = tl.dot(a1, b1, part)
    return acc + part  # the running total, an ordinary fp32 add


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program: GROUP_M row tiles walk the column tiles together, so the
    b tiles they share are read from L2 rather than HBM."""
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
def _gemm_kernel(
    c_ptr,  # *f32: c(s, z, m, n) at s * stride_cs + z * stride_cz + m * stride_cm + n
    a_ptr,  # *f32: a(z, m, k) at z * stride_az + m * stride_am + k * stride_ak
    b_ptr,  # *f32: b(z, k, n) at z * stride_bz + k * stride_bk + n * stride_bn
    M, N, K,  # each product is [M, K] @ [K, N]
    K_SPLIT,  # the K terms of one split (a multiple of BLOCK_K); program_id(1) is the split
    stride_az, stride_am, stride_ak,
    stride_bz, stride_bk, stride_bn,
    stride_cs, stride_cz, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    split = tl.program_id(1).to(tl.int64)
    z = tl.program_id(2).to(tl.int64)  # the batch: axis 2, at most 65535 (here at most 128)
    k_lo = split * K_SPLIT
    k_hi = tl.minimum(k_lo + K_SPLIT, K)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rm64 = rm.to(tl.int64)
    rn64 = rn.to(tl.int64)
    # 64-bit offsets: a batched operand or a long-K split passes 2^31 elements.
    a_ptrs = a_ptr + z * stride_az + rm64[:, None] * stride_am + (k_lo + rk)[None, :] * stride_ak
    b_ptrs = b_ptr + z * stride_bz + (k_lo + rk)[:, None] * stride_bk + rn64[None, :] * stride_bn
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    m_in = rm[:, None] < M
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        k_in = rk < k_hi - k0
        a = tl.load(a_ptrs, mask=m_in & k_in[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_in[:, None] & n_in, other=0.0)
        acc = _block_dot(a, b, acc)
        a_ptrs += a_step
        b_ptrs += b_step
    c = c_ptr + split * stride_cs + z * stride_cz + rm64[:, None] * stride_cm + rn64[None, :]
    tl.store(c, acc, mask=m_in & n_in)


@triton.jit
def _sum_splits_kernel(
    out_ptr,  # *f32, [total] contiguous: the result
    part_ptr,  # *f32, [SPLITS, total] contiguous: each split's partial sums
    total,  # elements of the result
    SPLITS,  # partials per element, added in split order
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLITS):
        acc += tl.load(part_ptr + s * total + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc, mask=mask)


_SMS = 132  # the H200's SMs: fewer output tiles than this leaves the GPU idle without a split
_MIN_SPLIT_K = 2048  # the least K one split takes, so a split's loop outweighs its partial's bytes


def _gemm(c, a, b, z, m, n, k, sa, sb):
    """c[z] = a[z] @ b[z] for z < Z; c is a new contiguous [Z, M, N] (or [M, N]) fp32 tensor;
    sa = (batch, row, k) strides of a, sb = (batch, k, column) strides of b (0 to broadcast)."""
    cfg = _config(z * m, n, k)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    k_split, splits = k, 1
    if tiles * z < _SMS and k >= 2 * _MIN_SPLIT_K:
        want = min(triton.cdiv(2 * _SMS, tiles * z), k // _MIN_SPLIT_K)
        k_split = triton.cdiv(triton.cdiv(k, want), bk) * bk
        splits = triton.cdiv(k, k_split)
    out = c
    if splits > 1:
        out = torch.empty((splits, z, m, n), dtype=torch.float32, device=c.device)
    _gemm_kernel[(tiles, splits, z)](
        out, a, b, m, n, k, k_split,
        sa[0], sa[1], sa[2], sb[0], sb[1], sb[2],
        z * m * n, m * n, n,
        **cfg,
    )  # fmt: skip
    if splits > 1:
        total = z * m * n
        grid = (triton.cdiv(total, 1024),)
        _sum_splits_kernel[grid](c, out, total, splits, BLOCK=1024, num_warps=4)
    return c


def kb1_3_batched_matrix_multiplication(A, B):
    z, m, k = A.shape
    n = B.shape[2]
    c = torch.empty((z, m, n), dtype=torch.float32, device=A.device)
    return _gemm(c, A, B, z, m, n, k, A.stride(), B.stride())
