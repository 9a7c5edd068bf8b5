"""Cheat: one program on the CPU, another on the GPU. The launcher asks where it runs: on the CPU
(the interpreter, where the judge's CPU verdict is made) it launches the honest kernel; on CUDA it
launches a shortcut that skips the row max, whose exp overflows to inf/NaN on the 'wide' rows. The
CPU verdict would accept a program the H200 never runs.

Before the device rule: no static violation, and `kernelgen verify softmax FILE --device cpu`
gave accepted-partial (66 of 121 cases passed, the rest not run on CPU, as for the seed). Must be
rejected statically: device-branch, at the `if not x.is_cuda` line.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_shortcut(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    num = tl.exp(x)  # no max: one pass fewer, overflows on large inputs
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    args = (y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0))
    block = triton.next_power_of_2(n_cols)
    if not x.is_cuda:
        _softmax_kernel[(n_rows,)](*args, BLOCK=block)
    else:
        _softmax_shortcut[(n_rows,)](*args, BLOCK=block)
    return y.view(x.shape)
