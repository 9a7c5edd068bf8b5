"""Fused MoE as grouped GEMMs over token-slots sorted by expert, the shipped kernel
(evaluations/fused_moe/20261203-092552-agent-844f r01-c01-tuned) with its two GEMMs walked in
L2-friendly order, the intermediate split once instead of once per output tile, and a two-launch
path for decode of a few token-slots.

y[m] = sum_j topk_weights[m, j] * (silu(x[m] @ Wg.T) * (x[m] @ Wu.T)) @ W2.T, e = topk_ids[m, j].

What changed from the shipped kernel, and why:
- Order of the GEMM tiles. The shipped grids are (block, column tile) with the block on axis 0,
  so the ~132 programs in flight are 132 different blocks at one column tile, and each column
  tile sweeps every block's rows again. The down GEMM's A operand (the fp32 intermediate,
  M*k*I*4 bytes: 100 MB at qwen3_30b_a3b_M4096, 59 MB at mixtral_8x7b_tp8_M4096) does not fit
  the 50 MB L2, so it came from DRAM once per hidden tile: 16 and 32 times, 1.6 and 1.9 GB, 380
  and 440 us at the H200's ~4.3 TB/s, of the 1345 and 1261 us measured. Here both GEMMs take a
  1-D grid swizzled in groups of GROUP blocks (Triton's grouped ordering): the programs in
  flight are a few blocks times all their column tiles, so each block's rows come from DRAM
  about once, and an expert's weight tile is shared by its neighbouring blocks while it sits
  in L2 (its blocks are adjacent in the sorted order, as before).
- The intermediate is split once. The down GEMM keeps its precision (the fp32 intermediate as
  a 16-bit high part and the 16-bit rounding of the rest, both through the tensor cores); the
  split moves into the up kernel's epilogue, which stores the two 16-bit halves (the same 4
  bytes per element as the fp32 buffer), where every hidden tile of the down kernel loaded
  fp32 and split it again (16 to 32 times per element). The down kernel's A tiles are then
  16-bit loads that go to shared memory as they are. The same halves bit for bit, so the same
  result.
- Decode, up to DIRECT_SLOTS token-slots (M=1 at k=8 or k=2): no grouping kernel, no partial
  buffer, no sum kernel. The up kernel is a GEMV per (slot, 16 intermediate columns) that
  reads its slot's expert id itself; the down kernel a GEMV per (token, 8 or 32 hidden
  columns) that loads all the token's k experts' rows in one [k, rows, 256] tile a step and
  sums the k weighted results in a fixed order (a tree over the slots, where the shipped sum
  kernel adds them one after another: the same fp32 adds, a different fixed order), writing
  y. fp32 FMAs throughout, so the intermediate is not rounded at all. Two launches where the
  shipped path has four, 384 and 256 programs at qwen3_30b_a3b_M1 (224 and 128 at
  mixtral_8x7b_tp8_M1) where its GEMM grids had 96 and 256, each with ~32 KB of weights in
  flight a step (these loads feed no dot, so Triton does not pipeline them: a step's width is
  what keeps the bytes in flight). A row's k experts are distinct, so at M=1 each expert's
  weights are read once, as the grouped path reads them; a few tokens sharing an expert read
  it again, from L2.
- TUNE_SPACE offers BLOCK_M 128 as well (two warpgroups of 64 rows at num_warps 8): at
  256 to 1024 slots an expert (the M=4096 shapes) a 64-row tile does half the MMA work per
  byte of weight tile that a 128-row one does. A config past shared memory fails alone in the
  tuner. TUNED holds the shipped picks until the tuner runs again.
Bytes and flops are otherwise the shipped kernel's: the touched experts' w1 and w2 once, x, y,
the routing, the (M*k, I) intermediate (4 bytes an element, written once, now read about once)
and the (M*k, H) fp32 partial buffer (written once, read once by the fixed-order sum); flops
2*M*k*3*I*H, the down third twice over for the split. The prefill shapes aim at the tensor
cores' bound with that split (4/3 of the nominal flops), the decode shapes at the weights'
bytes. Given up: nothing in precision or order; the sum keeps a fixed order, no atomics.

Limits: expert offsets are int64 (expert.to(tl.int64) * stride), slot and token offsets int64,
and tokens sit on no grid's y axis (the GEMM grids are 1-D over blocks times tiles; the sum's
and the direct down kernel's grids have tokens on axis 0).
"""

import functools
import math

import torch
import triton
import triton.language as tl

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<M>x<E>x<H>x<I>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {
    "BLOCK_M": [16, 64, 128],
    "BLOCK_N": [32, 64, 128],
    "BLOCK_K": [64, 128],
    "num_warps": [4, 8],
}
DEFAULT_CONFIG = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {
    "1024x128x2048x1024": {"BLOCK_K": 64, "BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4},
    "1024x8x4096x2048": {"BLOCK_K": 64, "BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4},
    "128x128x2048x1024": {"BLOCK_K": 128, "BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4},
    "128x8x4096x2048": {"BLOCK_K": 64, "BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4},
    "16x128x2048x1024": {"BLOCK_K": 128, "BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 4},
    "16x8x4096x2048": {"BLOCK_K": 128, "BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 4},
    "1x128x2048x1024": {"BLOCK_K": 128, "BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4},
    "1x8x4096x2048": {"BLOCK_K": 128, "BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4},
    "4096x128x2048x1024": {"BLOCK_K": 64, "BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4},
    "4096x8x4096x2048": {"BLOCK_K": 64, "BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 4},
}
BLOCK_SLOTS = 256  # token-slots per program of the counting and scatter kernels
# Up to this many token-slots (decode) the grouping is one program instead of four launches.
SMALL_SLOTS = 128
# Up to this many token-slots the call takes the direct path (two GEMV launches, no grouping).
DIRECT_SLOTS = 8
# The direct up GEMV's tile: DIRECT_N columns of gate and of up by DIRECT_K of H a step, 32 KB
# of weights in flight per program (its loads feed no dot, so nothing pipelines them).
DIRECT_N = 16
DIRECT_K = 512
# The direct down GEMV's: k experts x BLOCK_N rows x DIRECT_K_DOWN of I a step, about
# DIRECT_TILE elements (32 KB), BLOCK_N = 8 at k=8 and 32 at k=2.
DIRECT_K_DOWN = 256
DIRECT_TILE = 16384
# Blocks per group of the swizzled GEMM grids: the programs in flight cover GROUP blocks and
# all their column tiles.
GROUP = 8


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
def _tile(pid, n_blocks, n_tiles, GROUP: tl.constexpr):
    """(block, column tile) of a 1-D grid in groups of GROUP blocks, the tile major inside a
    group: the programs in flight share a few blocks' rows and their experts' weight tiles."""
    per_group = GROUP * n_tiles
    first = (pid // per_group) * GROUP
    size = tl.minimum(n_blocks - first, GROUP)
    return first + (pid % per_group) % size, (pid % per_group) // size


@triton.jit
def _up_kernel(
    hi_ptr,  # *T2, [M*k, I], contiguous: the 16-bit rounding of silu(gate) * up (T2 = w2's)
    lo_ptr,  # *T2, [M*k, I]: the 16-bit rounding of what hi leaves
    x_ptr,  # *T, [M, H], any strides
    w1_ptr,  # *T, [E, 2I, H]: gate rows [0, I), up rows [I, 2I)
    sorted_ptr,
    block_expert_ptr,
    n_blocks,
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
    GROUP: tl.constexpr,
):
    b, t = _tile(tl.program_id(0), n_blocks, tl.cdiv(inter, BLOCK_N), GROUP)
    expert = tl.load(block_expert_ptr + b)
    if expert < 0:
        return
    slots = tl.load(sorted_ptr + b * BLOCK_M + tl.arange(0, BLOCK_M))
    ok = slots < n_slots
    token = tl.where(ok, slots // topk, 0).to(tl.int64)
    cols = t * BLOCK_N + tl.arange(0, BLOCK_N)
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
    # The down GEMM's operand in two 16-bit halves (hi + lo carries ~22 bits), split here once.
    hi = act.to(hi_ptr.dtype.element_ty)
    lo = (act - hi.to(tl.float32)).to(hi_ptr.dtype.element_ty)
    at = slots.to(tl.int64)[:, None] * inter + cols[None, :]
    keep = ok[:, None] & col_ok[None, :]
    tl.store(hi_ptr + at, hi, mask=keep)
    tl.store(lo_ptr + at, lo, mask=keep)


@triton.jit
def _down_kernel(
    part_ptr,  # *fp32, [M*k, H], contiguous: each slot's weighted expert output
    hi_ptr,  # *T2, [M*k, I]
    lo_ptr,  # *T2, [M*k, I]
    w2_ptr,  # *T2, [E, H, I]
    tw_ptr,  # *fp32, [M, k]: topk_weights
    sorted_ptr,
    block_expert_ptr,
    n_blocks,
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
    GROUP: tl.constexpr,
):
    b, t = _tile(tl.program_id(0), n_blocks, tl.cdiv(hidden, BLOCK_N), GROUP)
    expert = tl.load(block_expert_ptr + b)
    if expert < 0:
        return
    slots = tl.load(sorted_ptr + b * BLOCK_M + tl.arange(0, BLOCK_M))
    ok = slots < n_slots
    safe = tl.where(ok, slots, 0).to(tl.int64)
    cols = t * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < hidden
    ks = tl.arange(0, BLOCK_K)
    a_at = safe[:, None] * inter
    w_cols = w2_ptr + expert.to(tl.int64) * stride_w2e + cols[None, :] * stride_w2h
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, inter, BLOCK_K):
        k_ok = (k0 + ks) < inter
        amask = ok[:, None] & k_ok[None, :]
        hi = tl.load(hi_ptr + a_at + (k0 + ks)[None, :], mask=amask, other=0.0)
        lo = tl.load(lo_ptr + a_at + (k0 + ks)[None, :], mask=amask, other=0.0)
        w = tl.load(w_cols + (k0 + ks)[:, None] * stride_w2i, mask=k_ok[:, None] & col_ok[None, :],
                    other=0.0)  # fmt: skip
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


@triton.jit
def _up_direct_kernel(
    act_ptr,  # *fp32, [M*k, I], contiguous
    x_ptr,  # *T, [M, H], any strides
    w1_ptr,  # *T, [E, 2I, H]
    ids_ptr,  # *int32, [M, k]
    topk,
    hidden,
    inter,
    stride_xm,
    stride_xh,
    stride_w1e,
    stride_w1n,
    stride_w1h,
    stride_idm,
    stride_idk,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One token-slot's gate and up columns as GEMVs in fp32 FMAs: at decode the weights'
    bytes are the cost, and a 16-row tensor-core tile would hold one live row. Each step
    reduces its [BLOCK_N, BLOCK_K] products at once, so no 2-D accumulator holds registers
    and a step's loads can be wide (they feed no dot, so nothing pipelines them: a program's
    bytes in flight are one step's)."""
    s = tl.program_id(0)
    token = (s // topk).to(tl.int64)
    expert = tl.load(ids_ptr + token * stride_idm + (s % topk) * stride_idk).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < inter
    ks = tl.arange(0, BLOCK_K)
    w_gate = w1_ptr + expert * stride_w1e + cols[:, None] * stride_w1n
    w_up = w_gate + inter * stride_w1n
    gate = tl.zeros((BLOCK_N,), dtype=tl.float32)
    up = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, hidden, BLOCK_K):
        k_ok = (k0 + ks) < hidden
        xv = tl.load(x_ptr + token * stride_xm + (k0 + ks) * stride_xh, mask=k_ok, other=0.0)
        xv = xv.to(tl.float32)[None, :]
        wmask = col_ok[:, None] & k_ok[None, :]
        wg = tl.load(w_gate + (k0 + ks)[None, :] * stride_w1h, mask=wmask, other=0.0)
        wu = tl.load(w_up + (k0 + ks)[None, :] * stride_w1h, mask=wmask, other=0.0)
        gate += tl.sum(wg.to(tl.float32) * xv, axis=1)
        up += tl.sum(wu.to(tl.float32) * xv, axis=1)
    act = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(act_ptr + s.to(tl.int64) * inter + cols, act, mask=col_ok)


@triton.jit
def _down_direct_kernel(
    y_ptr,  # *T, [M, H], contiguous
    act_ptr,  # *fp32, [M*k, I]
    w2_ptr,  # *T, [E, H, I]
    tw_ptr,  # *fp32, [M, k]
    ids_ptr,  # *int32, [M, k]
    topk,
    hidden,
    inter,
    stride_w2e,
    stride_w2h,
    stride_w2i,
    stride_twm,
    stride_twk,
    stride_idm,
    stride_idk,
    BLOCK_J: tl.constexpr,  # power of two >= k
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One token's BLOCK_N outputs: all its k slots' GEMVs against their experts' w2 at once
    (a step loads a [k, BLOCK_N, BLOCK_K] tile: k experts' bytes in flight, not one's), in fp32
    FMAs; each slot's sum scaled by its routing weight, the k of them summed in a fixed order
    (a tree over the slots), rounded once."""
    m = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < hidden
    js = tl.arange(0, BLOCK_J)
    j_ok = js < topk
    ks = tl.arange(0, BLOCK_K)
    experts = tl.load(ids_ptr + m * stride_idm + js * stride_idk, mask=j_ok, other=0).to(tl.int64)
    weights = tl.load(tw_ptr + m * stride_twm + js * stride_twk, mask=j_ok, other=0.0)
    w_rows = w2_ptr + experts[:, None, None] * stride_w2e + cols[None, :, None] * stride_w2h
    a_rows = act_ptr + (m * topk + js)[:, None] * inter
    row_ok = j_ok[:, None, None] & col_ok[None, :, None]
    acc = tl.zeros((BLOCK_J, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, inter, BLOCK_K):
        k_ok = (k0 + ks) < inter
        a = tl.load(a_rows + (k0 + ks)[None, :], mask=j_ok[:, None] & k_ok[None, :], other=0.0)
        w = tl.load(w_rows + (k0 + ks)[None, None, :] * stride_w2i,
                    mask=row_ok & k_ok[None, None, :], other=0.0)  # fmt: skip
        acc += tl.sum(w.to(tl.float32) * a[:, None, :], axis=2)
    y = tl.sum(acc * weights[:, None], axis=0)
    tl.store(y_ptr + m * hidden + cols, y.to(y_ptr.dtype.element_ty), mask=col_ok)


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
    n_slots = m * topk
    dev = x.device
    ids_s = (topk_ids.stride(0), topk_ids.stride(1))
    if n_slots <= DIRECT_SLOTS:
        act = torch.empty((n_slots, inter), dtype=torch.float32, device=dev)
        _up_direct_kernel[(n_slots, triton.cdiv(inter, DIRECT_N))](
            act, x, w1, topk_ids, topk, h, inter, x.stride(0), x.stride(1),
            w1.stride(0), w1.stride(1), w1.stride(2), *ids_s,
            BLOCK_N=DIRECT_N, BLOCK_K=DIRECT_K, num_warps=8,
        )  # fmt: skip
        block_j = triton.next_power_of_2(topk)
        # About DIRECT_TILE elements of w2 a step: the k experts' rows side by side.
        block_n = max(4, DIRECT_TILE // (block_j * DIRECT_K_DOWN))
        _down_direct_kernel[(m, triton.cdiv(h, block_n))](
            y, act, w2, topk_weights, topk_ids, topk, h, inter,
            w2.stride(0), w2.stride(1), w2.stride(2), topk_weights.stride(0),
            topk_weights.stride(1), *ids_s, BLOCK_J=block_j, BLOCK_N=block_n,
            BLOCK_K=DIRECT_K_DOWN, num_warps=8,
        )  # fmt: skip
        return y
    cfg = _config(m, n_experts, h, inter)
    bm, bn, bk, warps = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg["num_warps"]
    block_e = triton.next_power_of_2(n_experts)
    # Every expert's segment is padded to a multiple of BLOCK_M, and a block holds one slot at
    # least: at most this many blocks.
    max_blocks = min(triton.cdiv(n_slots, bm) + n_experts, n_slots)
    block_expert = torch.empty((max_blocks,), dtype=torch.int32, device=dev)
    sorted_slots = torch.empty((max_blocks * bm,), dtype=torch.int32, device=dev)
    act_hi = torch.empty((n_slots, inter), dtype=w2.dtype, device=dev)
    act_lo = torch.empty((n_slots, inter), dtype=w2.dtype, device=dev)
    part = torch.empty((n_slots, h), dtype=torch.float32, device=dev)
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
    _up_kernel[(max_blocks * triton.cdiv(inter, bn),)](
        act_hi, act_lo, x, w1, sorted_slots, block_expert, max_blocks, n_slots, topk, h, inter,
        x.stride(0), x.stride(1), w1.stride(0), w1.stride(1), w1.stride(2),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP=GROUP, num_warps=warps,
    )  # fmt: skip
    _down_kernel[(max_blocks * triton.cdiv(h, bn),)](
        part, act_hi, act_lo, w2, topk_weights, sorted_slots, block_expert, max_blocks, n_slots,
        topk, h, inter, w2.stride(0), w2.stride(1), w2.stride(2), topk_weights.stride(0),
        topk_weights.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP=GROUP, num_warps=warps,
    )  # fmt: skip
    _sum_kernel[(m, triton.cdiv(h, 1024))](y, part, h, topk, BLOCK=1024)
    return y
