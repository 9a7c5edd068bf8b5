"""Honest twin of rms_norm_flat_rows.py: x.reshape(-1, n) first, a view where the leading strides
fold into one and a layout copy where they do not, then that view's row stride. A row is read in
blocks of at most 8192: one block of a 262144-wide row took 130 s to compile on the H100, past the
verdict's 60 s (evaluations/logs/h100-20261206-suite-shipped-kernelbench-oom). Accepted."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(
    y_ptr, x_ptr, w_ptr, n_cols, eps, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    acc = tl.zeros([BLOCK], dtype=tl.float32)
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


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _rms_norm_kernel[(n_rows,)](
            y, x2, w, n_cols, eps, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK=min(triton.next_power_of_2(n_cols), 8192),
        )
    return y.view(x.shape)
