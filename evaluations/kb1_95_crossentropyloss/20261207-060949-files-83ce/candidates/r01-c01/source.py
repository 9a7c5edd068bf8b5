"""Cross entropy, mean: (1 / rows) * sum_r (log sum_c exp(x[r, c] - m_r) - (x[r, t_r] - m_r)),
m_r the row max (torch: log_softmax then nll_loss, both over x [rows, classes], t int64 [rows]).

Two kernels, deterministic (no atomics):
1. `_row_loss_kernel`: ROWS rows per program walk their classes BLOCK at a time keeping
   per-lane online statistics (running max m and sum s of exp(x - m), rescaled when m grows),
   merged across lanes at the end; the target's logit is one gathered load. Each row's loss
   -((x_t - M) - log S) is formed as torch's log_softmax and nll_loss form it (libdevice's
   log, as torch's logf) and written to a
   [rows] buffer. At the problem's 4096 classes a row is one block.
2. `_mean_kernel`: one program adds the row losses (BLOCK lanes, each in order, then a tree)
   and divides by rows.
Specials as torch: a NaN or +inf in a row makes its loss NaN (exp(inf - inf)); a row of -inf
only is NaN (log 0 - NaN); a target logit of -inf in a finite row gives +inf; any NaN row makes
the mean NaN. Lanes that have seen only -inf keep s = 0, so the rescale never forms
exp(-inf - -inf).

Traffic: x read once (537 MB at the problem's 32768 x 4096 fp32), the targets (256 KB) and the
row losses (128 KB) once each: memory-bound, against torch's log_softmax written (537 MB) and
read back by nll_loss. Any strides of x and of t are honoured (int64 row offsets).
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

_MAX_BLOCK = 4096  # classes per step: the problem's whole row
_TILE = 4096  # entries each program loads per step, at least
_MEAN_BLOCK = 1024  # lanes of the final mean


@triton.jit
def _row_loss_kernel(
    loss_ptr,  # *fp32, [rows]: each row's loss
    x_ptr,  # *fp32, [rows, classes], any strides
    t_ptr,  # *int64, [rows]: target classes
    n_rows,  # rows
    n_cols,  # classes
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between classes of x
    stride_t,  # elements between targets
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # classes per step
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rmask = rows < n_rows
    x_rows = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    offs = tl.arange(0, BLOCK)
    m = tl.full([ROWS, BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([ROWS, BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = (start + offs)[None, :]
        mask = rmask[:, None] & (cols < n_cols)
        x = tl.load(x_rows + cols * stride_xn, mask=mask, other=-float("inf"))
        m_new = tl.maximum(m, x)
        # A lane that has seen only -inf keeps s = 0 (rescaling by exp(-inf - -inf) is NaN).
        base = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - base) + tl.exp(x - base)
        m = m_new
    big = tl.max(m, axis=1)
    # Lanes of -inf only add nothing; a NaN or +inf lane carries s = NaN into the total.
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - big[:, None])), axis=1)
    tgt = tl.load(t_ptr + rows.to(tl.int64) * stride_t, mask=rmask, other=0)
    x_t = tl.load(x_ptr + rows.to(tl.int64) * stride_xm + tgt * stride_xn, mask=rmask, other=0.0)
    loss = -((x_t - big) - libdevice.log(total))
    tl.store(loss_ptr + rows, loss, mask=rmask)


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


def kb1_95_crossentropyloss(predictions, targets):
    n_rows, n_cols = predictions.shape
    dev = predictions.device
    out = torch.empty((), dtype=torch.float32, device=dev)
    loss = torch.empty((n_rows,), dtype=torch.float32, device=dev)
    block = min(_MAX_BLOCK, triton.next_power_of_2(n_cols))
    rows = max(1, min(64, _TILE // block))
    warps = max(4, min(16, rows * block // 512))
    _row_loss_kernel[(triton.cdiv(n_rows, rows),)](
        loss,
        predictions,
        targets,
        n_rows,
        n_cols,
        predictions.stride(0),
        predictions.stride(1),
        targets.stride(0),
        ROWS=rows,
        BLOCK=block,
        num_warps=warps,
    )
    _mean_kernel[(1,)](out, loss, n_rows, BLOCK=_MEAN_BLOCK, num_warps=4)
    return out
