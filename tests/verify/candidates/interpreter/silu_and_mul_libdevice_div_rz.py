"""Honest silu_and_mul with a libdevice function the interpreter does not compute: silu(a) =
libdevice.div_rz(a, 1 + exp(-a)), a division rounded toward zero (within one fp32 ulp of the
nearest), which numpy cannot give exactly.

Before, `kernelgen verify silu_and_mul FILE --device cpu` rejected it as a crash (the stub). Must
be accepted-partial on CPU, every case it reaches "not run on CPU: the interpreter lacks
libdevice.div_rz"; the H200 judges it in full.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def _silu(a):
    return libdevice.div_rz(a, 1.0 + tl.exp(-a))


@triton.jit
def _silu_and_mul_kernel(y_ptr, x_ptr, n_rows, d, stride_xm, stride_xn, stride_ym,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.program_id(1).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < d)
    x_rows = x_ptr + rows[:, None] * stride_xm
    a = tl.load(x_rows + cols[None, :] * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_rows + (cols[None, :] + d) * stride_xn, mask=mask, other=0.0).to(tl.float32)
    y = _silu(a) * b
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :], y.to(y_ptr.dtype.element_ty),
             mask=mask)


def silu_and_mul(x):
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        grid = (triton.cdiv(d, 256), triton.cdiv(n_rows, 8))
        _silu_and_mul_kernel[grid](y, x2, n_rows, d, x2.stride(0), x2.stride(1), y.stride(0),
                                   BLOCK_M=8, BLOCK_N=256)
    return y.view(*x.shape[:-1], d)
