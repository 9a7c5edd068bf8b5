"""Honest rms_norm on a persistent grid: a few programs per SM, each looping over rows with a
stride of the grid size, and over each row in column blocks (sum of squares, then scale).

HEAD (c167456), `kernelgen verify rms_norm FILE --device cpu`: accepted (51 s). Must stay accepted.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_persistent_kernel(
    y_ptr, x_ptr, w_ptr,
    n_rows, n_cols, eps,
    stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x_row = x_ptr + tl.cast(row, tl.int64) * stride_xm
        y_row = y_ptr + tl.cast(row, tl.int64) * stride_ym
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols * stride_xn, mask=cols < n_cols, other=0.0).to(tl.float32)
            acc += x * x
        inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    grid = (max(1, min(n_rows, 4 * sms)),)
    block = min(1024, triton.next_power_of_2(n_cols))
    _rms_norm_persistent_kernel[grid](
        y, x2, w,
        n_rows, n_cols, eps,
        x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=block, num_warps=4,
    )
    return y.view(x.shape)
