# kernelgen_ops.act_quant: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/act_quant.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/act_quant/20261202-090205-agent-5e72/candidates/r01-c01/source.py
# record    evaluations/act_quant/20261202-090205-agent-5e72/candidates/r01-c01/record.json
# proposer  agent (model kernelgen-session (written by hand, as an agent), round 1, parent seed)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 0.98x geomean over 3 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           16x7168 bfloat16: 1.06x vs torch.compile
#           4096x7168 bfloat16: 0.97x vs torch.compile
#           16384x7168 bfloat16: 0.92x vs torch.compile
# speedups  geomean 14.35x vs eager, 0.98x vs torch.compile, - vs seed
# peers     eager = references/act_quant.py:eager, the op as torch users call it; torch.compile of
#           the same
#           16x7168 bfloat16: 2.1 us, 8.84x eager, 1.06x compile, - seed
#           4096x7168 bfloat16: 23.5 us, 18.68x eager, 0.97x compile, - seed
#           16384x7168 bfloat16: 95.9 us, 17.88x eager, 0.92x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           16x7168, 4096x7168, 16384x7168; torch's op at no shape
# sha256    7608abe83874a47599a3ad51a4a560f07990cdcecff7f0ed760f1f86ce1db56d
# promoted  2026-12-02T09:04:13+00:00
#
# ruff: noqa
# fmt: off
"""Per-token-group FP8 quantization over tiles of BLOCK_R rows x GROUPS groups: each program
loads a [BLOCK_R, GROUPS * 128] tile with wide contiguous loads, reduces it as
[BLOCK_R, GROUPS, 128] to one amax per group, and writes q and the scales of the whole tile.
The seed's program per group moved 256 bytes (bf16) per program; this moves 8-16 KB, with few
enough programs per row that decode shapes (16 rows) still fill the SMs.
"""

import torch
import triton
import triton.language as tl

from . import _runtime

GROUP = 128


@triton.jit
def _act_quant_kernel(
    q_ptr,  # *fp8e4nv, [M, K], contiguous
    s_ptr,  # *fp32, [M, K / GROUP], contiguous
    x_ptr,  # *T, [M, K], any strides
    m,
    n_groups,  # K / GROUP
    stride_xm,
    stride_xk,
    stride_qm,
    stride_sm,
    BLOCK_R: tl.constexpr,
    GROUPS: tl.constexpr,  # groups per program along a row
    GROUP: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    groups = tl.program_id(1) * GROUPS + tl.arange(0, GROUPS)
    r = rows.to(tl.int64)[:, None, None]
    cols = groups[None, :, None] * GROUP + tl.arange(0, GROUP)[None, None, :]
    ok = (rows < m)[:, None, None] & (groups < n_groups)[None, :, None]
    x = tl.load(x_ptr + r * stride_xm + cols * stride_xk, mask=ok, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=2)
    scale = amax / 448.0
    # An all-zero group: scale 0, q 0 (x / 0 would be NaN).
    s3 = scale[:, :, None]
    q = tl.where(s3 > 0, x / s3, 0.0)
    tl.store(q_ptr + r * stride_qm + cols, q.to(q_ptr.dtype.element_ty), mask=ok)
    s_ok = (rows < m)[:, None] & (groups < n_groups)[None, :]
    tl.store(s_ptr + rows.to(tl.int64)[:, None] * stride_sm + groups[None, :], scale, mask=s_ok)


def act_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    n_groups = k // GROUP
    q = torch.empty((m, k), dtype=torch.float8_e4m3fn, device=x.device)
    scales = torch.empty((m, n_groups), dtype=torch.float32, device=x.device)
    if q.numel() == 0:
        return q, scales
    # Decode shapes: one row and 4 groups a program, so 16 x 7168 is 224 programs; larger
    # ones 4 rows x 8 groups (8 KB of bf16 a program).
    block_r, groups = (1, 4) if m <= 64 else (4, 8)
    grid = (triton.cdiv(m, block_r), triton.cdiv(n_groups, groups))
    _act_quant_kernel[grid](
        q, scales, x, m, n_groups, x.stride(0), x.stride(1), q.stride(0), scales.stride(0),
        BLOCK_R=block_r, GROUPS=groups, GROUP=GROUP, num_warps=4,
    )  # fmt: skip
    return q, scales


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
