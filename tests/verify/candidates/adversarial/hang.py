import torch
import triton
import triton.language as tl


@triton.jit
def _k(y_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    # Spins on a flag nothing sets. The load is volatile, so the compiler can neither hoist it
    # out of the loop nor drop the loop: a counting loop (`while i >= 0: i += 1`) came back at
    # once on an H100, its zeros stored, and was judged incorrect instead of hung.
    while tl.load(flag_ptr, volatile=True) == 0:
        pass
    tl.store(
        y_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32), mask=tl.arange(0, BLOCK) < n
    )


def softmax(x):
    y = torch.empty_like(x)
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _k[(1,)](y, flag, x.numel(), BLOCK=16)
    return y
