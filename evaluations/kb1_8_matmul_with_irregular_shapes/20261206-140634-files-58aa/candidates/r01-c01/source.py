"""kb1_8_matmul_with_irregular_shapes: C = A @ B, A [M, K], B [K, N] of odd sizes.

At the problem's size (M=8205, K=2949, N=5921): 287 GFLOP against 388 MB, compute-bound. No size
is a multiple of a block: every load is masked on its row/column and on the K tail, the stores
on row and column.

Math: exact fp32 FMAs on the CUDA cores, tl.dot(..., input_precision="ieee"), never TF32 and
never bf16 pieces: the tensor cores flush bf16 subnormals, so a split of fp32 into bf16 pieces
turned denormal products into 0 (rejected at M=8205, K=1, N=1 of denormals). The FMAs keep them.

Rounding: one FMA chain through all of K (acc = tl.dot(a, b, acc) per K tile) errs like a
sequential sum, sqrt(K) worse than torch's GEMMs: at K=2949 of constant rows it put 660 of 67617
entries past the tolerance (|err| 5.2e-4 against 1.2e-4 + rtol). So each output sums K in three
levels: a fresh FMA chain of CHAIN terms (p1), CHAIN_GROUP of those added into p2, p2 added into
the running total every CHAIN * CHAIN_GROUP terms, as a short tree would. At K=2949 that cuts
the worst error 6-9x (an fp32 FMA emulation of both orders on constant rows: 4.7e-5 against
2.9e-4 to 4.4e-4 for one chain).
Writing `acc += tl.dot(a, b)` instead would not do it: Triton's combine pass rewrites
addf(acc, dot(a, b, 0)) into dot(a, b, acc), the one long chain again. Here the dot always
accumulates into p1 (never a zero constant) and p1 is flushed under a branch every CHAIN terms,
so the rewrite has nothing to fuse. The flushes cost one add per output every CHAIN FMAs.

Every point of TUNE_SPACE gives the same bits: the chains are counted in K terms (CHAIN is a
multiple of every BLOCK_K), and each output's order does not depend on the tile it lands in.

No split-K: the domain's K is at most 2949, below the 2 x 2048 the earlier candidates needed
before splitting, so their split path never ran here.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

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

CHAIN = 32  # K terms in one fresh FMA chain; a multiple of every BLOCK_K in TUNE_SPACE
CHAIN_GROUP = 8  # fresh chains summed before they join the running total


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


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
    c_ptr,  # *f32, [M, N] contiguous
    a_ptr,  # *f32: a(m, k) at m * stride_am + k * stride_ak
    b_ptr,  # *f32: b(k, n) at k * stride_bk + n * stride_bn
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    TILES_1: tl.constexpr,  # K tiles per fresh chain: CHAIN // BLOCK_K
    TILES_2: tl.constexpr,  # K tiles per level-2 partial: TILES_1 * CHAIN_GROUP
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rm64 = rm.to(tl.int64)
    rn64 = rn.to(tl.int64)
    # 64-bit offsets: a transposed operand's k stride times K passes 2^31 at the problem's size.
    a_ptrs = a_ptr + rm64[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn64[None, :] * stride_bn
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    m_in = rm[:, None] < M
    n_in = rn[None, :] < N
    p1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # the current fresh chain
    p2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # CHAIN_GROUP chains' sum
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # the running total
    for t in range(0, tl.cdiv(K, BLOCK_K)):
        k_in = rk < K - t * BLOCK_K
        a = tl.load(a_ptrs, mask=m_in & k_in[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_in[:, None] & n_in, other=0.0)
        p1 = tl.dot(a, b, p1, input_precision="ieee")
        if t % TILES_1 == TILES_1 - 1:
            p2 += p1
            p1 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            if t % TILES_2 == TILES_2 - 1:
                acc += p2
                p2 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        a_ptrs += a_step
        b_ptrs += b_step
    acc += p2 + p1  # the partial levels left by the K tail, smallest first
    c = c_ptr + rm64[:, None] * stride_cm + rn64[None, :]
    tl.store(c, acc, mask=m_in & n_in)


def kb1_8_matmul_with_irregular_shapes(A, B):
    m, k = A.shape
    n = B.shape[1]
    c = torch.empty((m, n), dtype=torch.float32, device=A.device)
    if m == 0 or n == 0:
        return c
    cfg = _config(m, n, k)
    tiles_1 = CHAIN // cfg["BLOCK_K"]
    grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
    _gemm_kernel[grid](
        c, A, B, m, n, k,
        A.stride(0), A.stride(1), B.stride(0), B.stride(1), c.stride(0),
        TILES_1=tiles_1, TILES_2=tiles_1 * CHAIN_GROUP,
        **cfg,
    )  # fmt: skip
    return c
