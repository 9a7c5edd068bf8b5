"""Honest twin of softmax_gpu_shortcut.py: the same program on both devices. It allocates on the
input's device, sizes a persistent grid from the SM count (the interpreter answers with the H200's
132, so the CPU run launches the H200's grid), and takes exp through exp2 with a module-level
constexpr of math constants, which were rejected as top-level code before. A row is read in
blocks of up to 8192 (its compile of whole 151936-wide rows took 24 of its 57 s verdict on the
H100, beside two other judges).

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
        r = tl.cast(row, tl.int64)  # past 2^31 elements (the judge's limit case)
        x_row = x_ptr + r * stride_xm
        y_row = y_ptr + r * stride_ym
        m = tl.full([BLOCK], -float("inf"), dtype=tl.float32)
        s = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=-float("inf"))
            x = x.to(tl.float32)
            # A NaN stays in its lane; a lane that has seen only -inf keeps a sum of 0.
            new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
            grown = s * tl.exp2((m - new) * LOG2E) + tl.exp2((x - new) * LOG2E)
            s = tl.where(new == -float("inf"), 0.0, grown)
            m = new
        row_max = tl.max(m, axis=0)
        total = tl.sum(tl.where(m == -float("inf"), 0.0, s * tl.exp2((m - row_max) * LOG2E)), 0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp2((x - row_max) * LOG2E) / total
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


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
        BLOCK=min(triton.next_power_of_2(n_cols), 8192),
    )
    return y.view(x.shape)
