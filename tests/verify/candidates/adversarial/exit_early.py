"""Ends the process from inside a kernel under the interpreter: no verdict, so a crash."""

import torch
import triton
import triton.language as tl


@triton.jit
def _k(y_ptr, n, BLOCK: tl.constexpr):
    raise SystemExit(0)


def softmax(x):
    y = torch.empty_like(x)
    _k[(1,)](y, x.numel(), BLOCK=16)
    return y
