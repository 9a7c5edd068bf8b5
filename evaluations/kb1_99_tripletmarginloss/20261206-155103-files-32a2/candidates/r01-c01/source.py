"""Triplet margin loss (margin 1, p = 2, eps 1e-6, mean): over a, p, n [rows, d],
loss = mean_r max(1 + ||a_r - p_r + eps|| - ||a_r - n_r + eps||, 0)
(torch: pairwise_distance adds eps to the difference before the norm, then clamp_min).

Two kernels, deterministic (no atomics):
1. `_row_loss_kernel`: ROWS rows per program walk their d columns BLOCK at a time, loading
   the three rows' tiles once and adding (a - p + eps)^2 and (a - n + eps)^2 into two fp32
   lane accumulators (each lane adds d / BLOCK terms in order, then a tree over the lanes);
   the square roots, the margin and the clamp follow, and the row's loss goes to a [rows]
   buffer. The clamp keeps NaN as torch's clamp_min does (NaN < 0 is false).
2. `_mean_kernel`: one program adds the row losses (BLOCK lanes, each in order, then a tree)
   and divides by rows.
The terms are formed as torch forms them ((a - p) + eps, squared; margin + d_pos - d_neg), so
an inf in a row gives inf distances and inf - inf = NaN where torch's does.

Traffic: a, p, n read once (1.07 GB each at the problem's 32768 x 8192 fp32), the row losses
(128 KB) once: memory-bound, one pass, against torch's two differences written and read back
by the norms. Any strides of the three inputs are honoured (int64 row offsets).
"""

import torch
import triton
import triton.language as tl

_MAX_BLOCK = 2048  # columns per step
_TILE = 2048  # entries each program loads per input per step, at least
_MEAN_BLOCK = 1024  # lanes of the final mean


@triton.jit
def _row_loss_kernel(
    loss_ptr,  # *fp32, [rows]: each row's loss
    a_ptr,  # *fp32, [rows, d] anchors, any strides
    p_ptr,  # *fp32, [rows, d] positives, any strides
    n_ptr,  # *fp32, [rows, d] negatives, any strides
    n_rows,  # rows
    n_cols,  # d
    stride_am,  # elements between rows of a
    stride_an,  # elements between columns of a
    stride_pm,  # elements between rows of p
    stride_pn,  # elements between columns of p
    stride_nm,  # elements between rows of n
    stride_nn,  # elements between columns of n
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # columns per step
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    r64 = rows.to(tl.int64)[:, None]  # a row offset can pass 2^31 elements
    a_rows = a_ptr + r64 * stride_am
    p_rows = p_ptr + r64 * stride_pm
    n_rows_ptr = n_ptr + r64 * stride_nm
    offs = tl.arange(0, BLOCK)
    acc_pos = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    acc_neg = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = (start + offs)[None, :]
        mask = rmask[:, None] & (cols < n_cols)
        a = tl.load(a_rows + cols * stride_an, mask=mask, other=0.0)
        p = tl.load(p_rows + cols * stride_pn, mask=mask, other=0.0)
        n = tl.load(n_rows_ptr + cols * stride_nn, mask=mask, other=0.0)
        dp = (a - p) + 1e-6
        dn = (a - n) + 1e-6
        # Masked lanes would add eps^2: select them away.
        acc_pos += tl.where(mask, dp * dp, 0.0)
        acc_neg += tl.where(mask, dn * dn, 0.0)
    d_pos = tl.sqrt_rn(tl.sum(acc_pos, axis=1))
    d_neg = tl.sqrt_rn(tl.sum(acc_neg, axis=1))
    v = (1.0 + d_pos) - d_neg
    tl.store(loss_ptr + rows, tl.where(v < 0.0, 0.0, v), mask=rmask)


@triton.jit
def _mean_kernel(
    out_ptr,  # *fp32, 0-d result
    loss_ptr,  # *fp32, [n]
    n,  # values to average
    BLOCK: tl.constexpr,  # lanes
):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + offs
        acc += tl.load(loss_ptr + idx, mask=idx < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


def kb1_99_tripletmarginloss(anchor, positive, negative):
    n_rows, n_cols = anchor.shape
    dev = anchor.device
    out = torch.empty((), dtype=torch.float32, device=dev)
    loss = torch.empty((n_rows,), dtype=torch.float32, device=dev)
    block = min(_MAX_BLOCK, triton.next_power_of_2(n_cols))
    rows = max(1, min(64, _TILE // block))
    _row_loss_kernel[(triton.cdiv(n_rows, rows),)](
        loss,
        anchor,
        positive,
        negative,
        n_rows,
        n_cols,
        anchor.stride(0),
        anchor.stride(1),
        positive.stride(0),
        positive.stride(1),
        negative.stride(0),
        negative.stride(1),
        ROWS=rows,
        BLOCK=block,
        num_warps=8,
    )
    _mean_kernel[(1,)](out, loss, n_rows, BLOCK=_MEAN_BLOCK, num_warps=4)
    return out
