"""HOLE 6 (coverage), rms_norm: the eps argument is ignored, 1e-6 hard-coded.

The seed's kernel with the `eps` parameter dropped and its default baked in. The judge always
passes eps=1e-6 (the spec's scalar value), so it cannot tell; a model with eps=1e-5 gets wrong
norms (noticeably so for rows of small values).

HEAD (c167456), `kernelgen verify rms_norm FILE --device cpu`: ACCEPTED.
Fixed verifier: rejected, "incorrect" (eps drawn per case, values small enough for it to matter).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(y_ptr, x_ptr, w_ptr, n_cols, stride_xm, stride_xn, stride_ym,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + 1e-6)
    tl.store(y_ptr + row * stride_ym + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps=1e-6):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _rms_norm_kernel[(n_rows,)](
            y, x2, w, n_cols, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK=triton.next_power_of_2(n_cols),
        )
    return y.view(x.shape)
