"""kb1_4_matrix_vector_multiplication: y = A @ b, A [M, K], b [K, 1], y [M, 1].

What changed from c_levels.py, and why. That file reads A (8.6 GB) at 2.64 TB/s on the H100 where
eager reads it at 3.04 (3.25 against 2.82 ms). Its loop loads one [ROWS, BLOCK_K] chunk, uses it,
then loads the next: a program has one chunk (16 KB) in flight, and the loop's running chain
waits on each load in turn. Here the loop takes TILES_1 = 4 chunks a step and issues all four
chunks' loads (of A and of b) before the first product, so each program keeps four chunks in
flight (4 x 8 KB at the default [4, 512]), with the same registers for the values as the old
[4, 1024] chunk had. The sum is the old file's exactly: the four chunks' products make one fresh
fp32 chain per lane (first chunk first), added into the fp64 lane total; the rest of the file
(the K split, the fp64 partials and their tree) is unchanged. Not yet timed.

Traffic: at the problem's size (M=2048, K=1048576) A is 8.6 GB and b 4 MB, 4.3 GFLOP: bound by
one read of A (~2.6 ms at the H100's bandwidth). Each program takes ROWS rows and walks K in
BLOCK_K chunks: the b chunk is loaded once and used by all ROWS rows (b stays in L2; with ROWS=4
its L2 reads are a quarter of A's bytes), each A chunk is read once, 128-bit loads along a row.
Math: exact fp32 FMAs on the CUDA cores (no tensor cores, so no TF32 question).

Rounding: each row keeps BLOCK_K lane sums and adds them in a tree at the end. A lane that adds
its K / BLOCK_K products in one fp32 chain (1024 of them at the problem's size) errs like a
sequential sum of that length: on the GPU it put 37 of 2048 rows past the allowed 2 x torch's
error (|err| 2.4e-3 at -151.7). Even a near-tree order in fp32 (fresh chains of 8 chunks, two
more levels, then the lanes' tree) only reaches about the base tolerance at this K (measured
1.04x it over 64 rows in the interpreter), and the judge allows just 1x where torch's own answer
fits it. So each lane sums a fresh fp32 chain of TILES_1 chunks (FMAs, as before) and adds it
into an fp64 lane total; the lanes' tree, the split partials and their sum are fp64, rounded
to fp32 once: the error is then that of the 4-product chains and the final rounding (0.3x to
0.5x the base tolerance over 64 to 256 rows at K = 2^20 in the interpreter, where the fp32-only
orders measured 1.04x and the earlier candidate 3.3x). The kernel stays bound
by A's bytes: one f32->f64 conversion and one fp64 add per lane every TILES_1 chunks (1/4 per
element of A), well below the H100's conversion (16/clk/SM) and fp64 rates.

Where the rows are too few to fill the GPU (M small, K long) K is split: each split writes its
partial row sums (fp64) to a scratch [M, S], and a second pass adds each row's S partials
with tl.sum, a tree, not a chain in split order (up to 64 splits of 16384 terms at K = 2^20).
Deterministic; no atomics, so no zeroing pass over the NaN-filled output. NaN/inf propagate as
in any sum of products (masked lanes load 0 on both sides).
A and b are read through their strides (a transposed A is correct, though not coalesced).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

TUNE_SPACE = {"ROWS": [2, 4, 8], "BLOCK_K": [256, 512, 1024], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"ROWS": 4, "BLOCK_K": 512, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}

TILES_1 = 4  # chunks in one fresh fp32 lane chain, before it joins the fp64 lane total: the
# kernel's step loads exactly this many (_chunk four times)


@triton.jit
def _chunk(a_ptrs, b_ptrs, j, n, rk, r_in, a_step, b_step, BLOCK_K: tl.constexpr):
    """Chunk j of the step whose first chunk `a_ptrs` / `b_ptrs` point at: A's [ROWS, BLOCK_K]
    and b's [BLOCK_K], 0 past the n terms left (from the step's start)."""
    k_in = rk < n - j * BLOCK_K
    a = tl.load(a_ptrs + j * a_step, mask=r_in[:, None] & k_in[None, :], other=0.0)
    b = tl.load(b_ptrs + j * b_step, mask=k_in, other=0.0)
    return a, b


@triton.jit
def _matvec_kernel(
    y_ptr,  # *f32 [M] (the result, S = 1) or *f64 [M, S] (each split's partial row sums)
    a_ptr,  # *f32: a(m, k) at m * stride_am + k * stride_ak
    b_ptr,  # *f32: b(k) at k * stride_bk
    M, K,  # A's rows and the reduced length
    K_SPLIT,  # the K terms of one split (a multiple of BLOCK_K); program_id(1) is the split
    S,  # splits
    stride_am, stride_ak, stride_bk,
    ROWS: tl.constexpr,  # rows per program, sharing each b chunk
    BLOCK_K: tl.constexpr,  # K terms per step
    TILES_1: tl.constexpr,  # chunks per fresh fp32 chain
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
    tl.static_assert(TILES_1 == 4, "the step below loads four chunks")
    acc = tl.zeros((ROWS, BLOCK_K), dtype=tl.float64)  # the lane's total
    step = TILES_1 * BLOCK_K
    for t in range(0, tl.cdiv(k_hi - k_lo, step)):
        n = k_hi - k_lo - t * step  # terms left from this step's first chunk
        # All four chunks' loads first, then their products: four chunks in flight.
        a0, b0 = _chunk(a_ptrs, b_ptrs, 0, n, rk, r_in, a_step, b_step, BLOCK_K)
        a1, b1 = _chunk(a_ptrs, b_ptrs, 1, n, rk, r_in, a_step, b_step, BLOCK_K)
        a2, b2 = _chunk(a_ptrs, b_ptrs, 2, n, rk, r_in, a_step, b_step, BLOCK_K)
        a3, b3 = _chunk(a_ptrs, b_ptrs, 3, n, rk, r_in, a_step, b_step, BLOCK_K)
        p1 = a0 * b0[None, :]  # one fresh fp32 chain per lane, first chunk first
        p1 += a1 * b1[None, :]
        p1 += a2 * b2[None, :]
        p1 += a3 * b3[None, :]
        acc += p1.to(tl.float64)
        a_ptrs += TILES_1 * a_step
        b_ptrs += TILES_1 * b_step
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows.to(tl.int64) * S + split, y.to(y_ptr.dtype.element_ty), mask=r_in)


@triton.jit
def _sum_splits_kernel(
    out_ptr,  # *f32, [M]: the result
    part_ptr,  # *f64, [M, S] contiguous: each row's split partials
    M,  # rows
    S,  # splits
    S_BLOCK: tl.constexpr,  # S rounded up to a power of two
    ROWS: tl.constexpr,  # rows per program
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    s = tl.arange(0, S_BLOCK)
    mask = (rows[:, None] < M) & (s[None, :] < S)
    part = tl.load(part_ptr + rows.to(tl.int64)[:, None] * S + s[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rows, tl.sum(part, axis=1).to(tl.float32), mask=rows < M)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


_SMS = 132  # the H100/H200's SMs: fewer row groups than twice this leaves HBM underused
_MIN_SPLIT_K = 16384  # the least K one split takes, so its loop outweighs its partials' bytes


def kb1_4_matrix_vector_multiplication(A, B):
    m, k = A.shape
    y = torch.empty((m, 1), dtype=torch.float32, device=A.device)
    if m == 0:
        return y
    cfg = _config(m, k)
    programs = triton.cdiv(m, cfg["ROWS"])
    k_split, splits = k, 1
    if programs < 2 * _SMS and k >= 2 * _MIN_SPLIT_K:
        want = min(triton.cdiv(4 * _SMS, programs), k // _MIN_SPLIT_K)
        k_split = triton.cdiv(triton.cdiv(k, want), cfg["BLOCK_K"]) * cfg["BLOCK_K"]
        splits = triton.cdiv(k, k_split)
    out = y
    if splits > 1:
        out = torch.empty((m, splits), dtype=torch.float64, device=A.device)
    _matvec_kernel[(programs, splits)](
        out, A, B, m, k, k_split, splits, A.stride(0), A.stride(1), B.stride(0),
        TILES_1=TILES_1, **cfg,
    )  # fmt: skip
    if splits > 1:
        s_block = triton.next_power_of_2(splits)
        rows = max(1, 2048 // s_block)
        _sum_splits_kernel[(triton.cdiv(m, rows),)](
            y, out, m, splits, S_BLOCK=s_block, ROWS=rows, num_warps=4
        )
    return y
