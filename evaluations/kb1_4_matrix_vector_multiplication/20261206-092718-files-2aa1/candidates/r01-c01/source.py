"""kb1_4_matrix_vector_multiplication: y = A @ b, A [M, K], b [K, 1], y [M, 1].

Traffic: at the problem's size (M=2048, K=1048576) A is 8.6 GB and b 4 MB, 4.3 GFLOP: bound by
one read of A (~2.2 ms at the H200's bandwidth). Each program takes ROWS rows and walks K in
BLOCK_K chunks: the b chunk is loaded once and used by all ROWS rows (b stays in L2; with ROWS=4
its L2 reads are a quarter of A's bytes), each A chunk is read once, 128-bit loads along a row.
Math: exact fp32 FMAs on the CUDA cores (no tensor cores, so no TF32 question); each row keeps
BLOCK_K lane sums through K and adds them in a tree at the end, which rounds no worse than
cuBLAS's gemv. NaN/inf propagate as in any sum of products (masked lanes load 0 on both sides).
Where the rows are too few to fill the GPU (M small, K long) K is split: each split writes its
partial row sums to a scratch [S, M], and a second pass adds them in split order
(deterministic; no atomics, so no zeroing pass over the NaN-filled output).
A and b are read through their strides (a transposed A is correct, though not coalesced).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

TUNE_SPACE = {"ROWS": [2, 4, 8], "BLOCK_K": [512, 1024, 2048], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"ROWS": 4, "BLOCK_K": 1024, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _matvec_kernel(
    y_ptr,  # *f32: y(s, m) at s * M + m (the result, or each split's partial row sums)
    a_ptr,  # *f32: a(m, k) at m * stride_am + k * stride_ak
    b_ptr,  # *f32: b(k) at k * stride_bk
    M, K,  # A's rows and the reduced length
    K_SPLIT,  # the K terms of one split (a multiple of BLOCK_K); program_id(1) is the split
    stride_am, stride_ak, stride_bk,
    ROWS: tl.constexpr,  # rows per program, sharing each b chunk
    BLOCK_K: tl.constexpr,  # K terms per step
):  # fmt: skip
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    split = tl.program_id(1).to(tl.int64)
    k_lo = split * K_SPLIT
    k_hi = tl.minimum(k_lo + K_SPLIT, K)
    rk = tl.arange(0, BLOCK_K)
    r_in = rows < M
    # 64-bit offsets: A has 2^31 elements at the problem's size.
    a_ptrs = a_ptr + rows.to(tl.int64)[:, None] * stride_am + (k_lo + rk)[None, :] * stride_ak
    b_ptrs = b_ptr + (k_lo + rk) * stride_bk
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    acc = tl.zeros((ROWS, BLOCK_K), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        k_in = rk < k_hi - k0
        a = tl.load(a_ptrs, mask=r_in[:, None] & k_in[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_in, other=0.0)
        acc += a * b[None, :]
        a_ptrs += a_step
        b_ptrs += b_step
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + split * M + rows, y, mask=r_in)


@triton.jit
def _sum_splits_kernel(
    out_ptr,  # *f32, [total] contiguous: the result
    part_ptr,  # *f32, [SPLITS, total] contiguous: each split's partial sums
    total,  # elements of the result
    SPLITS,  # partials per element, added in split order
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLITS):
        acc += tl.load(part_ptr + s * total + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc, mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


_SMS = 132  # the H200's SMs: fewer row groups than twice this leaves HBM underused
_MIN_SPLIT_K = 16384  # the least K one split takes, so its loop outweighs its partials' bytes


def kb1_4_matrix_vector_multiplication(A, B):
    m, k = A.shape
    y = torch.empty((m, 1), dtype=torch.float32, device=A.device)
    cfg = _config(m, k)
    programs = triton.cdiv(m, cfg["ROWS"])
    k_split, splits = k, 1
    if programs < 2 * _SMS and k >= 2 * _MIN_SPLIT_K:
        want = min(triton.cdiv(4 * _SMS, programs), k // _MIN_SPLIT_K)
        k_split = triton.cdiv(triton.cdiv(k, want), cfg["BLOCK_K"]) * cfg["BLOCK_K"]
        splits = triton.cdiv(k, k_split)
    out = y
    if splits > 1:
        out = torch.empty((splits, m), dtype=torch.float32, device=A.device)
    _matvec_kernel[(programs, splits)](
        out, A, B, m, k, k_split, A.stride(0), A.stride(1), B.stride(0), **cfg
    )
    if splits > 1:
        grid = (triton.cdiv(m, 1024),)
        _sum_splits_kernel[grid](y, out, m, splits, BLOCK=1024, num_warps=4)
    return y
