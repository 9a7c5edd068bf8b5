# kernelgen_ops.rms_norm: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/rms_norm.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/rms_norm/20261203-132139-agent-087d/candidates/r01-c01/source.py
# record    evaluations/rms_norm/20261203-132139-agent-087d/candidates/r01-c01/record.json
# proposer  agent (model kernelgen-session (written by hand, as an agent), round 1, parent seed)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 1.02x geomean over 9 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record, or eager, torch.compile, Liger or FlagGems in
#           evaluations/library/bench-20261204T151615Z.json
#           4096x4096 bfloat16: 1.03x vs Liger (library bench)
#           16384x8192 bfloat16: 0.96x vs torch.compile
#           64x7168 bfloat16: 1.07x vs Liger (library bench)
#           1x4096 bfloat16: 1.00x vs torch.compile (library bench)
#           8x7168 bfloat16: 0.95x vs torch.compile
#           16x4096 bfloat16: 1.02x vs torch.compile (library bench)
#           64x4096 bfloat16: 1.01x vs Liger (library bench)
#           1x7168 bfloat16: 1.05x vs Liger (library bench)
#           16x7168 bfloat16: 1.06x vs Liger (library bench)
# speedups  geomean 2.49x vs eager, 1.08x vs torch.compile, - vs seed
# peers     eager = references/rms_norm.py:eager, the op as torch users call it; torch.compile of
#           the same
#           4096x4096 bfloat16: 18.6 us, 1.31x eager, 1.13x compile, - seed
#           16384x8192 bfloat16: 134.4 us, 1.51x eager, 0.96x compile, - seed
#           64x7168 bfloat16: 2.8 us, 4.13x eager, 1.39x compile, - seed
#           1x4096 bfloat16: 2.1 us, 3.28x eager, 1.00x compile, - seed
#           8x7168 bfloat16: 2.4 us, 3.61x eager, 0.95x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           4096x4096, 16384x8192, 64x7168, 1x4096, 8x7168; torch's op at no shape
# sha256    6bbc3be9ed8386634f92c1d20dc43df0c0b2d72dd5f31ec3ee99c7c72638f655
# promoted  2026-12-03T14:49:41+00:00
# note      this source was first judged as tune run 20261201-080408-tune-f1b9/r01-c01; run
#           20261203-132139-agent-087d judged and measured it again unchanged, and its figures are
#           the ones here
#
# ruff: noqa
# fmt: off
"""Naive RMSNorm over the last dimension: one program per row, the whole row in one block.

y = x * rsqrt(mean(x^2) + eps) * weight, in fp32, stored in x's dtype. Traffic: x read once,
y written once, the weight read by every row (it stays in L2).
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<rows>x<cols>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"num_warps": [2, 4, 8, 16, 32]}
DEFAULT_CONFIG = _runtime.default_config("rms_norm")  # configs/rms_norm.json
TUNED = _runtime.tuned("rms_norm")  # per device: configs/rms_norm.json


@triton.jit
def _rms_norm_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    w_ptr,  # *T, [n_cols], contiguous
    n_cols,  # row length
    eps,  # added to the mean square before the rsqrt
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_SIZE: tl.constexpr,  # power of two >= n_cols
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * stride_ym + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)  # a view where the strides allow, a layout copy where not
    n_rows = x2.shape[0]
    w = weight.contiguous()
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    if y.numel() > 0:
        _rms_norm_kernel[(n_rows,)](
            y, x2, w, n_cols, eps, x2.stride(0), x2.stride(1), y.stride(0),
            BLOCK_SIZE=triton.next_power_of_2(n_cols), **_config(n_rows, n_cols),
        )
    return y.view(x.shape)


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
