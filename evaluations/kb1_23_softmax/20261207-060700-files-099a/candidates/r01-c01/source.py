"""Softmax over dim 1 of a [batch, dim] fp32 tensor, rows up to 393216 wide.

Three paths, picked by row length and count (all fp32, one rounding at the store):
- Rows that fit one block (<= 16384 columns): the row (or several short rows per program, so
  each program moves >= 16 KB) is loaded once into registers, max, exp, sum, scale, store.
  Traffic: x read once, y written once.
- Long rows, many of them (the problem's 4096 x 393216, 6.4 GB in, 6.4 GB out): one program per
  row. Pass 1 streams the row once, keeping per-lane online statistics (running max m and
  sum s of exp(x - m), rescaled when m grows), merged across lanes at the end. Pass 2 streams
  the row again and writes exp(x - M) / S, walking the row backwards: the chunks pass 1 read
  last are the ones most likely still in L2 (the H200's 50 MB split over the rows in flight),
  so part of the re-read costs no DRAM traffic. DRAM: <= 2 reads + 1 write = 19.3 GB; torch's
  kernel cannot keep such a row on chip either and reads it at least twice.
- Long rows, few of them (< 512 rows): the row is split over programs so the GPU fills:
  pass 1 writes each chunk's (max, sum), pass 2 merges the row's chunk stats, re-reads its
  chunk and writes.
Specials as torch: a NaN or +inf anywhere in a row makes the row NaN (exp(inf - inf)); a row
of -inf only is NaN (0/0); -inf entries of a finite row are 0. Lanes that have seen only -inf
keep s = 0, so the running rescale never forms exp(-inf - -inf).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

TUNE_SPACE = {"BLOCK": [2048, 4096, 8192], "num_warps": [4, 8, 16]}
DEFAULT_CONFIG = {"BLOCK": 4096, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}

_WHOLE = 16384  # longest row kept whole in registers
_FEW_ROWS = 512  # below this many long rows, split each row over programs
_CHUNK = 8192  # columns per program in the split-row path


@triton.jit
def _rows_kernel(
    y_ptr,  # *fp32, [rows, n_cols], contiguous
    x_ptr,  # *fp32, [rows, n_cols], any strides
    n_rows,  # rows
    n_cols,  # row length, <= BLOCK
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # power of two >= n_cols
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    at = x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn
    x = tl.load(at, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = num * (1.0 / tl.sum(num, axis=1))[:, None]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y, mask=mask)


@triton.jit
def _long_row_kernel(
    y_ptr,  # *fp32, [rows, n_cols], contiguous
    x_ptr,  # *fp32, [rows, n_cols], any strides
    n_cols,  # row length
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK: tl.constexpr,  # columns per step
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # A lane that has seen only -inf keeps s = 0 (rescaling by exp(-inf - -inf) is NaN).
        base = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - base) + tl.exp(x - base)
        m = m_new
    big = tl.max(m, axis=0)
    # Lanes of -inf only add nothing; a NaN or +inf lane carries s = NaN into the total,
    # even one whose max stayed -inf (max.f32 drops a NaN met by -inf: NaN among -infs).
    total = tl.sum(tl.where((m == -float("inf")) & (s == s), 0.0, s * tl.exp(m - big)), axis=0)
    # All of the row -inf: torch gives NaN throughout, and 0 * inf here gives it too.
    inv = tl.where(big == -float("inf"), float("nan"), 1.0 / total)
    n_steps = tl.cdiv(n_cols, BLOCK)
    for i in range(0, n_steps):
        # Backwards: the chunks read last in pass 1 are the likeliest still in L2.
        cols = (n_steps - 1 - i) * BLOCK + offs
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
        tl.store(y_row + cols, tl.exp(x - big) * inv, mask=mask)


@triton.jit
def _chunk_stats_kernel(
    stats_ptr,  # *fp32, [rows, n_chunks, 2]: the chunk's max, then its sum of exp(x - max)
    x_ptr,  # *fp32, [rows, n_cols], any strides
    n_cols,  # row length
    n_chunks,  # chunks per row
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    CHUNK: tl.constexpr,  # columns per program
):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    s = tl.sum(tl.where(x == -float("inf"), 0.0, tl.exp(x - m)), axis=0)
    at = stats_ptr + (row * n_chunks + chunk) * 2
    tl.store(at, m)
    tl.store(at + 1, s)


@triton.jit
def _chunk_write_kernel(
    y_ptr,  # *fp32, [rows, n_cols], contiguous
    x_ptr,  # *fp32, [rows, n_cols], any strides
    stats_ptr,  # *fp32, [rows, n_chunks, 2] from _chunk_stats_kernel
    n_cols,  # row length
    n_chunks,  # chunks per row
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    CHUNK: tl.constexpr,  # columns per program
    CHUNKS: tl.constexpr,  # power of two >= n_chunks
):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    k = tl.arange(0, CHUNKS)
    at = stats_ptr + (row * n_chunks + k) * 2
    ms = tl.load(at, mask=k < n_chunks, other=-float("inf"))
    ss = tl.load(at + 1, mask=k < n_chunks, other=0.0)
    big = tl.max(ms, axis=0)
    # A chunk of -inf only adds nothing; one whose sum is NaN (a NaN among -infs) keeps it.
    live = (ms > -float("inf")) | (ss != ss)
    total = tl.sum(tl.where(live, ss * tl.exp(ms - big), 0.0), axis=0)
    inv = tl.where(big == -float("inf"), float("nan"), 1.0 / total)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * stride_ym + cols, tl.exp(x - big) * inv, mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_23_softmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    sxm, sxn = x.stride(0), x.stride(1)
    if n_cols <= _WHOLE:
        block = triton.next_power_of_2(n_cols)
        rows = max(1, min(16, 4096 // block))
        warps = max(4, min(16, rows * block // 1024))
        _rows_kernel[(triton.cdiv(n_rows, rows),)](
            y, x, n_rows, n_cols, sxm, sxn, y.stride(0), ROWS=rows, BLOCK=block, num_warps=warps
        )
    elif n_rows >= _FEW_ROWS:
        _long_row_kernel[(n_rows,)](y, x, n_cols, sxm, sxn, y.stride(0), **_config(n_rows, n_cols))
    else:
        n_chunks = triton.cdiv(n_cols, _CHUNK)
        stats = torch.empty((n_rows, n_chunks, 2), dtype=torch.float32, device=x.device)
        grid = (n_rows, n_chunks)
        _chunk_stats_kernel[grid](stats, x, n_cols, n_chunks, sxm, sxn, CHUNK=_CHUNK, num_warps=8)
        _chunk_write_kernel[grid](
            y,
            x,
            stats,
            n_cols,
            n_chunks,
            sxm,
            sxn,
            y.stride(0),
            CHUNK=_CHUNK,
            CHUNKS=triton.next_power_of_2(n_chunks),
            num_warps=8,
        )
    return y
