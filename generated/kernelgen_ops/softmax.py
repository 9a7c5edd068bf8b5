# kernelgen_ops.softmax: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/softmax.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/softmax/20261204-144946-agent-b8b6/candidates/r01-c01/source.py
# record    evaluations/softmax/20261204-144946-agent-b8b6/candidates/r01-c01/record.json
# proposer  agent (model kernelgen-session (written by hand, as an agent), round 1, parent seed)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 1.21x geomean over 9 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record, or eager, torch.compile, Liger or FlagGems in
#           evaluations/library/bench-20261204T151615Z.json
#           4096x4096 bfloat16: 0.99x vs Liger (library bench)
#           32768x1024 bfloat16: 0.95x vs torch.compile
#           1024x32768 bfloat16: 0.95x vs Liger (library bench)
#           256x151936 bfloat16: 1.30x vs eager
#           1x32000 bfloat16: 0.95x vs Liger (library bench)
#           16x151936 bfloat16: 2.47x vs torch.compile
#           16x32000 bfloat16: 0.95x vs Liger (library bench)
#           1x151936 bfloat16: 2.28x vs torch.compile
#           64x32000 bfloat16: 0.94x vs Liger (library bench)
# speedups  geomean 2.53x vs eager, 1.79x vs torch.compile, - vs seed
# peers     eager = references/softmax.py:softmax, which is how torch users compute it;
#           torch.compile of the same
#           4096x4096 bfloat16: 18.5 us, 2.96x eager, 2.25x compile, - seed
#           32768x1024 bfloat16: 36.0 us, 1.55x eager, 0.95x compile, - seed
#           1024x32768 bfloat16: 49.8 us, 1.35x eager, 1.45x compile, - seed
#           256x151936 bfloat16: 72.5 us, 1.30x eager, 2.09x compile, - seed
#           1x32000 bfloat16: 5.5 us, 2.36x eager, 1.76x compile, - seed
#           16x151936 bfloat16: 8.2 us, 4.93x eager, 2.47x compile, - seed
#           16x32000 bfloat16: 5.8 us, 2.31x eager, 1.65x compile, - seed
#           1x151936 bfloat16: 5.1 us, 7.76x eager, 2.28x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           4096x4096, 32768x1024, 1024x32768, 256x151936, 1x32000, 16x151936, 16x32000, 1x151936;
#           torch's op at no shape
# sha256    107e522e46c67d1a9ee8c2c18d6b69f70a3a55e1e78e883f615df98a77ae17e1
# promoted  2026-12-04T14:55:51+00:00
# note      this source was first judged as agent run 20261201-134417-agent-ba32/r01-c01; run
#           20261204-144946-agent-b8b6 judged and measured it again unchanged, and its figures are
#           the ones here
#
# ruff: noqa
# fmt: off
"""Softmax over the last dimension, three strategies picked by row length.

- Short rows (<= 2048 columns): a [ROWS, BLOCK] tile per program, several rows each, so a
  program moves enough bytes to hide memory latency and the grid stays a few waves deep.
- Medium rows (<= 32768): one row per program, the whole row in registers; the warps grow with
  the row so no thread holds more than ~32 fp32 values (no spills).
- Long rows: split-row. Pass 1 gives each (row, chunk) program its chunk's max and sum of
  exp(x - max); pass 2 combines the row's chunk statistics, re-reads its chunk (from L2 at
  these sizes) and writes exp(x - M) / S. Rows x chunks fill the GPU even for one row.
Math in fp32; one rounding at the store.
"""

import torch
import triton
import triton.language as tl

from . import _runtime

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
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


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
            y, x2, n_rows, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            ROWS=rows, BLOCK=block, num_warps=4 if rows * block <= 2048 else 8,
        )
    elif block <= 32768:
        _softmax_rows_kernel[(n_rows,)](
            y, x2, n_rows, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            ROWS=1, BLOCK=block, num_warps=_warps(block),
        )
    else:
        n_chunks = triton.cdiv(n_cols, _CHUNK)
        stats = torch.empty((n_rows, n_chunks, 2), dtype=torch.float32, device=x.device)
        grid = (n_rows, n_chunks)
        _chunk_stats_kernel[grid](
            stats, x2, n_cols, n_chunks, x2.stride(0), x2.stride(1), CHUNK=_CHUNK, num_warps=8
        )
        _chunk_write_kernel[grid](
            y, x2, stats, n_cols, n_chunks, x2.stride(0), x2.stride(1), y.stride(0),
            CHUNK=_CHUNK, CHUNKS=triton.next_power_of_2(n_chunks), num_warps=8,
        )
    return y.view(x.shape)


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
