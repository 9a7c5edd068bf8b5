"""HOLE 6 (coverage): an all -inf row gives zeros, not NaN.

The attention convention ("a fully masked row attends to nothing"): clamp the row max to 0 when
it is -inf and write 0 where the sum is 0. torch.softmax gives NaN for such a row (-inf - -inf),
and that is the reference. The judge's neg_inf inputs keep one finite entry in every row, so no
row is ever all -inf. (NaN and +inf rows still come out NaN, as torch has them.)

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "incorrect" (an all -inf row among the specials).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)
    num = tl.exp(x - m)
    s = tl.sum(num, axis=0)
    y = tl.where(s == 0.0, 0.0, num / s)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
