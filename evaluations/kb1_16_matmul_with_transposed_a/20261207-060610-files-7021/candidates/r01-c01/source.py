"""kb1_16_matmul_with_transposed_a: C = A^T @ B, A of [K, M], B of [K, N].

At the problem's size (M=2048, K=8192, N=4096): 137 GFLOP against 235 MB, compute-bound. A^T is
never materialised: the kernel reads A's tiles through swapped strides (Triton specialises the
stride that is 1, so the tile loads stay coalesced along M).

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
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The GEMM's tiling; every point gives the same answers (each output is one tile's K loop).
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
def _tile_ids(R, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program: GROUP_M row tiles walk the column tiles together, so the
    b tiles they share are read from L2 rather than HBM."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(R, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % size_m
    pid_n = (pid % per_group) // size_m
    return pid_m, pid_n


@triton.jit
def _gemm_kernel(
    c_ptr,  # *f32, [R, N] contiguous: the result
    a_ptr,  # *f32, the left operand; row r, column k at the offsets below
    b_ptr,  # *f32, the right operand; b(k, n) at k * stride_bk + n * stride_bn
    R, N, K,  # result rows, columns, and the reduced length
    D1, D2,  # rows as [R / (D1 * D2), D1, D2] (leading dims of a batched left operand)
    stride_a0, stride_a1, stride_a2, stride_ak,  # a's element strides along those and along k
    stride_bk, stride_bn,
    stride_cr,  # c's row stride
    ROW_DIMS: tl.constexpr,  # how many of the three row dims a's rows are spread over
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(R, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # Each row's start in a, once per tile: a batched operand's strides are honoured in place.
    r64 = rm.to(tl.int64)
    if ROW_DIMS == 3:
        a_row = (
            (r64 // (D1 * D2)) * stride_a0 + ((r64 // D2) % D1) * stride_a1 + (r64 % D2) * stride_a2
        )
    elif ROW_DIMS == 2:
        a_row = (r64 // D2) * stride_a1 + (r64 % D2) * stride_a2
    else:
        a_row = r64 * stride_a2
    # Pointers advance by one K block per step (64-bit: a batched operand passes 2^31 elements).
    a_ptrs = a_ptr + a_row[:, None] + rk.to(tl.int64)[None, :] * stride_ak
    b_ptrs = b_ptr + rk.to(tl.int64)[:, None] * stride_bk + rn.to(tl.int64)[None, :] * stride_bn
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    m_in = rm[:, None] < R
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=m_in & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & n_in, other=0.0)
        acc = _block_dot(a, b, acc)
        a_ptrs += a_step
        b_ptrs += b_step
    c = c_ptr + r64[:, None] * stride_cr + rn[None, :]
    tl.store(c, acc, mask=m_in & n_in)


def kb1_16_matmul_with_transposed_a(A, B):
    k, m = A.shape
    n = B.shape[1]
    rows = m
    c = torch.empty((m, n), dtype=torch.float32, device=A.device)
    row_dims, d1, d2 = 1, 1, m
    sa0, sa1, sa2, sak = 0, 0, A.stride(1), A.stride(0)  # a(m, k) = A[k, m]
    a, b, sbk, sbn = A, B, B.stride(0), B.stride(1)
    cfg = _config(rows, n, k)
    grid = (triton.cdiv(rows, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
    _gemm_kernel[grid](
        c, a, b, rows, n, k, d1, d2,
        sa0, sa1, sa2, sak, sbk, sbn, n,
        ROW_DIMS=row_dims, **cfg,
    )  # fmt: skip
    return c
