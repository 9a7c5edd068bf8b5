"""kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp: no GEMM.

sum_j (x @ W^T + b)[:, j], then max, mean and two logsumexps over one element each.

After the sum over the output features the row is one element, and max, mean and
logsumexp of one element v are v itself (torch's logsumexp of a lone +-inf is that inf: it
zeroes an infinite max before exp; NaN stays NaN). So out[b] = x[b] . sum_j W[j] + sum_j b[j].

So the [M, N] GEMM is never formed: w's column sums (one read of w, N*K*4 bytes) and then one
dot product per row of x (one read of x) give the same sums in another order. At the problem's
size that is N*K*4 + M*K*4 = 302 MB of memory traffic
against torch's 2*M*N*K = 137 GFLOP GEMM flops: a few hundred microseconds where the GEMM takes
milliseconds. Every sum is fp32; the reordering
changes only rounding, of the size the GEMM-then-sum order has (both add the same M*N*K
products in fp32).

Infinities in x are kept exact: torch's x_k = inf makes every z_j = +-inf by the sign of w[j, k]
and their sum NaN unless all of w's column k has one sign (a 0 in it gives inf * 0 = NaN). The
column sums come with that fact (all > 0 or all < 0), and an infinite x_k meeting a column of
mixed signs gives NaN, as torch's sum does; infinities of opposite signs across k then meet as
+inf + -inf = NaN in both orders.
"""


import torch
import triton
import triton.language as tl

# Programs the column-sum pass aims for: two per SM of an H200 (132), so reading w is not
# limited by too few programs when K alone gives few column blocks.
PROGRAMS = 264
COL_BLOCK = 128  # w columns per column-sum program: 512 bytes of each row, coalesced
ROW_BLOCK = 32  # w rows per step of a column-sum program
ROWS_PER_PROGRAM = 4  # rows of x per dot-product program
K_BLOCK = 1024  # x columns per step of a dot-product program


@triton.jit
def _colsum_partial_kernel(
    part_ptr,  # *f32, [3, CHUNKS, K]: per chunk of rows, the column sums, minima and maxima
    w_ptr,  # *f32, [N, K], any strides
    N, K, CHUNK_ROWS, CHUNKS,  # CHUNK_ROWS: w rows per chunk, a multiple of ROW_BLOCK
    stride_wn, stride_wk,
    ROW_BLOCK: tl.constexpr, COL_BLOCK: tl.constexpr,
):  # fmt: skip
    cols = tl.program_id(0) * COL_BLOCK + tl.arange(0, COL_BLOCK)
    chunk = tl.program_id(1)
    col_in = cols < K
    acc = tl.zeros((ROW_BLOCK, COL_BLOCK), dtype=tl.float32)
    lo = tl.full((ROW_BLOCK, COL_BLOCK), float("inf"), dtype=tl.float32)
    hi = tl.full((ROW_BLOCK, COL_BLOCK), -float("inf"), dtype=tl.float32)
    row0 = chunk * CHUNK_ROWS
    row_end = tl.minimum(row0 + CHUNK_ROWS, N)
    for r in range(row0, row_end, ROW_BLOCK):
        rows = r + tl.arange(0, ROW_BLOCK)
        mask = (rows[:, None] < row_end) & col_in[None, :]
        w_rows = w_ptr + rows.to(tl.int64)[:, None] * stride_wn
        w = tl.load(w_rows + cols.to(tl.int64)[None, :] * stride_wk, mask=mask, other=0.0)
        acc += w
        lo = tl.where(mask, tl.minimum(lo, w), lo)
        hi = tl.where(mask, tl.maximum(hi, w), hi)
    out = part_ptr + chunk * K + cols
    tl.store(out, tl.sum(acc, axis=0), mask=col_in)
    tl.store(out + CHUNKS * K, tl.min(lo, axis=0), mask=col_in)
    tl.store(out + 2 * CHUNKS * K, tl.max(hi, axis=0), mask=col_in)


@triton.jit
def _colsum_final_kernel(
    wsum_ptr,  # *f32, [2, K]: the column sums of w, then 1.0 where a column has one sign, else 0.0
    part_ptr,  # *f32, [3, CHUNKS, K], from _colsum_partial_kernel
    K, CHUNKS,
    COL_BLOCK: tl.constexpr,
):  # fmt: skip
    cols = tl.program_id(0) * COL_BLOCK + tl.arange(0, COL_BLOCK)
    col_in = cols < K
    total = tl.zeros((COL_BLOCK,), dtype=tl.float32)
    lo = tl.full((COL_BLOCK,), float("inf"), dtype=tl.float32)
    hi = tl.full((COL_BLOCK,), -float("inf"), dtype=tl.float32)
    for c in range(0, CHUNKS):
        p = part_ptr + c * K + cols
        total += tl.load(p, mask=col_in, other=0.0)
        lo = tl.minimum(lo, tl.load(p + CHUNKS * K, mask=col_in, other=1.0))
        hi = tl.maximum(hi, tl.load(p + 2 * CHUNKS * K, mask=col_in, other=1.0))
    one_sign = (lo > 0.0) | (hi < 0.0)
    tl.store(wsum_ptr + cols, total, mask=col_in)
    tl.store(wsum_ptr + K + cols, tl.where(one_sign, 1.0, 0.0), mask=col_in)


@triton.jit
def _bias_sum_kernel(
    s_ptr,  # *f32, [1]: sum_j (b[j] - c[j])
    b_ptr,  # *f32, [N], contiguous
    c_ptr,  # *f32, [N], contiguous (read only when HAS_C)
    N,
    HAS_C: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        offs = n0 + tl.arange(0, BLOCK)
        v = tl.load(b_ptr + offs, mask=offs < N, other=0.0)
        if HAS_C:
            v = v - tl.load(c_ptr + offs, mask=offs < N, other=0.0)
        acc += v
    tl.store(s_ptr, tl.sum(acc, axis=0))



@triton.jit
def _row_dot_kernel(
    y_ptr,  # *f32, [M]: the result (a [M, 1] tensor)
    s_ptr,  # *f32, [1]: the bias sum
    x_ptr,  # *f32, [M, K], any strides
    wsum_ptr,  # *f32, [2, K], from _colsum_final_kernel
    M, K,
    stride_xm, stride_xk,
    ROWS: tl.constexpr, K_BLOCK: tl.constexpr,
):  # fmt: skip
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_in = rows < M
    x_rows = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    acc = tl.zeros((ROWS, K_BLOCK), dtype=tl.float32)
    for k0 in range(0, K, K_BLOCK):
        ks = k0 + tl.arange(0, K_BLOCK)
        k_in = ks < K
        xmask = row_in[:, None] & k_in[None, :]
        xv = tl.load(x_rows + ks.to(tl.int64)[None, :] * stride_xk, mask=xmask, other=0.0)
        ws = tl.load(wsum_ptr + ks, mask=k_in, other=0.0)
        one_sign = tl.load(wsum_ptr + K + ks, mask=k_in, other=1.0)
        t = xv * ws[None, :]
        # torch's sum of +-inf over a column of mixed signs (or holding a 0) is NaN
        t = tl.where((tl.abs(xv) == float("inf")) & (one_sign[None, :] == 0.0), float("nan"), t)
        acc += t
    dot = tl.sum(acc, axis=1)  # x[row] . colsum(w)
    tl.store(y_ptr + rows, dot + tl.load(s_ptr), mask=row_in)


def _column_sums(w: torch.Tensor) -> torch.Tensor:
    """[2, K]: w's column sums and whether each column has one sign, in two launches."""
    n, k = w.shape
    col_blocks = triton.cdiv(k, COL_BLOCK)
    chunks = max(1, min(triton.cdiv(n, 8 * ROW_BLOCK), triton.cdiv(PROGRAMS, col_blocks)))
    chunk_rows = triton.cdiv(triton.cdiv(n, chunks), ROW_BLOCK) * ROW_BLOCK
    chunks = triton.cdiv(n, chunk_rows)
    part = torch.empty((3, chunks, k), dtype=torch.float32, device=w.device)
    _colsum_partial_kernel[(col_blocks, chunks)](
        part, w, n, k, chunk_rows, chunks, w.stride(0), w.stride(1),
        ROW_BLOCK=ROW_BLOCK, COL_BLOCK=COL_BLOCK, num_warps=8,
    )  # fmt: skip
    wsum = torch.empty((2, k), dtype=torch.float32, device=w.device)
    _colsum_final_kernel[(col_blocks,)](wsum, part, k, chunks, COL_BLOCK=COL_BLOCK, num_warps=4)
    return wsum


def kb2_18_matmul_sum_max_avgpool_logsumexp_logsumexp(x, linear_weight, linear_bias):
    m, k = x.shape
    n = linear_weight.shape[0]
    y = torch.empty((m, 1), dtype=torch.float32, device=x.device)
    if m == 0:
        return y
    b = linear_bias.contiguous()
    s = torch.empty((1,), dtype=torch.float32, device=x.device)
    _bias_sum_kernel[(1,)](s, b, b, n, HAS_C=False, BLOCK=1024, num_warps=4)
    wsum = _column_sums(linear_weight)
    _row_dot_kernel[(triton.cdiv(m, ROWS_PER_PROGRAM),)](
        y, s, x, wsum, m, k, x.stride(0), x.stride(1),
        ROWS=ROWS_PER_PROGRAM, K_BLOCK=K_BLOCK, num_warps=4,
    )  # fmt: skip
    return y
