# kernelgen_ops.fp8_gemm: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/fp8_gemm.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/fp8_gemm/20261202-215844-agent-8055/candidates/r01-c01-tuned/source.py
# record    evaluations/fp8_gemm/20261202-215844-agent-8055/candidates/r01-c01-tuned/record.json
# proposer  tune (model -, round 1, parent r01-c01)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 1.66x geomean over 4 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           16x7168x2048 float32: 2.42x vs torch.compile
#           128x7168x2048 float32: 2.20x vs torch.compile
#           4096x7168x2048 float32: 1.20x vs torch.compile
#           4096x4096x7168 float32: 1.18x vs torch.compile
# speedups  geomean 7.00x vs eager, 1.66x vs torch.compile, - vs seed
# peers     eager = references/fp8_gemm.py:eager, the op as torch users call it; torch.compile of
#           the same
#           16x7168x2048 float32: 8.7 us, 19.28x eager, 2.42x compile, - seed
#           128x7168x2048 float32: 10.3 us, 16.49x eager, 2.20x compile, - seed
#           4096x7168x2048 float32: 159.8 us, 2.59x eager, 1.20x compile, - seed
#           4096x4096x7168 float32: 310.8 us, 2.91x eager, 1.18x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           16x7168x2048, 128x7168x2048, 4096x7168x2048, 4096x4096x7168; torch's op at no shape
# sha256    ea94caf758c2ea8cb19ece4bcd9db0f7b8d58cceb0923f2810816672180f1e73
# promoted  2026-12-02T22:01:45+00:00
#
# ruff: noqa
# fmt: off
"""Block-scaled FP8 GEMM: out[M, N] = (a * a_scale) @ (b * b_scale).T, e4m3 a and b, bf16 out.

What changed from the seed, and why:
- Tiles are visited in groups of GROUP_M tile rows (the tutorial's L2 swizzle): at prefill sizes
  the programs in flight share a's rows and b's columns, so each is read from HBM about once.
- BLOCK_N divides 128 in every config, so one tile's columns share one row of b_scale: the b
  scale is a scalar per K step, and the two scales fold into one vector before the multiply
  (one FMA per accumulator entry per step instead of two multiplies and an add).
- Loads are unmasked: rows and columns past M and N wrap onto valid ones (their results are
  never stored), so the inner loop has no predicates and loads vectorize.
- Per-bucket configs: 128x128 tiles, 8 warps and 4 stages at prefill (the fp32 accumulator
  and the step's dot result both live in registers, which rules out 128x256); smaller tiles at
  decode and batch sizes so that the grid covers the 132 SMs.
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

GROUP = 128  # entries per scale block along K (and along N for b)
TUNE_SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [32, 64, 128],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [3, 4, 5],
}
DEFAULT_CONFIG = _runtime.default_config("fp8_gemm")  # configs/fp8_gemm.json
# Keyed "<M>x<N>x<K>" rounded up to powers of two; a shape takes the nearest bucket.
TUNED = _runtime.tuned("fp8_gemm")  # per device: configs/fp8_gemm.json


@triton.jit
def _fp8_gemm_kernel(
    out_ptr,  # *bf16, [M, N], contiguous
    a_ptr,  # *fp8e4nv, [M, K], rows any stride
    a_s_ptr,  # *fp32, [M, K / GROUP]
    b_ptr,  # *fp8e4nv, [N, K]
    b_s_ptr,  # *fp32, [cdiv(N, GROUP), K / GROUP]
    M,
    N,
    K,  # a multiple of GROUP
    stride_am,
    stride_ak,
    stride_asm,
    stride_bn,
    stride_bk,
    stride_bsn,
    stride_om,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,  # divides GROUP: one b_scale row per tile
    GROUP_M: tl.constexpr,  # tile rows per L2 group
    GROUP: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    first_m = (pid // width) * GROUP_M
    rows_here = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % rows_here
    pid_n = (pid % width) // rows_here

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Wrapped indices for the loads: rows past M (columns past N) read valid memory, and their
    # results are masked at the store.
    lm = (rm % M).to(tl.int64)
    ln = (rn % N).to(tl.int64)
    rk = tl.arange(0, GROUP)
    a_tile = a_ptr + lm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + ln[None, :] * stride_bn + rk[:, None] * stride_bk
    a_s_rows = a_s_ptr + lm * stride_asm
    b_s_row = b_s_ptr + ((pid_n * BLOCK_N) // GROUP) * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, K // GROUP):
        a = tl.load(a_tile)
        b = tl.load(b_tile)
        s = tl.load(a_s_rows + kb) * tl.load(b_s_row + kb)
        acc += tl.dot(a, b) * s[:, None]
        a_tile += GROUP * stride_ak
        b_tile += GROUP * stride_bk
    out = out_ptr + rm.to(tl.int64)[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=(rm < M)[:, None] & (rn < N)[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def fp8_gemm(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[0]
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    if out.numel() > 0:
        cfg = _config(m, n, k)
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        _fp8_gemm_kernel[grid](
            out, a, a_scale, b, b_scale, m, n, k,
            a.stride(0), a.stride(1), a_scale.stride(0), b.stride(0), b.stride(1),
            b_scale.stride(0), out.stride(0),
            GROUP=GROUP, **cfg,
        )
    return out


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
