"""Naive per-token-group FP8 quantization: one program per (row, group of 128), which loads its
group, takes the amax, and writes the scale and the 128 quantized entries. Nothing is shared
between groups or rows: M * K / 128 programs of one group each.
"""

import torch
import triton
import triton.language as tl

GROUP = 128
# The tuner searches TUNE_SPACE; one group per program leaves it the warps alone.
TUNE_SPACE = {"num_warps": [1, 2, 4]}
DEFAULT_CONFIG = {"num_warps": 1}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _act_quant_kernel(
    q_ptr,  # *fp8e4nv, [M, K], contiguous
    s_ptr,  # *fp32, [M, K / GROUP], contiguous
    x_ptr,  # *T, [M, K], any strides
    stride_xm,
    stride_xk,
    stride_qm,
    stride_sm,
    GROUP: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    group = tl.program_id(1)
    cols = group * GROUP + tl.arange(0, GROUP)
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xk).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = amax / 448.0
    # An all-zero group: scale 0, q 0 (x / 0 would be NaN).
    q = tl.where(scale > 0, x / scale, 0.0)
    tl.store(q_ptr + row * stride_qm + cols, q.to(q_ptr.dtype.element_ty))
    tl.store(s_ptr + row * stride_sm + group, scale)


def act_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    q = torch.empty((m, k), dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty((m, k // GROUP), dtype=torch.float32, device=x.device)
    if q.numel() > 0:
        cfg = TUNED.get("default", DEFAULT_CONFIG)
        _act_quant_kernel[(m, k // GROUP)](
            q, scales, x, x.stride(0), x.stride(1), q.stride(0), scales.stride(0),
            GROUP=GROUP, **cfg,
        )  # fmt: skip
    return q, scales
