"""Wrong act_quant (issue [V2] class 6, own compares skip the error ratio): the seed's per-group
quantization with x / scale shrunk by 3% before the cast to e4m3. Every q is then the nearest
e4m3 value or the one below it (toward zero), never further: a third to a half of the values
one step low, all of them the same way, so q * scale is biased toward zero.

The compare allowed one e4m3 step everywhere and an operator with its own compare had no error
ratio: `kernelgen verify act_quant FILE --device cpu` accepted it (accepted-partial). Must be
rejected as incorrect (q away from the e4m3 value nearest x / scale, where no tie excuses it).
Its twin act_quant_reciprocal.py is accepted."""

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
    q = tl.where(scale > 0, x / scale * 0.97, 0.0)
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
