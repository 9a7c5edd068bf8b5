"""The 32-bit offset bug at a size the interpreter runs: row offsets wrap at 2^12 elements (as
int32 ones wrap at 2^31), so every row starting past element 4095 reads an earlier row. Right on
every case of fewer than 4096 elements; on a limit case of 600 rows of 8 (forced onto the CPU by
tests/verify/test_limits.py) rows 512 to 599 are wrong, and the rejection names one of them."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(
    y_ptr, x_ptr, n_cols, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + ((row * stride_xm) & 4095) + cols * stride_xn, mask=mask,
                other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row.to(tl.int64) * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _softmax_kernel[(n_rows,)](
            y, x2, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK=triton.next_power_of_2(n_cols),
        )
    return y.view(x.shape)
