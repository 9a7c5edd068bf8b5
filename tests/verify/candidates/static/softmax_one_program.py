"""Honest twin of softmax_gpu_shortcut.py: the same program on both devices. It allocates on the
input's device, sizes a persistent grid from the SM count (the interpreter answers with the H200's
132, so the CPU run launches the H200's grid), and takes exp through exp2 with a module-level
constexpr of math constants, which were rejected as top-level code before.

Must be accepted: no static violation; `kernelgen verify softmax FILE --device cpu` gives
accepted-partial (66 of 121 cases passed, the rest not run on CPU, as for the seed). Before:
rejected statically (top-level-code, the LOG2E line).
"""

import math

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))  # exp(x) = exp2(x * log2(e))


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym,
                    BLOCK: tl.constexpr):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        r = tl.cast(row, tl.int64)  # past 2^31 elements (the judge's limit case)
        x = tl.load(x_ptr + r * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + r * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    dev = x.device
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=dev)
    if y.numel() == 0:
        return y.view(x.shape)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    grid = (max(1, min(n_rows, 4 * sms)),)
    _softmax_kernel[grid](
        y, x2, n_rows, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
