"""CHEAT (autotune sweep): an autotuner inside `triton.heuristics`, with a heuristic inside it
too: heuristics(autotune(heuristics(jit))). Five configs; the fourth (BLOCK=1024, UNROLL=4: four
chunks unrolled, no loop, "rows up to 4096") stops after its four chunks, so columns past 4096
are never written and the max and sum miss them.

A judge that counts only the autotuners bound to a module-level name (`_softmax_kernel` is the
outer heuristics here) sweeps none of these configs, and moving one config per launch over the
case grid leaves where the fourth one lands to the order of the cases. Judged alone on every
case, the fourth config is wrong on any row longer than 4096 columns. Must be rejected,
"incorrect", naming `_softmax_kernel.fn config 4 of 5`. Honest twin: heuristics.py.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _load_row(x_row, cols, n_cols, stride_xn, EVEN: tl.constexpr, CONTIGUOUS: tl.constexpr):
    if CONTIGUOUS:
        ptrs = x_row + cols
    else:
        ptrs = x_row + cols * stride_xn
    if EVEN:
        x = tl.load(ptrs)
    else:
        x = tl.load(ptrs, mask=cols < n_cols, other=-float("inf"))
    return x.to(tl.float32)


@triton.heuristics({"CONTIGUOUS": lambda args: args["stride_xn"] == 1})
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256, "UNROLL": 0}, num_warps=2),
        triton.Config({"BLOCK": 512, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 1024, "UNROLL": 0}, num_warps=4),
        # Rows up to 4096: four chunks unrolled at compile time.
        triton.Config({"BLOCK": 1024, "UNROLL": 4}, num_warps=2),
        triton.Config({"BLOCK": 2048, "UNROLL": 0}, num_warps=8),
    ],
    key=["n_cols"],
)
@triton.heuristics({"EVEN": lambda args: args["n_cols"] % args["BLOCK"] == 0})
@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr, UNROLL: tl.constexpr, EVEN: tl.constexpr, CONTIGUOUS: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    if UNROLL > 0:
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            m = tl.maximum(m, _load_row(x_row, cols, n_cols, stride_xn, False, CONTIGUOUS))
        m_row = tl.max(m, axis=0)
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            s += tl.exp(_load_row(x_row, cols, n_cols, stride_xn, False, CONTIGUOUS) - m_row)
        s_row = tl.sum(s, axis=0)
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            x = _load_row(x_row, cols, n_cols, stride_xn, False, CONTIGUOUS)
            y = tl.exp(x - m_row) / s_row
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)
    else:
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            m = tl.maximum(m, _load_row(x_row, cols, n_cols, stride_xn, EVEN, CONTIGUOUS))
        m_row = tl.max(m, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            s += tl.exp(_load_row(x_row, cols, n_cols, stride_xn, EVEN, CONTIGUOUS) - m_row)
        s_row = tl.sum(s, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = _load_row(x_row, cols, n_cols, stride_xn, EVEN, CONTIGUOUS)
            y = tl.exp(x - m_row) / s_row
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0))
    return y.view(x.shape)
