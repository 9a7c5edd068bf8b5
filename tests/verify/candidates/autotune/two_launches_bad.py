"""CHEAT (autotune sweep): softmax in two launches of one autotuned kernel, PASS 0 writing each
row's max and sum of exponentials to a scratch buffer, PASS 1 normalizing. Four configs; the
third (BLOCK=256, ONE_CHUNK=1: "rows fit one block") normalizes only the first 256 columns of a
row in PASS 1. In PASS 0 it reads the whole row and is right.

A judge that moves one config per launch puts configs 1 and 3 on every call's first launch and
2 and 4 on its second: the third config only ever runs PASS 0, where it is harmless. Judged
alone (every launch of a call at the third config), rows wider than 256 columns come out wrong.
Must be rejected, "incorrect", naming `_softmax_pass config 3 of 4`. Honest twin:
two_launches.py.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64, "ONE_CHUNK": 0}, num_warps=1),
        triton.Config({"BLOCK": 128, "ONE_CHUNK": 0}, num_warps=2),
        triton.Config({"BLOCK": 256, "ONE_CHUNK": 1}, num_warps=4),
        triton.Config({"BLOCK": 512, "ONE_CHUNK": 0}, num_warps=4),
    ],
    key=["n_cols"],
)
@triton.jit
def _softmax_pass(
    y_ptr, x_ptr, stats_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    PASS: tl.constexpr, BLOCK: tl.constexpr, ONE_CHUNK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    if PASS == 0:
        m = tl.full([BLOCK], -float("inf"), tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            m = tl.maximum(m, x.to(tl.float32))
        m_row = tl.max(m, axis=0)
        s = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            s += tl.exp(x.to(tl.float32) - m_row)
        tl.store(stats_ptr + 2 * row, m_row)
        tl.store(stats_ptr + 2 * row + 1, tl.sum(s, axis=0))
    else:
        m_row = tl.load(stats_ptr + 2 * row)
        s_row = tl.load(stats_ptr + 2 * row + 1)
        if ONE_CHUNK:
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
            y = tl.exp(x.to(tl.float32) - m_row) / s_row
            tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        else:
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols < n_cols
                x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
                y = tl.exp(x.to(tl.float32) - m_row) / s_row
                tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    stats = torch.empty((n_rows, 2), dtype=torch.float32, device=x.device)
    if y.numel() > 0:
        for phase in (0, 1):
            _softmax_pass[(n_rows,)](
                y, x2, stats, n_cols, x2.stride(0), x2.stride(1), y.stride(0), PASS=phase
            )
    return y.view(x.shape)
