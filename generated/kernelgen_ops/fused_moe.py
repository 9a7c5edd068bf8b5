# kernelgen_ops.fused_moe: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/fused_moe.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/fused_moe/20261203-092552-agent-844f/candidates/r01-c01-tuned/source.py
# record    evaluations/fused_moe/20261203-092552-agent-844f/candidates/r01-c01-tuned/record.json
# proposer  tune (model -, round 1, parent r01-c01)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 25.64x geomean over 8 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           M16_E128k8 bfloat16: 69.17x vs torch.compile
#           M128_E128k8 bfloat16: 75.68x vs eager
#           M1024_E128k8 bfloat16: 108.37x vs torch.compile
#           M4096_E128k8 bfloat16: 20.35x vs torch.compile
#           M16_E8k2 bfloat16: 14.99x vs eager
#           M128_E8k2 bfloat16: 14.25x vs eager
#           M1024_E8k2 bfloat16: 10.04x vs eager
#           M4096_E8k2 bfloat16: 7.53x vs eager
# speedups  geomean 25.79x vs eager, 26.33x vs torch.compile, - vs seed
# peers     eager = references/fused_moe.py:eager, the op as torch users call it; torch.compile of
#           the same
#           M1_E128k8 bfloat16: 33.3 us, - eager, - compile, - seed
#           M16_E128k8 bfloat16: 322.8 us, 69.45x eager, 69.17x compile, - seed
#           M128_E128k8 bfloat16: 336.8 us, 75.68x eager, 82.46x compile, - seed
#           M1024_E128k8 bfloat16: 466.0 us, 110.72x eager, 108.37x compile, - seed
#           M4096_E128k8 bfloat16: 1345.0 us, 20.78x eager, 20.35x compile, - seed
#           M1_E8k2 bfloat16: 42.0 us, - eager, - compile, - seed
#           M16_E8k2 bfloat16: 109.2 us, 14.99x eager, 16.04x compile, - seed
#           M128_E8k2 bfloat16: 134.0 us, 14.25x eager, 14.95x compile, - seed
#           M1024_E8k2 bfloat16: 351.1 us, 10.04x eager, 10.14x compile, - seed
#           M4096_E8k2 bfloat16: 1261.2 us, 7.53x eager, 7.54x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           M1_E128k8, M16_E128k8, M128_E128k8, M1024_E128k8, M4096_E128k8, M1_E8k2, M16_E8k2,
#           M128_E8k2, M1024_E8k2, M4096_E8k2; torch's op at no shape
# sha256    4952a581d215b334f5c948ecd9b6d01b2affcf5300d63a9547cbd91b07476671
# promoted  2026-12-03T09:40:35+00:00
#
# ruff: noqa
# fmt: off
"""Fused MoE as grouped GEMMs over token-slots sorted by expert (SGLang's and vLLM's plan), in
Triton from the routing on: no torch op computes anything.

y[m] = sum_j topk_weights[m, j] * (silu(x[m] @ Wg.T) * (x[m] @ Wu.T)) @ W2.T, e = topk_ids[m, j].

What changed from the seed, and why:
- The seed reads an expert's weights once per (token, slot) with GEMVs: M*k weight reads where
  min(E, M*k) do, and no tensor cores. Here the token-slots are grouped by expert into blocks of
  BLOCK_M rows (each expert's segment padded to a multiple of BLOCK_M), and each block is one
  tile row of a GEMM against its expert's weights: every touched expert's weights are read once
  per block of its tokens, with tl.dot.
- The grouping is four small kernels: count the slots per expert (atomics), an exclusive scan of
  the padded counts (one program), each block's expert and padding rows (a search over the
  segment ends), and the slots scattered into their expert's segment (an atomic cursor). A
  slot's place inside its segment varies from call to call; its row of each GEMM does not
  depend on the other rows of its tile, so the result does not vary. At decode (up to
  SMALL_SLOTS token-slots) one program does all four, with each slot's rank counted among the
  earlier slots: three launches fewer where launches are much of the time.
- The GEMM grids have one row per possible block, at most min(cdiv(M*k, BLOCK_M) + E, M*k):
  8 at M=1, k=8, where E + 1 would launch 129.
- Up: one program per (block, BLOCK_N intermediate columns), the gate and up tiles as two
  accumulators over H, silu(gate) * up in fp32 into an (M*k, I) fp32 buffer.
- Down: one program per (block, BLOCK_N hidden columns). The reference asks for an fp32
  intermediate (a 16-bit one misses the per-element tolerance near zero), so each intermediate
  tile is split into a 16-bit high part and the 16-bit rounding of the rest, and both go through
  the tensor cores against w2 (hi + lo carries ~22 bits): twice the MMA work of this GEMM, a
  third of the flops, instead of fp32 FMAs. Each slot's row is scaled by its routing weight and
  stored in fp32 to an (M*k, H) buffer.
- A last kernel sums each token's k rows in slot order and rounds once: a fixed order, no
  atomics on the output.
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<M>x<E>x<H>x<I>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {
    "BLOCK_M": [16, 64],
    "BLOCK_N": [32, 64, 128],
    "BLOCK_K": [64, 128],
    "num_warps": [4, 8],
}
DEFAULT_CONFIG = _runtime.default_config("fused_moe")  # configs/fused_moe.json
TUNED = _runtime.tuned("fused_moe")  # per device: configs/fused_moe.json
BLOCK_SLOTS = 256  # token-slots per program of the counting and scatter kernels
# Up to this many token-slots (decode) the grouping is one program instead of four launches.
SMALL_SLOTS = 128


@triton.jit
def _count_kernel(
    counts_ptr,  # *int32, [E], zeroed: slots per expert
    ids_ptr,  # *int32, [M, k], any strides
    n_slots,  # M * k
    topk,  # k
    stride_idm,
    stride_idk,
    BLOCK: tl.constexpr,
):
    s = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = s < n_slots
    e = tl.load(ids_ptr + (s // topk) * stride_idm + (s % topk) * stride_idk, mask=ok, other=0)
    tl.atomic_add(counts_ptr + e, 1, mask=ok)


@triton.jit
def _plan_kernel(
    ends_ptr,  # *int32, [E]: each expert's padded segment ends here (rows)
    counts_ptr,  # *int32, [E]
    n_experts,
    BLOCK_M: tl.constexpr,
    BLOCK_E: tl.constexpr,  # power of two >= E
):
    es = tl.arange(0, BLOCK_E)
    c = tl.load(counts_ptr + es, mask=es < n_experts, other=0)
    padded = (c + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    tl.store(ends_ptr + es, tl.cumsum(padded, 0), mask=es < n_experts)


@triton.jit
def _blocks_kernel(
    block_expert_ptr,  # *int32, [max_blocks]: the expert of each block, -1 past the last
    sorted_ptr,  # *int32, [max_blocks * BLOCK_M]: filled with n_slots (padding) here
    ends_ptr,  # *int32, [E]
    n_experts,
    n_slots,
    BLOCK_M: tl.constexpr,
    BLOCK_E: tl.constexpr,
):
    b = tl.program_id(0)
    row0 = b * BLOCK_M
    es = tl.arange(0, BLOCK_E)
    ends = tl.load(ends_ptr + es, mask=es < n_experts, other=2147483647)
    expert = tl.sum((ends <= row0).to(tl.int32), axis=0)
    total = tl.load(ends_ptr + n_experts - 1)
    tl.store(block_expert_ptr + b, tl.where(row0 < total, expert, -1))
    rows = row0 + tl.arange(0, BLOCK_M)
    tl.store(sorted_ptr + rows, tl.full((BLOCK_M,), 0, tl.int32) + n_slots)


@triton.jit
def _scatter_kernel(
    sorted_ptr,  # *int32: slots, grouped by expert
    cursor_ptr,  # *int32, [E], zeroed
    ends_ptr,  # *int32, [E]
    counts_ptr,  # *int32, [E]
    ids_ptr,
    n_slots,
    topk,
    stride_idm,
    stride_idk,
    BLOCK_M: tl.constexpr,
    BLOCK: tl.constexpr,
):
    s = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = s < n_slots
    e = tl.load(ids_ptr + (s // topk) * stride_idm + (s % topk) * stride_idk, mask=ok, other=0)
    c = tl.load(counts_ptr + e, mask=ok, other=0)
    start = tl.load(ends_ptr + e, mask=ok, other=0) - (c + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    at = tl.atomic_add(cursor_ptr + e, 1, mask=ok)
    tl.store(sorted_ptr + start + at, s, mask=ok)


@triton.jit
def _align_small_kernel(
    block_expert_ptr,  # *int32, [max_blocks]
    sorted_ptr,  # *int32, [max_blocks * BLOCK_M]
    ids_ptr,
    n_slots,
    topk,
    stride_idm,
    stride_idk,
    n_experts,
    max_blocks,
    BLOCK_M: tl.constexpr,
    BLOCK_S: tl.constexpr,  # power of two >= n_slots (at most SMALL_SLOTS)
    BLOCK_E: tl.constexpr,
    BLOCK_B: tl.constexpr,  # power of two >= max_blocks
):
    """The four grouping kernels in one program, for decode: counts, scan, each slot's rank in
    its expert's segment (the earlier slots of the same expert) and each block's expert."""
    s = tl.arange(0, BLOCK_S)
    ok = s < n_slots
    e = tl.load(ids_ptr + (s // topk) * stride_idm + (s % topk) * stride_idk, mask=ok,
                other=BLOCK_E)  # fmt: skip
    es = tl.arange(0, BLOCK_E)
    counts = tl.sum(((e[None, :] == es[:, None]) & ok[None, :]).to(tl.int32), axis=1)
    padded = (counts + BLOCK_M - 1) // BLOCK_M * BLOCK_M
    ends = tl.cumsum(padded, 0)
    starts = ends - padded
    earlier = (e[:, None] == e[None, :]) & (s[None, :] < s[:, None]) & ok[None, :]
    rank = tl.sum(earlier.to(tl.int32), axis=1)
    start = tl.sum(tl.where(es[None, :] == e[:, None], starts[None, :], 0), axis=1)
    rows = tl.arange(0, BLOCK_B * BLOCK_M)
    tl.store(sorted_ptr + rows, tl.full((BLOCK_B * BLOCK_M,), 0, tl.int32) + n_slots,
             mask=rows < max_blocks * BLOCK_M)  # fmt: skip
    # The padding above is written by other threads than the slots below may land on.
    tl.debug_barrier()
    tl.store(sorted_ptr + start + rank, s, mask=ok)
    b = tl.arange(0, BLOCK_B)
    ends_e = tl.where(es < n_experts, ends, 2147483647)
    expert = tl.sum((ends_e[None, :] <= (b * BLOCK_M)[:, None]).to(tl.int32), axis=1)
    total = tl.max(tl.where(es < n_experts, ends, 0), axis=0)
    tl.store(block_expert_ptr + b, tl.where(b * BLOCK_M < total, expert, -1), mask=b < max_blocks)


@triton.jit
def _up_kernel(
    act_ptr,  # *fp32, [M*k, I], contiguous
    x_ptr,  # *T, [M, H], any strides
    w1_ptr,  # *T, [E, 2I, H]: gate rows [0, I), up rows [I, 2I)
    sorted_ptr,
    block_expert_ptr,
    n_slots,
    topk,
    hidden,
    inter,
    stride_xm,
    stride_xh,
    stride_w1e,
    stride_w1n,
    stride_w1h,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    b = tl.program_id(0)
    expert = tl.load(block_expert_ptr + b)
    if expert < 0:
        return
    slots = tl.load(sorted_ptr + b * BLOCK_M + tl.arange(0, BLOCK_M))
    ok = slots < n_slots
    token = tl.where(ok, slots // topk, 0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < inter
    ks = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + token[:, None] * stride_xm
    w_gate = w1_ptr + expert.to(tl.int64) * stride_w1e + cols[None, :] * stride_w1n
    w_up = w_gate + inter * stride_w1n
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, hidden, BLOCK_K):
        k_ok = (k0 + ks) < hidden
        xt = tl.load(x_rows + (k0 + ks)[None, :] * stride_xh, mask=ok[:, None] & k_ok[None, :],
                     other=0.0)  # fmt: skip
        wmask = k_ok[:, None] & col_ok[None, :]
        wg = tl.load(w_gate + (k0 + ks)[:, None] * stride_w1h, mask=wmask, other=0.0)
        wu = tl.load(w_up + (k0 + ks)[:, None] * stride_w1h, mask=wmask, other=0.0)
        gate = tl.dot(xt, wg, gate)
        up = tl.dot(xt, wu, up)
    act = gate / (1.0 + tl.exp(-gate)) * up
    out = act_ptr + slots.to(tl.int64)[:, None] * inter + cols[None, :]
    tl.store(out, act, mask=ok[:, None] & col_ok[None, :])


@triton.jit
def _down_kernel(
    part_ptr,  # *fp32, [M*k, H], contiguous: each slot's weighted expert output
    act_ptr,  # *fp32, [M*k, I]
    w2_ptr,  # *T, [E, H, I]
    tw_ptr,  # *fp32, [M, k]: topk_weights
    sorted_ptr,
    block_expert_ptr,
    n_slots,
    topk,
    hidden,
    inter,
    stride_w2e,
    stride_w2h,
    stride_w2i,
    stride_twm,
    stride_twk,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    b = tl.program_id(0)
    expert = tl.load(block_expert_ptr + b)
    if expert < 0:
        return
    slots = tl.load(sorted_ptr + b * BLOCK_M + tl.arange(0, BLOCK_M))
    ok = slots < n_slots
    safe = tl.where(ok, slots, 0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < hidden
    ks = tl.arange(0, BLOCK_K)
    a_rows = act_ptr + safe[:, None] * inter
    w_cols = w2_ptr + expert.to(tl.int64) * stride_w2e + cols[None, :] * stride_w2h
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, inter, BLOCK_K):
        k_ok = (k0 + ks) < inter
        a = tl.load(a_rows + (k0 + ks)[None, :], mask=ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_cols + (k0 + ks)[:, None] * stride_w2i, mask=k_ok[:, None] & col_ok[None, :],
                    other=0.0)  # fmt: skip
        hi = a.to(w.dtype)
        lo = (a - hi.to(tl.float32)).to(w.dtype)
        acc = tl.dot(hi, w, acc)
        acc = tl.dot(lo, w, acc)
    weight = tl.load(tw_ptr + (safe // topk) * stride_twm + (safe % topk) * stride_twk, mask=ok,
                     other=0.0)  # fmt: skip
    out = part_ptr + safe[:, None] * hidden + cols[None, :]
    tl.store(out, acc * weight[:, None], mask=ok[:, None] & col_ok[None, :])


@triton.jit
def _sum_kernel(
    y_ptr,  # *T, [M, H], contiguous
    part_ptr,  # *fp32, [M*k, H]
    hidden,
    topk,
    BLOCK: tl.constexpr,
):
    m = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = cols < hidden
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, topk):
        acc += tl.load(part_ptr + (m * topk + j) * hidden + cols, mask=ok, other=0.0)
    tl.store(y_ptr + m * hidden + cols, acc.to(y_ptr.dtype.element_ty), mask=ok)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def fused_moe(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    m, h = x.shape
    n_experts, two_i, _ = w1.shape
    inter = two_i // 2
    topk = topk_ids.shape[1]
    y = torch.empty((m, h), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(m, n_experts, h, inter)
    bm, bn, bk, warps = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["num_warps"]
    n_slots = m * topk
    block_e = triton.next_power_of_2(n_experts)
    # Every expert's segment is padded to a multiple of BLOCK_M, and a block holds one slot at
    # least: at most this many blocks.
    max_blocks = min(triton.cdiv(n_slots, bm) + n_experts, n_slots)
    dev = x.device
    block_expert = torch.empty((max_blocks,), dtype=torch.int32, device=dev)
    sorted_slots = torch.empty((max_blocks * bm,), dtype=torch.int32, device=dev)
    act = torch.empty((n_slots, inter), dtype=torch.float32, device=dev)
    part = torch.empty((n_slots, h), dtype=torch.float32, device=dev)
    ids_s = (topk_ids.stride(0), topk_ids.stride(1))
    if n_slots <= SMALL_SLOTS:
        _align_small_kernel[(1,)](
            block_expert, sorted_slots, topk_ids, n_slots, topk, *ids_s, n_experts, max_blocks,
            BLOCK_M=bm, BLOCK_S=triton.next_power_of_2(n_slots), BLOCK_E=block_e,
            BLOCK_B=triton.next_power_of_2(max_blocks), num_warps=4 if n_slots <= 32 else 8,
        )  # fmt: skip
    else:
        counts = torch.zeros((n_experts,), dtype=torch.int32, device=dev)
        cursor = torch.zeros((n_experts,), dtype=torch.int32, device=dev)
        ends = torch.empty((n_experts,), dtype=torch.int32, device=dev)
        slot_grid = (triton.cdiv(n_slots, BLOCK_SLOTS),)
        _count_kernel[slot_grid](counts, topk_ids, n_slots, topk, *ids_s, BLOCK=BLOCK_SLOTS)
        _plan_kernel[(1,)](ends, counts, n_experts, BLOCK_M=bm, BLOCK_E=block_e)
        _blocks_kernel[(max_blocks,)](
            block_expert, sorted_slots, ends, n_experts, n_slots, BLOCK_M=bm, BLOCK_E=block_e
        )
        _scatter_kernel[slot_grid](
            sorted_slots, cursor, ends, counts, topk_ids, n_slots, topk, *ids_s,
            BLOCK_M=bm, BLOCK=BLOCK_SLOTS,
        )  # fmt: skip
    _up_kernel[(max_blocks, triton.cdiv(inter, bn))](
        act, x, w1, sorted_slots, block_expert, n_slots, topk, h, inter,
        x.stride(0), x.stride(1), w1.stride(0), w1.stride(1), w1.stride(2),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
    )  # fmt: skip
    _down_kernel[(max_blocks, triton.cdiv(h, bn))](
        part, act, w2, topk_weights, sorted_slots, block_expert, n_slots, topk, h, inter,
        w2.stride(0), w2.stride(1), w2.stride(2), topk_weights.stride(0), topk_weights.stride(1),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps,
    )  # fmt: skip
    _sum_kernel[(m, triton.cdiv(h, 1024))](y, part, h, topk, BLOCK=1024)
    return y


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
