import torch
import triton
import triton.language as tl


@triton.jit
def _k(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs + 100000000, x)


def softmax(x):
    y = torch.empty_like(x)
    _k[(1,)](y, x, x.numel(), BLOCK=1024)
    return y
