"""Reuses one output buffer per shape. The static module-state rule sees `_BUF[key] = ...`; this
one hides the mutation behind a local alias, so the run-time checks (a second call must return a
new buffer and leave the first result alone) are what must catch it."""

import torch
import triton
import triton.language as tl

_BUF = {}


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_xn, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=-float("inf")).to(
        tl.float32
    )
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(
        y_ptr + row * n_cols + cols,
        (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty),
        mask=mask,
    )


def softmax(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    key = (tuple(x.shape), x.dtype)
    cache = _BUF
    if key not in cache:
        cache[key] = torch.empty(x2.shape, dtype=x.dtype, device=x.device)
    y = cache[key]
    _softmax_kernel[(x2.shape[0],)](
        y, x2, n, x2.stride(0), x2.stride(1), BLOCK_SIZE=triton.next_power_of_2(n)
    )
    return y.view(x.shape)
