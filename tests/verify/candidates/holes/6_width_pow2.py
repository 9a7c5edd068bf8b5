"""HOLE 6 (coverage): wrong only for row lengths that are a power of two (64 and up).

For power-of-two rows the kernel splits the row into two unmasked halves to halve the register
tile, and a copy-paste slip sums the first half twice (`s_lo + s_lo`). Any power-of-two width
from 64 on is wrong; the judge's CPU grid has none (its only power of two is the 1-wide case).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED. (On CUDA the 4096-wide
case should catch it: not run here, no GPU.)
Fixed verifier: rejected, "incorrect".
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    HALVES: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    if HALVES:
        half = tl.arange(0, BLOCK // 2)
        lo = tl.load(x_row + half * stride_xn).to(tl.float32)
        hi = tl.load(x_row + (half + BLOCK // 2) * stride_xn).to(tl.float32)
        m = tl.maximum(tl.max(lo, axis=0), tl.max(hi, axis=0))
        e_lo = tl.exp(lo - m)
        e_hi = tl.exp(hi - m)
        s_lo = tl.sum(e_lo, axis=0)
        s = s_lo + s_lo
        tl.store(y_row + half, (e_lo / s).to(y_ptr.dtype.element_ty))
        tl.store(y_row + half + BLOCK // 2, (e_hi / s).to(y_ptr.dtype.element_ty))
    else:
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_row + cols, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        HALVES=block == n_cols and n_cols >= 64, BLOCK=block,
    )
    return y.view(x.shape)
