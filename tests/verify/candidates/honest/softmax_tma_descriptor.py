"""Honest: softmax through a host TMA descriptor (triton.tools.tensor_descriptor), Hopper's bulk
loads from the host, where the layout allows one (rows 16-byte aligned, unit column stride, a row
of 16 bytes to 256 values), else pointer loads; one program per row. A descriptor reaches no
memory a pointer in the kernel could not, so the rules take it (kernelgen/verify/allowlist.py,
TENSOR_DESCRIPTOR); descriptors made in the kernel need triton.set_allocator, which they refuse.
The interpreter runs both paths on CPU; the GPU suite judges the TMA path on the H200. The pointer
path reads a wide row in blocks of at most 8192: one block of a 262144-wide row took 46 s to
compile on the H100 (evaluations/logs/h100-20261206-suite-shipped-kernelbench-oom)."""

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _softmax_desc(y_ptr, desc, n_cols, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = desc.load([row, 0]).reshape([BLOCK]).to(tl.float32)
    x = tl.where(cols < n_cols, x, float("-inf"))
    m = tl.max(x, 0)
    e = tl.exp(x - m)
    y = e / tl.sum(e, 0)
    y_row = y_ptr + row.to(tl.int64) * stride_y
    tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def _softmax_ptr(y_ptr, x_ptr, n_cols, stride_x, stride_xc, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols * stride_xc, mask=cols < n_cols, other=float("-inf"))
        x = x.to(tl.float32)
        # A NaN stays in its lane (and so in the row's sum); a lane that has seen only -inf
        # keeps a sum of 0 (exp(-inf - -inf) would be NaN).
        new = tl.maximum(m, x, propagate_nan=tl.PropagateNan.ALL)
        s = tl.where(new == float("-inf"), 0.0, s * tl.exp(m - new) + tl.exp(x - new))
        m = new
    row_max = tl.max(m, 0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), 0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols * stride_xc, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    shape = x.shape
    x = x.reshape(-1, shape[-1]) if x.dim() != 2 else x
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    item = x.element_size()
    aligned = (
        x.stride(1) == 1
        and x.data_ptr() % 16 == 0
        and (x.stride(0) * item) % 16 == 0
        and block * item >= 16
        and block <= 256
    )
    if aligned and n_rows > 0:
        desc = TensorDescriptor(x, [n_rows, n_cols], [x.stride(0), 1], [1, block])
        _softmax_desc[(n_rows,)](y, desc, n_cols, y.stride(0), BLOCK=block)
    elif n_rows > 0:
        wide = min(block, 8192)
        _softmax_ptr[(n_rows,)](y, x, n_cols, x.stride(0), x.stride(1), y.stride(0), BLOCK=wide)
    return y.reshape(shape)
