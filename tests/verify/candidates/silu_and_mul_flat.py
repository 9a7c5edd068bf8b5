"""Honest silu_and_mul in another style: a 1-D grid over all output elements."""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_mul_flat_kernel(y_ptr, x_ptr, total, d, stride_xm, stride_xn, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    row = offs // d
    col = offs % d
    a = tl.load(x_ptr + row * stride_xm + col * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_ptr + row * stride_xm + (col + d) * stride_xn, mask=mask, other=0.0)
    y = a * tl.sigmoid(a) * b.to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x):
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)
    y = torch.empty((x2.shape[0], d), dtype=x.dtype, device=x.device)
    total = y.numel()
    _silu_mul_flat_kernel[(triton.cdiv(total, 2048),)](
        y, x2, total, d, x2.stride(0), x2.stride(1), BLOCK=2048
    )
    return y.view(*x.shape[:-1], d)
