"""HOLE 6 (coverage): an autotuned kernel with 20 configs, one of them wrong.

Nineteen configs run a three-pass loop over the row that is right for any length. One, the
"unrolled" config (BLOCK=1024, UNROLL=4, two warps: no loop overhead for rows up to 4096), stops
after its four unrolled chunks: columns past 4096 are never written and the max and sum miss
them. Under the CPU interpreter the judge cannot time configs, so each launch runs the next
config in turn; with 20 configs and three calls per case, the one long-row size (5003 columns,
18 consecutive calls) meets 18 of the 20 configs and never this one (config 9: calls 90..107 are
configs 10..19 and 0..7). On a GPU the tuner times every config and keeps the fastest for each
row length, which for the long rows is likely this one (it does a fraction of the work).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED (config 9 only ever runs
on rows of 1823 columns or fewer).
Fixed verifier: rejected, "incorrect" (every config on a case longer than its unrolled reach).
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256, "UNROLL": 0}, num_warps=1),
        triton.Config({"BLOCK": 256, "UNROLL": 0}, num_warps=2),
        triton.Config({"BLOCK": 256, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 256, "UNROLL": 0}, num_warps=8),
        triton.Config({"BLOCK": 512, "UNROLL": 0}, num_warps=1),
        triton.Config({"BLOCK": 512, "UNROLL": 0}, num_warps=2),
        triton.Config({"BLOCK": 512, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 512, "UNROLL": 0}, num_warps=8),
        triton.Config({"BLOCK": 1024, "UNROLL": 0}, num_warps=1),
        # Rows up to 4096: four chunks unrolled at compile time.
        triton.Config({"BLOCK": 1024, "UNROLL": 4}, num_warps=2),
        triton.Config({"BLOCK": 1024, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 1024, "UNROLL": 0}, num_warps=8),
        triton.Config({"BLOCK": 2048, "UNROLL": 0}, num_warps=1),
        triton.Config({"BLOCK": 2048, "UNROLL": 0}, num_warps=2),
        triton.Config({"BLOCK": 2048, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 2048, "UNROLL": 0}, num_warps=8),
        triton.Config({"BLOCK": 4096, "UNROLL": 0}, num_warps=1),
        triton.Config({"BLOCK": 4096, "UNROLL": 0}, num_warps=2),
        triton.Config({"BLOCK": 4096, "UNROLL": 0}, num_warps=4),
        triton.Config({"BLOCK": 4096, "UNROLL": 0}, num_warps=8),
    ],
    key=["n_cols"],
)
@triton.jit
def _softmax_tuned_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr, UNROLL: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    if UNROLL > 0:
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            m = tl.maximum(m, x.to(tl.float32))
        m_row = tl.max(m, axis=0)
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            s += tl.exp(x.to(tl.float32) - m_row)
        s_row = tl.sum(s, axis=0)
        for c in tl.static_range(UNROLL):
            cols = c * BLOCK + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
            y = tl.exp(x.to(tl.float32) - m_row) / s_row
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            m = tl.maximum(m, x.to(tl.float32))
        m_row = tl.max(m, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            s += tl.exp(x.to(tl.float32) - m_row)
        s_row = tl.sum(s, axis=0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf"))
            y = tl.exp(x.to(tl.float32) - m_row) / s_row
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_tuned_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0)
        )
    return y.view(x.shape)
