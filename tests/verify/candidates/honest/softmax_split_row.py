"""Honest softmax that splits each row over several programs, in two kernels.

Kernel 1, grid (rows, column blocks): each program reduces its block to a partial max and a sum of
exp(x - partial max), written to fp32 workspaces. Kernel 2, same grid: each program combines the
row's partials (max of maxima, sums rescaled to it) and normalizes its own block. The launch
boundary between the two kernels is the only synchronization: no program reads a partial another
program of the same launch writes.

NaN semantics follow torch.softmax: a row holding a NaN or a +inf is NaN throughout (inf - inf),
a row that is all -inf is NaN throughout (-inf - -inf, then 0 / 0).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: accepted (102 s). Must stay accepted.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _partials_kernel(
    m_ptr, s_ptr,  # *fp32, [rows, n_blocks]: partial max and partial sum per block
    x_ptr, n_cols, n_blocks, stride_xm, stride_xn,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
    x = x.to(tl.float32)
    m = tl.max(x, axis=0)
    # A block that is all -inf contributes nothing (and must not make exp(-inf - -inf) = NaN).
    s = tl.where(m == -float("inf"), 0.0, tl.sum(tl.exp(x - m), axis=0))
    tl.store(m_ptr + row * n_blocks + blk, m)
    tl.store(s_ptr + row * n_blocks + blk, s)


@triton.jit
def _normalize_kernel(
    y_ptr, m_ptr, s_ptr,
    x_ptr, n_cols, n_blocks, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr, BLOCKS_POW2: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    b = tl.arange(0, BLOCKS_POW2)
    bmask = b < n_blocks
    pm = tl.load(m_ptr + row * n_blocks + b, mask=bmask, other=-float("inf"))
    ps = tl.load(s_ptr + row * n_blocks + b, mask=bmask, other=0.0)
    m_row = tl.max(pm, axis=0)
    # Blocks whose max is -inf add nothing. A row that is all -inf gets s_row = 0 and normalizes
    # to exp(-inf - -inf) / 0 = NaN, as torch does.
    s_row = tl.sum(tl.where(pm == -float("inf"), 0.0, ps * tl.exp(pm - m_row)), axis=0)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    y = tl.exp(x.to(tl.float32) - m_row) / s_row
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


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
    grid = (n_rows, n_blocks)
    _partials_kernel[grid](
        part_m, part_s,
        x2, n_cols, n_blocks, x2.stride(0), x2.stride(1),
        BLOCK=block,
    )
    _normalize_kernel[grid](
        y, part_m, part_s,
        x2, n_cols, n_blocks, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=block, BLOCKS_POW2=triton.next_power_of_2(n_blocks),
    )
    return y.view(x.shape)
