"""kb1_8_matmul_with_irregular_shapes: C = A @ B, A [M, K], B [K, N] of odd sizes.

At the problem's size (M=8205, K=2949, N=5921): 287 GFLOP against 388 MB, compute-bound. No size
is a multiple of a block: every load is masked on its row/column and on the K tail, the stores
on row and column.

The GEMM is exact fp32 on the CUDA cores: tl.dot(..., input_precision="ieee"), one fp32 FMA
chain per output through each K range, as cuBLAS's fp32 GEMM rounds; never TF32. The safe twin
of the bf16-pieces candidate, with the same tiling; slower than cuBLAS's SGEMM.

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
    "BLOCK_K": [16, 32],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 16, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
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


def kb1_8_matmul_with_irregular_shapes(A, B):
    m, k = A.shape
    n = B.shape[1]
    c = torch.empty((m, n), dtype=torch.float32, device=A.device)
    return _gemm(c, A, B, 1, m, n, k, (0, A.stride(0), A.stride(1)), (0, B.stride(0), B.stride(1)))
