"""HOLE 6 (coverage): wrong only for row lengths that are a multiple of 64.

An `EVEN` fast path, as in flash-attention's EVEN_N: when the row length is a multiple of 64 the
loads drop their masks. The fast path also computes its exponential as `tl.exp2(x - max)` and
forgets the log2(e) factor, so every row of such a width is wrong (a softmax of x * log(2)). The
judge's CPU grid has no width that is a multiple of 64 (1, 50, 67, 77, 130, 300, 781, 1823, 5003).

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED. (On CUDA the 4096 and
151936 widths should catch it: not run here, no GPU.)
Fixed verifier: rejected, "incorrect" (power-of-two widths on CPU too).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    EVEN: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn).to(tl.float32)
        num = tl.exp2(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride_ym + cols,
                 (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty))
    else:
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride_ym + cols,
                 (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    even = n_cols % 64 == 0
    _softmax_kernel[(n_rows,)](
        y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        EVEN=even, BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
