"""Honest twin of silu_and_mul_known_fills.py: the same kernel, which reads the first entry of
its output block and then computes the block whatever that entry holds (NaN, an infinity, a
large value, random bits, zeros). Reading a poisoned output is no fault. Accepted."""

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
    if (first == first) | (first != first):  # whatever it holds
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
