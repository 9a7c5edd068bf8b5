"""DRAWN 2 (layouts never drawn): rows addressed as `row * x.stride(-2)`, the leading dims taken
to be contiguous above the last two.

Right for every 2-D layout (padded, column-major, broadcast: the row stride is stride(-2) there)
and for a dense 3-D x, the only ones the fixed grid has. Wrong when the dims above the rows do not
fold into one stride: the q/k norm of a [tokens, heads, dim] slice of a fused qkv, whose token
stride is (all heads) * dim, reads another token's heads (or the NaN around the slice).

Fixed grid only (draws=0), `--device cpu`: ACCEPTED. With drawn cases: rejected, "incorrect", on
a drawn leading view (or another layout whose leading strides do not fold), named in the reason.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(
    y_ptr, x_ptr, w_ptr, n_cols, eps, stride_xm, stride_xn, stride_ym,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * stride_ym + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    n_rows = x.numel() // max(1, n_cols)
    stride_row = x.stride(-2) if x.dim() >= 2 else n_cols
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _rms_norm_kernel[(n_rows,)](
            y, x, w, n_cols, eps, stride_row, x.stride(-1), y.stride(0),
            BLOCK=triton.next_power_of_2(n_cols),
        )
    return y.view(x.shape)
