"""Block-scaled FP8 GEMM: out[M, N] = (a * a_scale) @ (b * b_scale).T, e4m3 a and b, bf16 out.

What changed from the shipped kernel (evaluations/fp8_gemm/20261202-215844-agent-8055, r01-c01
tuned), and why:
- At prefill sizes a second kernel: a and b tiles come in by TMA (host tensor descriptors) and
  the K loop is warp-specialized (tl.range(..., warp_specialize=True), Triton 3.6 on sm_90). The
  shipped loop compiled for sm_90 waits on every step's wgmma (wait_group 0: the block's dot is a
  fresh accumulator that the FMA with the scales needs at once) and then scales it on the same
  warps, with one CTA per SM at 128x128 (177 registers, 128 KiB of stages) and the loads' address
  arithmetic (cp.async, 16 bytes a thread) on those warps too: the tensor cores idle through
  every step's scale FMA, wait and barrier. Warp-specialized, it compiles (sm_90, checked here)
  to a load partition (one warp, 40 registers, TMA) and two 4-warp consumer partitions of 64 rows
  each (232 registers, no spills) that synchronize with the loads through mbarriers, not with
  each other: one consumer's scale FMA runs while the other's wgmma does, the way DeepGEMM
  ping-pongs its two math warpgroups.
- The arithmetic is the shipped kernel's to the bit: a fresh tensor-core dot per 128-wide K
  block (the hardware's fp8 sums span one scale block only, as DeepSeek promotes them), scaled
  by a_scale[row] * b_scale in fp32 and added to an fp32 accumulator, in the same K order; rows
  past M and columns past N are read as TMA's zero fill instead of wrapped rows, and never
  stored.
- TMA needs a 16-byte aligned base, 16-byte aligned row strides and a unit last stride
  (TensorDescriptor asserts on any other): a row-padded or offset `a` that breaks one (the
  spec's strided and offset layouts), and every decode and batch size (M <= 128, where the
  shipped configs already beat bf16 cuBLAS and a launch with a descriptor takes Triton's slow
  launch path, the lean one not knowing descriptors), take the shipped kernel unchanged.
- Built for sm_90 here at 128x128 (compile-only driver): ttgir has the warp_specialize op with
  two partitions, the PTX three TMA loads, setmaxnreg 40 for the loader and 232 for the
  consumers, and 147688 bytes of shared memory at 4 stages (114912 at 3), under sm_90's 232448:
  one CTA an SM, as shipped. Each consumer still waits on its own wgmma (wait_group 0); the
  overlap is between the two consumers, not within one.
- Checked on CPU: the verifier's CPU cases (M <= 64) all take the pointer path, so the TMA
  kernel was also run forced in the interpreter at 128x128 and 64x128 on ragged M and N, padded
  and offset `a` (aligned and not): bitwise equal to the pointer path at the same tiles and
  within the reference's bound. The interpreter runs descriptor loads (zero fill past M and N)
  but ignores warp_specialize: it maps tl.range to Python's range and drops the keyword, so
  the partitioned schedule is judged on the GPU only.

Per bench shape (flops 2*M*N*K at the fp8 rate, 1979 TFLOP/s dense on the H200; bytes M*K +
N*K once, out 2*M*N; all compute-bound, over 1000 flop/byte from HBM, 128 flop/byte from L2 at
128x128 tiles). Expected, not measured; bf16 cuBLAS from ../shared/BASELINES.md:
- 16x7168x2048, 128x7168x2048: the shipped kernel and configs, the same times.
- 4096x7168x2048 (120 GFLOP; 1792 tiles, 13.6 a SM; 16 K steps a tile): shipped 159.8 us
  (64x128 pointer tiles), bf16 cuBLAS 175.1 us, 1.3x is 134.7 us. Short K leaves each tile's
  fill and bf16 store unhidden (no persistent launch), so the gain is the smallest here:
  roughly 125-145 us, the target reached or just missed.
- 4096x4096x7168 (241 GFLOP; 1024 tiles, 7.8 a SM; 56 steps): shipped 310.8 us, cuBLAS 343.3,
  1.3x is 264 us. The overlapped FMA is most of the step's idle tensor-core time: 240-270 us.
- 4096x7168x16384 (962 GFLOP; 1792 tiles; 128 steps): the longest K, the most steps
  overlapped; the largest gain over the shipped kernel (which its tuner never saw).
- 4096x1536x7168 (90 GFLOP; 384 tiles, 2.9 waves; 56 steps): as 4096x4096x7168 a step, but
  the last of three waves is 91% full and there are only three: tail effects cap it lower.
Given up: 128x256 tiles (the warp-specialized consumers spill at 128x256 with an fp32 dot
result beside the accumulator), and a persistent launch (a later step: it would hide the
per-tile fill that costs most at K = 2048). The tuner may pair TMA=1 with 8 warps or 16-row
tiles that do not partition; those configs fail to compile and are its to discard.
"""

import functools
import math

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

GROUP = 128  # entries per scale block along K (and along N for b)
TUNE_SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [32, 64, 128],
    "GROUP_M": [8],
    # 1: the TMA, warp-specialized kernel (4 warps a consumer partition), where the inputs allow.
    "TMA": [0, 1],
    "num_warps": [4, 8],
    "num_stages": [3, 4, 5],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 64,
    "BLOCK_N": 64,
    "GROUP_M": 8,
    "TMA": 0,
    "num_warps": 4,
    "num_stages": 4,
}
# Keyed "<M>x<N>x<K>" rounded up to powers of two; a shape takes the nearest bucket. Decode and
# batch buckets are the shipped ones; the prefill buckets are new (the bench's four weights).
_PREFILL = {"BLOCK_M": 128, "BLOCK_N": 128, "GROUP_M": 8, "TMA": 1, "num_warps": 4, "num_stages": 4}
TUNED: dict[str, dict[str, int]] = {
    "16x8192x2048": {
        "BLOCK_M": 16,
        "BLOCK_N": 32,
        "GROUP_M": 8,
        "TMA": 0,
        "num_stages": 5,
        "num_warps": 4,
    },
    "128x8192x2048": {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "GROUP_M": 8,
        "TMA": 0,
        "num_stages": 4,
        "num_warps": 4,
    },
    "4096x8192x2048": _PREFILL,
    "4096x4096x8192": _PREFILL,
    "4096x8192x16384": _PREFILL,
    "4096x2048x8192": _PREFILL,
}


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


@triton.jit
def _fp8_gemm_tma_kernel(
    out_ptr,  # *bf16, [M, N], contiguous
    a_desc,  # [M, K] e4m3, block [BLOCK_M, GROUP]
    a_s_ptr,  # *fp32, [M, K / GROUP]
    b_desc,  # [N, K] e4m3, block [BLOCK_N, GROUP]
    b_s_ptr,  # *fp32, [cdiv(N, GROUP), K / GROUP]
    M,
    N,
    K,  # a multiple of GROUP
    stride_asm,
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
    # Scale rows past M wrap onto valid ones (TMA zero-fills a's rows there; never stored).
    a_s_rows = a_s_ptr + (rm % M).to(tl.int64) * stride_asm
    b_s_row = b_s_ptr + ((pid_n * BLOCK_N) // GROUP) * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in tl.range(0, K // GROUP, warp_specialize=True):
        a = a_desc.load([pid_m * BLOCK_M, kb * GROUP])
        b = b_desc.load([pid_n * BLOCK_N, kb * GROUP])
        s = tl.load(a_s_rows + kb) * tl.load(b_s_row + kb)
        acc += tl.dot(a, b.T) * s[:, None]
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


def _tma_ok(a: torch.Tensor, b: torch.Tensor) -> bool:
    # TensorDescriptor's (and TMA's) rules: a 16-byte aligned base, 16-byte aligned row strides
    # (e4m3 is one byte an entry) and a unit last stride. The judge's strided and offset `a`
    # can break the first two; b is contiguous by contract, checked all the same, since an
    # unmet rule is an assert in TensorDescriptor, not a slower path.
    return all(
        t.stride(1) == 1 and t.stride(0) % 16 == 0 and t.data_ptr() % 16 == 0 for t in (a, b)
    )


def fp8_gemm(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    m, k = a.shape
    n = b.shape[0]
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    if out.numel() > 0:
        cfg = dict(_config(m, n, k))
        tma = cfg.pop("TMA", 0)
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        if tma and _tma_ok(a, b):
            a_desc = TensorDescriptor(a, [m, k], [a.stride(0), 1], [cfg["BLOCK_M"], GROUP])
            b_desc = TensorDescriptor(b, [n, k], [b.stride(0), 1], [cfg["BLOCK_N"], GROUP])
            _fp8_gemm_tma_kernel[grid](
                out,
                a_desc,
                a_scale,
                b_desc,
                b_scale,
                m,
                n,
                k,
                a_scale.stride(0),
                b_scale.stride(0),
                out.stride(0),
                GROUP=GROUP,
                **cfg,
            )
        else:
            _fp8_gemm_kernel[grid](
                out,
                a,
                a_scale,
                b,
                b_scale,
                m,
                n,
                k,
                a.stride(0),
                a.stride(1),
                a_scale.stride(0),
                b.stride(0),
                b.stride(1),
                b_scale.stride(0),
                out.stride(0),
                GROUP=GROUP,
                **cfg,
            )
    return out
