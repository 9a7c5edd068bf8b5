"""HOLE 6 (coverage), GPU ONLY: a cross-program race that the CPU interpreter cannot show.

Each row is split over column blocks, grid (blocks, rows). Every program but a row's last writes
its block's partial max and sum to a workspace; the last one reads all the partials (first thing,
"to overlap the loads"), combines them and normalizes the whole row. Nothing orders the reads
after the writes: on a GPU the row's programs are dispatched one after another (blocks are grid
axis 0) and run at the same time, so the last one reads partials not yet written (NaN, in the
judge's poisoned workspace). The interpreter runs programs one by one, axis 0 outermost, so
every partial is written before any last block runs: right on CPU.

HEAD (c167456), `--device cpu`: ACCEPTED, and a CPU verdict cannot do better (programs run in
order there); the test runs it on CUDA only.
Fixed verifier, `--device cuda` (not run here: no GPU): rejected, "incorrect" or "stale"
(values on a multi-block row).
compute-sanitizer does not help: racecheck looks at shared memory only, and this race is in
global memory between programs.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_race_kernel(
    y_ptr, m_ptr, s_ptr, x_ptr, n_cols, n_blocks, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr, BLOCKS_POW2: tl.constexpr,
):
    blk = tl.program_id(0)
    row = tl.program_id(1).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    if blk == n_blocks - 1:
        b = tl.arange(0, BLOCKS_POW2)
        others = b < n_blocks - 1
        pm = tl.load(m_ptr + row * n_blocks + b, mask=others, other=-float("inf"))
        ps = tl.load(s_ptr + row * n_blocks + b, mask=others, other=0.0)
        cols = blk * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        x = x.to(tl.float32)
        m_own = tl.max(x, axis=0)
        m_row = tl.maximum(tl.max(pm, axis=0), m_own)
        s_row = tl.sum(tl.where(pm == -float("inf"), 0.0, ps * tl.exp(pm - m_row)), axis=0)
        s_row += tl.sum(tl.exp(x - m_row), axis=0)
        for start in range(0, n_cols, BLOCK):
            c = start + tl.arange(0, BLOCK)
            mask = c < n_cols
            xv = tl.load(x_row + c * stride_xn, mask=mask, other=-float("inf"))
            y = tl.exp(xv.to(tl.float32) - m_row) / s_row
            tl.store(y_ptr + row * stride_ym + c, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        cols = blk * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
        x = x.to(tl.float32)
        m = tl.max(x, axis=0)
        s = tl.where(m == -float("inf"), 0.0, tl.sum(tl.exp(x - m), axis=0))
        tl.store(m_ptr + row * n_blocks + blk, m)
        tl.store(s_ptr + row * n_blocks + blk, s)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    block = min(1024, triton.next_power_of_2(n_cols))
    n_blocks = triton.cdiv(n_cols, block)
    part_m = torch.empty((n_rows, n_blocks), dtype=torch.float32, device=x.device)
    part_s = torch.empty((n_rows, n_blocks), dtype=torch.float32, device=x.device)
    _softmax_race_kernel[(n_blocks, n_rows)](
        y, part_m, part_s, x2, n_cols, n_blocks, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=block, BLOCKS_POW2=triton.next_power_of_2(n_blocks),
    )
    return y.view(x.shape)
