"""silu_and_mul: the seed's mapping (one program per row and 1024-wide block, masked, 4 warps),
with exp(-a) as exp2 of a product whose rounding error an fma recovers.

tl.exp(-a) is ex2.approx of -a * log2(e) rounded to fp32 first: ~1e-6 relative at |a| ~ 30 against
torch's 3e-8, which the float32 "wide" cases can catch. A Cody-Waite exp written out in Triton
(run 807a r01-c01, run c5bb) fixed that but cost 13-17% of time at 4096x14336 (104-107 us against
the seed's 90-91): at 6 bytes per output the ALU work is not hidden. This is four more operations
around the same ex2.approx.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _exp_neg(a):
    """exp(-a) to within ex2.approx's 2 ulp: exp2(t) for t = -a * log2(e) rounded, times
    1 + (the rounding error of t, recovered by an fma, plus log2(e)'s low part) * ln 2."""
    t = -a * 1.4426950408889634
    err = tl.fma(-a, 1.4426950408889634, -t) - a * 1.925962989e-08
    # Past |a| = 80 exp over- or underflows anyway; +-inf would make err NaN.
    err = tl.where(tl.abs(a) < 80.0, err, 0.0)
    return tl.exp2(t) * (1.0 + err * 0.6931471805599453)


@triton.jit
def _silu_and_mul_kernel(
    y_ptr,  # *T, [rows, d], contiguous
    x_ptr,  # *T, [rows, 2d], any strides
    d,  # output width: half the input width
    stride_xm,
    stride_xn,
    stride_ym,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < d
    x_row = x_ptr + row * stride_xm
    a = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_row + (cols + d) * stride_xn, mask=mask, other=0.0).to(tl.float32)
    y = a / (1.0 + _exp_neg(a)) * b
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    x2 = x.reshape(-1, 2 * d)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        grid = (n_rows, triton.cdiv(d, 1024))
        _silu_and_mul_kernel[grid](
            y, x2, d, x2.stride(0), x2.stride(1), y.stride(0), BLOCK_SIZE=1024, num_warps=4
        )
    return y.view(*x.shape[:-1], d)
