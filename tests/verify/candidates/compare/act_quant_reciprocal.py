"""Honest twin of act_quant_toward_zero.py: the same kernel, q = x times 448 / amax rounded to
the nearest e4m3 value. The product rounds once more than the reference's x / scale, and lands
on the other side of a tie now and then, which the compare allows there. Accepted."""

import torch
import triton
import triton.language as tl

GROUP = 128


@triton.jit
def _act_quant_kernel(
    q_ptr, s_ptr, x_ptr, stride_xm, stride_xk, stride_qm, stride_sm,
    GROUP: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    group = tl.program_id(1)
    cols = group * GROUP + tl.arange(0, GROUP)
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xk).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = amax / 448.0
    inv = tl.where(amax > 0, 448.0 / amax, 0.0)
    q = x * inv
    tl.store(q_ptr + row * stride_qm + cols, q.to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + row * stride_sm + group, scale)


def act_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    q = torch.empty((m, k), dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty((m, k // GROUP), dtype=torch.float32, device=x.device)
    if q.numel() > 0:
        _act_quant_kernel[(m, k // GROUP)](
            q, scales, x, x.stride(0), x.stride(1), q.stride(0), scales.stride(0),
            GROUP=GROUP, num_warps=1,
        )
    return q, scales
