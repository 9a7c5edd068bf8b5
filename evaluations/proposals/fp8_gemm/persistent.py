"""Block-scaled FP8 GEMM: out[M, N] = (a * a_scale) @ (b * b_scale).T, e4m3 a and b, bf16 out.

What changed from the shipped kernel (evaluations/fp8_gemm/20261202-215844-agent-8055, r01-c01
tuned), and why:
- A persistent launch: at most OCC programs per SM (OCC a config key), each walking the tiles
  pid, pid + programs, ... in the shipped grouped order (GROUP_M tile rows share a and b in L2),
  with the tile loop flattened into the K loop (tl.range(..., flatten=True)): the next tile's
  first cp.async stages are issued while the current tile's last steps and its bf16 store run,
  where the shipped kernel's programs each fill their 3-4 stage pipeline from empty and drain it
  before storing. Compiled for sm_90 here: 128x128 tiles, 8 warps, 3 stages hold 128 KiB of
  shared memory (one stage more than unflattened) and 218 registers, no spills; one CTA per SM.
  At K = 2048 (16 steps a tile) the fill and the epilogue are the largest share of a tile's time,
  so the down projection gains most; at K = 7168 and 16384 (56 and 128 steps) little.
- The arithmetic is the shipped kernel's to the bit: a fresh tensor-core dot per 128-wide K
  block (the hardware's fp8 sums span one scale block only), scaled by a_scale[row] * b_scale in
  fp32 and added to an fp32 accumulator, in the same K order; unmasked wrapped loads as before.
- Decode and batch buckets keep the shipped tiles with OCC = 8: their grids (at most 896
  programs) are under 8 per SM, so every program has one tile, as in the shipped launch.

Per bench shape at M = 4096 (bytes: M*K + N*K once, out 2*M*N; flops 2*M*N*K at the fp8 rate,
1979 TFLOP/s dense on the H200): 4096x7168x2048 120 GFLOP (1792 tiles of 128x128, 13.6 a
program), 4096x4096x7168 241 GFLOP (1024 tiles), 4096x7168x16384 962 GFLOP (1792), 4096x1536x
7168 90 GFLOP (384 tiles, 2.9 a program); all compute-bound. The shipped kernel ran the first
two at 750-775 TFLOP/s, bf16 cuBLAS's speed. What holds it there, read from its sm_90 build:
each step waits on its own wgmma (wait_group 0: the block's dot is a fresh accumulator the scale
FMA needs at once), so the tensor cores idle through the FMA, the barrier and the next step's
issue. The remedy that removes that wait (TMA loads and a warp-specialized K loop: a load warp
and two ping-ponging 4-warp consumers, which Triton 3.6 builds for sm_90 without spills at
128x128) needs a tensor descriptor made on the host (triton.tools) or a runtime allocator
(triton.set_allocator), neither of which a candidate may import; warp specialization over
pointer loads does not compile in 3.6. Given up here: 128x256 tiles (an fp32 dot result beside
the fp32 accumulator needs 256 registers a thread at 8 warps).
"""

import functools
import math

import torch
import triton
import triton.language as tl

GROUP = 128  # entries per scale block along K (and along N for b)
TUNE_SPACE = {
    "BLOCK_M": [16, 32, 64, 128],
    "BLOCK_N": [32, 64, 128],
    "GROUP_M": [8],
    "OCC": [1, 2, 8],  # programs per SM at most (the persistent grid)
    "num_warps": [4, 8],
    "num_stages": [3, 4, 5],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 64,
    "BLOCK_N": 64,
    "GROUP_M": 8,
    "OCC": 8,
    "num_warps": 4,
    "num_stages": 4,
}
# Keyed "<M>x<N>x<K>" rounded up to powers of two; a shape takes the nearest bucket.
# Decode and batch buckets are the shipped ones (OCC 8: one tile a program); the prefill buckets
# are the bench's four weights at 4096 tokens.
_PREFILL = {"BLOCK_M": 128, "BLOCK_N": 128, "GROUP_M": 8, "OCC": 1, "num_warps": 8, "num_stages": 3}
TUNED: dict[str, dict[str, int]] = {
    "16x8192x2048": {
        "BLOCK_M": 16,
        "BLOCK_N": 32,
        "GROUP_M": 8,
        "OCC": 8,
        "num_stages": 5,
        "num_warps": 4,
    },
    "128x8192x2048": {
        "BLOCK_M": 64,
        "BLOCK_N": 64,
        "GROUP_M": 8,
        "OCC": 8,
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
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    rk = tl.arange(0, GROUP)
    # flatten: the next tile's first loads are pipelined under this tile's last steps and store.
    for tile in tl.range(tl.program_id(0), grid_m * grid_n, tl.num_programs(0), flatten=True):
        first_m = (tile // width) * GROUP_M
        rows_here = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (tile % width) % rows_here
        pid_n = (tile % width) // rows_here
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        # Wrapped indices for the loads: rows past M (columns past N) read valid memory, and
        # their results are masked at the store.
        lm = (rm % M).to(tl.int64)
        ln = (rn % N).to(tl.int64)
        a_tile = a_ptr + lm[:, None] * stride_am + rk[None, :] * stride_ak
        b_tile = b_ptr + ln[None, :] * stride_bn + rk[:, None] * stride_bk
        a_s_rows = a_s_ptr + lm * stride_asm
        b_s_row = b_s_ptr + ((pid_n * BLOCK_N) // GROUP) * stride_bsn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kb in range(0, K // GROUP):
            a = tl.load(a_tile + kb * GROUP * stride_ak)
            b = tl.load(b_tile + kb * GROUP * stride_bk)
            s = tl.load(a_s_rows + kb) * tl.load(b_s_row + kb)
            acc += tl.dot(a, b) * s[:, None]
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
        cfg = dict(_config(m, n, k))
        occ = cfg.pop("OCC", 1)
        tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
        sms = torch.cuda.get_device_properties(a.device).multi_processor_count
        grid = (min(tiles, occ * sms),)
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
