"""kb1_15_matmul_for_lower_triangular_matrices: tril(A @ B) for lower triangular A and B.

A and B are lower triangular (the problem draws them so: tril of rand), so C[i, j] = sum over
k in [j, i] of A[i, k] B[k, j] for i >= j, and 0 above the diagonal. Every term left out is an
exact zero, so the sum is torch's up to order.

At the problem's size (N = 4096) torch runs the full 137 GFLOP GEMM and then a triangle mask over
64 MiB; here only the output tiles that meet C's triangle compute, each over its own K range:
with 128-wide tiles that is 25 GFLOP (~N^3/3 plus the diagonal tiles), 5.5x less, and C is
written once (the tiles outside the triangle store zeros without reading anything). Tiles go
out longest K range first, so the diagonal's short tiles fill the tail of the grid.

The GEMM runs on the bf16 tensor cores exactly enough for fp32: each fp32 tile of a and of b is
split in registers into three bf16 pieces (v = v1 + v2 + v3, every split exact in fp32), and the
six products whose bits reach fp32's precision (a3b1, a2b2, a1b3, a2b1, a1b2, a1b1, smallest
first) are chained into one fresh accumulator per K block, which is then added into the fp32
running total on the CUDA cores: the tensor cores never carry a sum through all of K (on the
H200 one accumulator through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM).
The problem draws A and B itself (rand, then its own symmetrisation or triangle): they are
finite, and this problem's domain draws no specials, so the pieces carry no guards for inf/NaN
(the candidates of problems that do take specials keep them out of the residual products).
Six bf16 MMAs cost a sixth of the H200's dense bf16 rate (~165 TFLOP/s), above the fp32 FMA
rate (~60 TFLOP/s) that torch's fp32 GEMM (no TF32) runs at.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The tiling; every point gives the same answers (each output is one tile's K loop).
TUNE_SPACE = {"BLOCK": [64, 128], "BLOCK_K": [32, 64], "num_warps": [4, 8], "num_stages": [2, 3, 4]}
DEFAULT_CONFIG = {"BLOCK": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _pieces(v):
    """fp32 v as three bf16 pieces, leading bits first: 8, 16 and all 24 significant bits. The
    inputs are finite (see above), so no special needs keeping out of the residuals."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    return p1, p2, p3


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block: six bf16 products in a fresh accumulator, smallest first."""
    a1, a2, a3 = _pieces(a)
    b1, b2, b3 = _pieces(b)
    part = tl.dot(a3, b1)
    part = tl.dot(a2, b2, part)
    part = tl.dot(a1, b3, part)
    part = tl.dot(a2, b1, part)
    part = tl.dot(a1, b2, part)
    part = tl.dot(a1, b1, part)
    return acc + part  # the running total, an ordinary fp32 add


@triton.jit
def _tri_root(p):
    """q with q(q+1)/2 <= p < (q+1)(q+2)/2: the row of entry p of a triangle listed row by row
    (the float root can be one off either way; the two checks correct it)."""
    q = ((tl.sqrt(8.0 * p.to(tl.float32) + 1.0) - 1.0) * 0.5).to(tl.int32)
    q = tl.where((q + 1) * (q + 2) // 2 <= p, q + 1, q)
    q = tl.where(q * (q + 1) // 2 > p, q - 1, q)
    return q


@triton.jit
def _tri_gemm_kernel(
    c_ptr,  # *f32, [N, N] contiguous: the result
    a_ptr,  # *f32, [N, N] triangular, any strides
    b_ptr,  # *f32, [N, N] triangular, any strides
    N,  # size
    stride_am, stride_ak, stride_bk, stride_bn,  # element strides
    UPPER: tl.constexpr,  # triu (True) or tril (False): which triangle A, B and C hold
    BLOCK: tl.constexpr, BLOCK_K: tl.constexpr,  # square output tile; K step
):  # fmt: skip
    pid = tl.program_id(0)
    nt = tl.cdiv(N, BLOCK)
    n_work = nt * (nt + 1) // 2
    # Programs [0, n_work) take the tiles that meet C's triangle, one diagonal of tiles after
    # another, the farthest from the main diagonal (the longest K range) first so the short
    # ones fill the tail; the rest take the tiles wholly outside it, which only write zeros.
    work = pid < n_work
    p = tl.where(work, pid, pid - n_work)
    q = _tri_root(p)
    idx = p - q * (q + 1) // 2
    d = nt - 1 - q  # a working tile's distance from the main diagonal, in tiles
    if UPPER:
        pm = tl.where(work, idx, q + 1)
        pn = tl.where(work, idx + d, idx)
        # C[i, j] sums k in [i, j] only: A[i, k] = 0 below i, B[k, j] = 0 past j.
        k_lo = pm * BLOCK
        k_hi = tl.where(work, tl.minimum((pn + 1) * BLOCK, N), k_lo)
    else:
        pm = tl.where(work, idx + d, idx)
        pn = tl.where(work, idx, q + 1)
        # C[i, j] sums k in [j, i] only: B[k, j] = 0 below j, A[i, k] = 0 past i.
        k_lo = pn * BLOCK
        k_hi = tl.where(work, tl.minimum((pm + 1) * BLOCK, N), k_lo)
    rm = pm * BLOCK + tl.arange(0, BLOCK)
    rn = pn * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK_K)
    r64 = rm.to(tl.int64)
    n64 = rn.to(tl.int64)
    k64 = (k_lo + rk).to(tl.int64)
    a_ptrs = a_ptr + r64[:, None] * stride_am + k64[None, :] * stride_ak
    b_ptrs = b_ptr + k64[:, None] * stride_bk + n64[None, :] * stride_bn
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    m_in = rm[:, None] < N
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        a = tl.load(a_ptrs, mask=m_in & (rk[None, :] < k_hi - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_hi - k0) & n_in, other=0.0)
        acc = _block_dot(a, b, acc)
        a_ptrs += a_step
        b_ptrs += b_step
    if UPPER:
        keep = rm[:, None] <= rn[None, :]
    else:
        keep = rm[:, None] >= rn[None, :]
    # Every entry of the tile is written: the product inside the triangle, 0 outside it.
    tl.store(c_ptr + r64[:, None] * N + n64[None, :], tl.where(keep, acc, 0.0), mask=m_in & n_in)


def kb1_15_matmul_for_lower_triangular_matrices(A, B):
    n = A.shape[0]
    c = torch.empty((n, n), dtype=torch.float32, device=A.device)
    cfg = _config(n)
    nt = triton.cdiv(n, cfg["BLOCK"])
    _tri_gemm_kernel[(nt * nt,)](
        c, A, B, n, A.stride(0), A.stride(1), B.stride(0), B.stride(1),
        UPPER=False, **cfg,
    )  # fmt: skip
    return c
