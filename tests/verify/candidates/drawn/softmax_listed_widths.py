"""DRAWN 1 (sizes remembered): right at the widths SPEC lists, a broken fast path elsewhere.

At a width of the spec's sizes the whole row is read, in blocks of up to 8192 (one block of a
151936-wide row took 51 s to compile on the H100); at any other width one 1024-wide block, so
the columns past 1024 are never read nor written. Every fixed case passes, the GPU-only widths
too; a width not in the list and past 1024 fails.

Fixed grid only (draws=0), `--device cpu`: ACCEPTED. With drawn cases: rejected, "incorrect", on
the first drawn width past 1024 that the spec does not list, named in the reason.
"""

import torch
import triton
import triton.language as tl

# Every width of the spec's fixed and limit cases (test_drawn.py checks it keeps up).
LISTED = {1, 50, 64, 67, 77, 130, 300, 781, 1024, 1823, 4096, 5003, 20000, 32768, 40000, 70001,
          128256, 129280, 131072, 151936}  # fmt: skip


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_seen, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_seen, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xn, mask=cols < n_seen, other=-float("inf"))
        x = x.to(tl.float32)
        new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
        s = tl.where(new == -float("inf"), 0.0, s * tl.exp(m - new) + tl.exp(x - new))
        m = new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    for start in range(0, n_seen, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_seen
        x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if n_cols in LISTED:
        seen, block = n_cols, min(triton.next_power_of_2(n_cols), 8192)
    else:
        seen, block = min(n_cols, 1024), 1024
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](
            y, x2, seen, x2.stride(0), x2.stride(1), y.stride(0), BLOCK=block
        )
    return y.view(x.shape)
