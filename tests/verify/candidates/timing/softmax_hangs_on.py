"""The seed's softmax, except that its kernel spins forever on rows of HANG_COLS columns: an
honest-looking candidate that hangs in the middle of the case grid (the test sets HANG_COLS to
the row length of the case where it must hang)."""

import torch
import triton
import triton.language as tl

HANG_COLS = 0


@triton.jit
def _softmax_kernel(y_ptr, x_ptr, n_cols, stride_xm, stride_ym, HANG: tl.constexpr,
                    BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=-float("inf")).to(tl.float32)
    spin = n_cols
    while spin == HANG:  # never leaves on the hanging size
        # A volatile load is a side effect: the compiler may not delete the loop as it may
        # delete one that does nothing (an infinite loop without effects is undefined in LLVM).
        spin = n_cols + 0 * tl.load(x_ptr, volatile=True).to(tl.int32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    _softmax_kernel[(x2.shape[0],)](y, x2, n_cols, x2.stride(0), y.stride(0), HANG=HANG_COLS,
                                   BLOCK_SIZE=triton.next_power_of_2(n_cols))
    return y.view(x.shape)
