"""kb1_10_3d_tensor_matrix_multiplication: A [N, M, K] @ B [K, L] as one GEMM over N*M rows.

At the problem's size (N=16, M=1024, K=2048, L=768) the GEMM is 16384 x 2048 x 768: 51.5 GFLOP,
compute-bound; the split adds ~0.4 GB of traffic (~0.1 ms). A's leading dims are walked with
their own strides by the split, so no fp32 copy is made for a strided or transposed view.

Both operands are split once, before the GEMM, into bf16 pieces held in scratch tensors
(v = v1 + v2 + v3, each split exact in fp32); the GEMM then streams bf16 tiles straight from
memory into shared memory, so the tensor cores read their operands there, with no per-tile
splitting in registers (an A tile is otherwise split once per column tile, a B tile once per row
tile). Per K block the six products whose bits reach fp32's precision (a3b1, a2b2, a1b3, a2b1,
a1b2, a1b1, smallest first) are chained into one fresh accumulator, which is added into the fp32
running total on the CUDA cores: the tensor cores never carry a sum through all of K (on the
H200 one accumulator through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM).
The split costs one pass: read the fp32 operands once, write 1.5x (2x with the specials' piece)
their bytes in bf16.
Specials: an inf or NaN stays whole in v1 with its residuals 0, and a fourth piece, v1 with its
specials zeroed, is what the residual products take, so inf * (a residual that is exactly 0)
never makes a NaN that torch's inf * b has not; only a1 b1 sees the specials.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

SPECIALS = True  # the domain draws inf and NaN
# The GEMM's tiling; every point gives the same answers and fits the H200's shared memory.
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [32],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _split_kernel(
    dst_ptr,  # *bf16, [P, R, C] contiguous: the pieces of src, leading bits first
    src_ptr,  # *f32, the logical [R, C] matrix; its rows spread over up to three dims
    R, C,  # logical sizes
    plane,  # R * C: one piece's elements
    D1, D2,  # rows as [R / (D1 * D2), D1, D2]
    stride_0, stride_1, stride_2, stride_c,  # src's element strides along those and along C
    ROW_DIMS: tl.constexpr, SPECIALS: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    col_blocks = tl.cdiv(C, BLOCK_C)
    rows = (pid // col_blocks) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = (pid % col_blocks) * BLOCK_C + tl.arange(0, BLOCK_C)
    r64 = rows.to(tl.int64)
    c64 = cols.to(tl.int64)
    if ROW_DIMS == 3:
        row = (r64 // (D1 * D2)) * stride_0 + ((r64 // D2) % D1) * stride_1 + (r64 % D2) * stride_2
    elif ROW_DIMS == 2:
        row = (r64 // D2) * stride_1 + (r64 % D2) * stride_2
    else:
        row = r64 * stride_2
    mask = (rows[:, None] < R) & (cols[None, :] < C)
    v = tl.load(src_ptr + row[:, None] + c64[None, :] * stride_c, mask=mask, other=0.0)
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    if SPECIALS:
        r = tl.where(r == r, r, 0.0)  # inf - inf: the special is carried by p1 alone
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    dst = dst_ptr + r64[:, None] * C + c64[None, :]
    tl.store(dst, p1, mask=mask)
    tl.store(dst + plane, p2, mask=mask)
    tl.store(dst + 2 * plane, p3, mask=mask)
    if SPECIALS:
        p1f = tl.where(tl.abs(v) < float("inf"), p1.to(tl.float32), 0.0).to(tl.bfloat16)
        tl.store(dst + 3 * plane, p1f, mask=mask)


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
def _gemm_pieces_kernel(
    c_ptr,  # *f32, [R, N] contiguous: the result
    a_ptr,  # *bf16, [P, R, K] contiguous: a's pieces (v1, v2, v3[, v1 finite])
    b_ptr,  # *bf16, [P, K, N] contiguous: b's pieces, in the same order
    R, N, K,  # sizes
    a_plane, b_plane,  # R * K and K * N: one piece's elements
    SPECIALS: tl.constexpr,  # a fourth piece per operand: v1 with inf/NaN zeroed
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(R, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm.to(tl.int64)[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk.to(tl.int64)[:, None] * N + rn[None, :]
    b_step = tl.full((), BLOCK_K, tl.int64) * N
    m_in = rm[:, None] < R
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a_mask = m_in & (rk[None, :] < K - k0)
        b_mask = (rk[:, None] < K - k0) & n_in
        a1 = tl.load(a_ptrs, mask=a_mask, other=0.0)
        a2 = tl.load(a_ptrs + a_plane, mask=a_mask, other=0.0)
        a3 = tl.load(a_ptrs + 2 * a_plane, mask=a_mask, other=0.0)
        b1 = tl.load(b_ptrs, mask=b_mask, other=0.0)
        b2 = tl.load(b_ptrs + b_plane, mask=b_mask, other=0.0)
        b3 = tl.load(b_ptrs + 2 * b_plane, mask=b_mask, other=0.0)
        if SPECIALS:
            a1f = tl.load(a_ptrs + 3 * a_plane, mask=a_mask, other=0.0)
            b1f = tl.load(b_ptrs + 3 * b_plane, mask=b_mask, other=0.0)
        else:
            a1f = a1
            b1f = b1
        # One K block's sum on the tensor cores, smallest products first, then an fp32 add.
        part = tl.dot(a3, b1f)
        part = tl.dot(a2, b2, part)
        part = tl.dot(a1f, b3, part)
        part = tl.dot(a2, b1f, part)
        part = tl.dot(a1f, b2, part)
        part = tl.dot(a1, b1, part)
        acc += part
        a_ptrs += BLOCK_K
        b_ptrs += b_step
    c = c_ptr + rm.to(tl.int64)[:, None] * N + rn[None, :]
    tl.store(c, acc, mask=m_in & n_in)


def _split(src, rows: int, cols: int, d1: int, d2: int, strides, row_dims: int, specials: bool):
    """src's logical [rows, cols] matrix as bf16 pieces, [P, rows, cols] contiguous."""
    dst = torch.empty((4 if specials else 3, rows, cols), dtype=torch.bfloat16, device=src.device)
    block_c = min(triton.next_power_of_2(cols), 128)
    block_r = 4096 // block_c
    grid = (triton.cdiv(rows, block_r) * triton.cdiv(cols, block_c),)
    _split_kernel[grid](
        dst, src, rows, cols, rows * cols, d1, d2, *strides,
        ROW_DIMS=row_dims, SPECIALS=specials, BLOCK_R=block_r, BLOCK_C=block_c, num_warps=8,
    )  # fmt: skip
    return dst


def kb1_10_3d_tensor_matrix_multiplication(A, B):
    nb, m, k = A.shape
    n = B.shape[1]
    rows = nb * m
    c = torch.empty((nb, m, n), dtype=torch.float32, device=A.device)
    a = _split(A, rows, k, 1, m, (0, A.stride(0), A.stride(1), A.stride(2)), 2, SPECIALS)
    b = _split(B, k, n, 1, 1, (0, 0, B.stride(0), B.stride(1)), 1, SPECIALS)
    cfg = _config(rows, n, k)
    grid = (triton.cdiv(rows, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
    _gemm_pieces_kernel[grid](c, a, b, rows, n, k, rows * k, k * n, SPECIALS=SPECIALS, **cfg)
    return c
