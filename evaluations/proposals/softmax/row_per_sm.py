"""Softmax over the last dimension, four strategies picked by row length and row count.

Changed from the shipped kernel (evaluations/softmax/20261204-144946-agent-b8b6/r01-c01): long
rows (> 32768 columns) with at least one row per SM no longer take the split-row pair of
kernels. There, at 256x151936 bf16, pass 1 reads all of x (78 MB) before pass 2 starts, so
pass 2's re-read comes from HBM, not L2 (78 MB is more than the 60 MB L2): 233 MB moved where
softmax needs 156 MB (read x, write y), and the shipped kernel ran at 72.5 us, 50% of the
4.27 TB/s copy ceiling. The new path is one persistent program per SM (grid = SMs, 16 warps,
rows strided over the grid), each doing its row in two passes:

- pass 1 streams the row once from HBM in 32 KB tiles, the next tile's load issued before the
  current one is reduced (64 KB in flight per SM, which one program per SM needs to cover HBM
  latency), and keeps an online max and sum of exp per group of 8 (fp32: 4) adjacent columns,
  so the running max is an in-thread max (no shuffles or barriers per tile) and pass 1 costs
  1 + 1/8 exp per element, not the 2 an element-wise online softmax costs;
- the groups' statistics are combined once per row (one block reduction);
- pass 2 walks the row back to front (the tiles pass 1 read last are re-read first) and writes
  exp(x - M) / S with streaming stores (.cs, evict-first), so the row's written lines do not push
  its unread lines out of L2.

Between pass 1's read of a line and pass 2's re-read, the other SMs read at most one row each:
132 x 300 KB = 40 MB, within the L2, so x should come from HBM once: 156 MB per call at
256x151936 (36.4 us at the copy ceiling; the aim is >= 90% of it, ~40 us), 132 MB at
256x129280. Pass 2's L2 reads and the exps (2.1 per element, ~20 us of SFU time spread over
the GPU at 256x151936) overlap the HBM stream. What it gives up: 256 rows over 132 programs is
two row-times for 1.94 rows of work (3% idle), and between one and two rows per SM (133..263
rows) the second wave is partly empty; below one row per SM the split-row pair stays, as it
fills the GPU at 1 and 16 rows. Short and medium rows are the shipped kernel's, unchanged.

Exactness as before: fp32 math, exp(x - M) / S with the row's true max, one rounding at the
store; -inf columns add nothing, an all -inf row is NaN throughout (0/0), and NaN or +inf in a
row reaches every output through S (the GPU's max.f32 drops NaN from the running max, so NaN is
carried by the sum, never by the max).
"""

import torch
import triton
import triton.language as tl

_CHUNK = 8192  # columns per program in the split-row path


@triton.jit
def _softmax_rows_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    n_rows,
    n_cols,
    stride_xm,
    stride_xn,
    stride_ym,
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # power of two >= n_cols
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(
        x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
        mask=mask,
        other=-float("inf"),
    ).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = num / tl.sum(num, axis=1)[:, None]
    tl.store(
        y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask
    )


@triton.jit
def _chunk_stats_kernel(
    stats_ptr,  # *fp32, [rows, n_chunks, 2]: the chunk's max, then its sum of exp(x - max)
    x_ptr,
    n_cols,
    n_chunks,
    stride_xm,
    stride_xn,
    CHUNK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(
        x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n_cols, other=-float("inf")
    ).to(tl.float32)
    m = tl.max(x, axis=0)
    # A chunk of -inf only (masked scores) adds nothing; exp(-inf - -inf) would be NaN. NaN and
    # +inf still give NaN, as torch does.
    s = tl.sum(tl.where(x == -float("inf"), 0.0, tl.exp(x - m)), axis=0)
    at = stats_ptr + (row * n_chunks + chunk) * 2
    tl.store(at, m)
    tl.store(at + 1, s)


@triton.jit
def _chunk_write_kernel(
    y_ptr,
    x_ptr,
    stats_ptr,
    n_cols,
    n_chunks,
    stride_xm,
    stride_xn,
    stride_ym,
    CHUNK: tl.constexpr,
    CHUNKS: tl.constexpr,  # power of two >= n_chunks
):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    k = tl.arange(0, CHUNKS)
    at = stats_ptr + (row * n_chunks + k) * 2
    ms = tl.load(at, mask=k < n_chunks, other=-float("inf"))
    ss = tl.load(at + 1, mask=k < n_chunks, other=0.0)
    m = tl.max(ms, axis=0)
    s = tl.sum(tl.where(ms == -float("inf"), 0.0, ss * tl.exp(ms - m)), axis=0)
    # All of the row -inf: torch gives NaN throughout, and so does 0/0 here.
    s = tl.where(m == -float("inf"), float("nan"), s)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    y = tl.exp(x.to(tl.float32) - m) / s
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _row_loop_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    n_rows,
    n_cols,
    stride_xm,
    stride_xn,
    stride_ym,
    TILE: tl.constexpr,  # columns a loop step
    VEC: tl.constexpr,  # adjacent columns a group (16 bytes): the online max is per group
):
    G: tl.constexpr = TILE // VEC
    lanes = tl.arange(0, G)[:, None] * VEC + tl.arange(0, VEC)[None, :]
    flat = tl.arange(0, TILE)
    n_tiles = tl.cdiv(n_cols, TILE)
    # An int64 row: 14200 rows of 151936 columns pass 2^31 elements.
    for row in range(tl.program_id(0).to(tl.int64), n_rows, tl.num_programs(0)):
        x_row = x_ptr + row * stride_xm
        y_row = y_ptr + row * stride_ym
        # Pass 1 (HBM): per-group running max m and sum s of exp(x - m). The next tile's load is
        # issued before this one is reduced: one program per SM keeps two tiles in flight.
        m = tl.full([G], -float("inf"), tl.float32)
        s = tl.zeros([G], tl.float32)
        nxt = tl.load(
            x_row + lanes * stride_xn,
            mask=lanes < n_cols,
            other=-float("inf"),
            eviction_policy="evict_last",
        )
        for t in range(0, n_tiles):
            x = nxt.to(tl.float32)
            cols = (t + 1) * TILE + lanes
            nxt = tl.load(
                x_row + cols * stride_xn,
                mask=cols < n_cols,
                other=-float("inf"),
                eviction_policy="evict_last",
            )
            m_new = tl.maximum(m, tl.max(x, axis=1))
            # exp(-inf - -inf) is NaN: a group of -inf only so far has s = 0 and keeps it. A +inf
            # makes m_new - m NaN or x - m_new NaN, and the NaN stays in s, as torch's row is NaN.
            alpha = tl.where(m == -float("inf"), 0.0, tl.exp(m - m_new))
            p = tl.where(x == -float("inf"), 0.0, tl.exp(x - m_new[:, None]))
            s = s * alpha + tl.sum(p, axis=1)
            m = m_new
        big = tl.max(m, axis=0)
        total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - big)), axis=0)
        # All of the row -inf: torch gives NaN throughout, and so does 0/0 here.
        total = tl.where(big == -float("inf"), float("nan"), total)
        # Pass 2 (L2): back to front, so the tiles pass 1 read last are re-read first; streaming
        # stores, so y's lines are the first the L2 lets go, not x's unread ones.
        last = (n_tiles - 1) * TILE
        nxt = tl.load(x_row + (last + flat) * stride_xn, mask=last + flat < n_cols, other=0.0)
        for i in range(0, n_tiles):
            start = (n_tiles - 1 - i) * TILE
            x = nxt.to(tl.float32)
            prev = start - TILE + flat
            nxt = tl.load(
                x_row + prev * stride_xn,
                mask=(prev >= 0) & (prev < n_cols),
                other=0.0,
                eviction_policy="evict_first",
            )
            y = tl.exp(x - big) / total
            cols = start + flat
            tl.store(
                y_row + cols,
                y.to(y_ptr.dtype.element_ty),
                mask=cols < n_cols,
                cache_modifier=".cs",
            )


def _warps(block: int) -> int:
    # ~32 fp32 values per thread at most, 4..16 warps
    return max(4, min(16, block // (32 * 32)))


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    block = triton.next_power_of_2(n_cols)
    if block <= 2048:
        rows = max(1, min(16, 4096 // block))
        _softmax_rows_kernel[(triton.cdiv(n_rows, rows),)](
            y,
            x2,
            n_rows,
            n_cols,
            x2.stride(0),
            x2.stride(1),
            y.stride(0),
            ROWS=rows,
            BLOCK=block,
            num_warps=4 if rows * block <= 2048 else 8,
        )
    elif block <= 32768:
        _softmax_rows_kernel[(n_rows,)](
            y,
            x2,
            n_rows,
            n_cols,
            x2.stride(0),
            x2.stride(1),
            y.stride(0),
            ROWS=1,
            BLOCK=block,
            num_warps=_warps(block),
        )
    else:
        # Long rows: one program per SM looping over rows where there is a row per SM at least,
        # else split-row, which fills the GPU with a few rows.
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        if n_rows >= sms:
            vec = 16 // x.element_size()  # 16-byte groups: 8 columns in 16 bits, 4 in fp32
            _row_loop_kernel[(sms,)](
                y,
                x2,
                n_rows,
                n_cols,
                x2.stride(0),
                x2.stride(1),
                y.stride(0),
                TILE=2048 * vec,
                VEC=vec,
                num_warps=16,
            )
            return y.view(x.shape)
        n_chunks = triton.cdiv(n_cols, _CHUNK)
        stats = torch.empty((n_rows, n_chunks, 2), dtype=torch.float32, device=x.device)
        grid = (n_rows, n_chunks)
        _chunk_stats_kernel[grid](
            stats, x2, n_cols, n_chunks, x2.stride(0), x2.stride(1), CHUNK=_CHUNK, num_warps=8
        )
        _chunk_write_kernel[grid](
            y,
            x2,
            stats,
            n_cols,
            n_chunks,
            x2.stride(0),
            x2.stride(1),
            y.stride(0),
            CHUNK=_CHUNK,
            CHUNKS=triton.next_power_of_2(n_chunks),
            num_warps=8,
        )
    return y.view(x.shape)
