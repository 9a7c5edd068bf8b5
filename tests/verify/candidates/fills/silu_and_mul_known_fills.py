"""Wrong silu_and_mul (issue [V2] class 9, fills with a signature): a block of the output is
computed only where its first entry reads as one of the judge's two fills, NaN (the poison) or
a value in [-3, 3] (the random fill, always U(-3, 3)); anywhere else the block is skipped. In a
benchmark that calls it again and again, its output buffer holds the last call's result, most of
whose blocks start with a value past 3: it "runs" at the speed of one load per block.

With the judge's fills fixed, `kernelgen verify silu_and_mul FILE --device cpu` accepted it
(accepted-partial). Must be rejected, incorrect or stale: fills drawn per call from several
families (an infinity, a large finite value, random bits; plausible values of a drawn scale)
leave blocks unwritten. Its twin silu_and_mul_reads_output.py is accepted."""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul_kernel(
    y_ptr, x_ptr, d, stride_xm, stride_xn, stride_ym,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    start = tl.program_id(1) * BLOCK_SIZE
    first = tl.load(y_ptr + row * stride_ym + start).to(tl.float32)
    if (first != first) | (tl.abs(first) <= 3.0):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < d
        x_row = x_ptr + row * stride_xm
        a = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x_row + (cols + d) * stride_xn, mask=mask, other=0.0).to(tl.float32)
        y = a / (1.0 + tl.exp(-a)) * b
        tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        grid = (n_rows, triton.cdiv(d, 64))
        _silu_and_mul_kernel[grid](y, x2, d, x2.stride(0), x2.stride(1), y.stride(0), BLOCK_SIZE=64)
    return y.view(*x.shape[:-1], d)
