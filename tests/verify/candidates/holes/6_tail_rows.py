"""HOLE 6 (coverage): a persistent grid that forgets the rows past 2 programs per SM.

Two programs per SM (264 on an H200; the interpreter answers with the H200's SM count), each
looping over rows with a stride of the grid size; but the loop bound is the grid size clamped
with the row count, `min(n_rows, 2 * sms)`, where it should be the row count. Rows from 264 on
are never written. The judge's CPU grid has at most 257 rows.

HEAD (c167456), `kernelgen verify softmax FILE --device cpu`: ACCEPTED. (On CUDA the 4096-row
case should catch it: not run here, no GPU.)
Fixed verifier: rejected, "incorrect" (a case with more rows than a persistent grid).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_persistent_kernel(
    y_ptr, x_ptr, row_limit, n_cols, stride_xm, stride_xn, stride_ym, BLOCK: tl.constexpr
):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in range(tl.program_id(0), row_limit, tl.num_programs(0)):
        r = tl.cast(row, tl.int64)
        x = tl.load(x_ptr + r * stride_xm + cols * stride_xn, mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + r * stride_ym + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    programs = max(1, min(n_rows, 2 * sms))
    _softmax_persistent_kernel[(programs,)](
        y, x2, min(n_rows, 2 * sms), n_cols, x2.stride(0), x2.stride(1), y.stride(0),
        BLOCK=triton.next_power_of_2(n_cols),
    )
    return y.view(x.shape)
