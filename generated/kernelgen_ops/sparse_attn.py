# kernelgen_ops.sparse_attn: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/sparse_attn.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/sparse_attn/20261205-121717-agent-f073/candidates/r01-c01-tuned/source.py
# record    evaluations/sparse_attn/20261205-121717-agent-f073/candidates/r01-c01-tuned/record.json
# proposer  tune (model -, round 1, parent r01-c01)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 6.23x geomean over 5 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           dsv32_decode_h128 bfloat16: 32.38x vs torch.compile
#           dsv32_batch64_h64 bfloat16: 3.52x vs torch.compile
#           dsv32_batch64_h128 bfloat16: 2.95x vs torch.compile
#           dsv32_prefill_h128 bfloat16: 3.69x vs torch.compile
#           gqa_64x64K bfloat16: 7.57x vs torch.compile
# speedups  geomean 9.87x vs eager, 6.23x vs torch.compile, - vs seed
# peers     eager = references/sparse_attn.py:eager, the op as torch users call it; torch.compile of
#           the same
#           dsv32_decode_h128 bfloat16: 18.4 us, 34.49x eager, 32.38x compile, - seed
#           dsv32_batch64_h64 bfloat16: 283.9 us, 6.19x eager, 3.52x compile, - seed
#           dsv32_batch64_h128 bfloat16: 427.3 us, 4.72x eager, 2.95x compile, - seed
#           dsv32_prefill_h128 bfloat16: 9494.3 us, 5.98x eager, 3.69x compile, - seed
#           gqa_64x64K bfloat16: 167.9 us, 15.50x eager, 7.57x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           dsv32_decode_h128, gqa_64x64K, dsv32_prefill_h128; torch's op at no shape
# sha256    438652810afe45ac9f71e84f446f52064b91ebbb5b7c903664f9893d31427d7c
# promoted  2026-12-05T14:08:09+00:00
#
# ruff: noqa
# fmt: off
"""Sparse attention as flash attention over gathered rows, at any head dims: out[t, h] =
softmax(scale * q[t, h] . K_t) @ V_t over the rows K_t (D wide), V_t (Dv wide) of KV head
h // group that token t's indices select. Written for DeepSeek's MLA (D 576 = 512 latent + 64
rope, Dv 512, one KV head under 16, 64 or 128 query heads); GQA and MHA (Dv = D) run the same
code.

What changed from the shipped kernel (evaluations/sparse_attn/20261203-093152-agent-dc80,
r02-c01-tuned), and why:
- v has its own head dim. The shipped kernel took v as wide as k and padded both to one power
  of two: at 576 that is 1024, and its q, k and v tiles, 64 heads x 1024 and 64 slots x 1024 in
  bf16, double-buffered, asked for 655616 bytes of shared memory where sm_90 has 232448.
- q and k are held as two power-of-two tiles, not one padded to 1024: the largest power of two
  within D (MLA's 512 latent columns) and the rest rounded up (its 64 rope columns), and the
  scores are the sum of the two tile products. MLA pads nothing, and no D pads by more than
  its rest does (300: 256 + 64). q's two tiles are loaded once per program, k's two per step.
  Not QK^T over nine 64-wide chunks of D: q would then be loaded again, chunk by chunk, on
  every step (72 KB a step at 64 heads, from L2), where two tiles keep it resident for 72 KB
  of shared memory and make two tile products (K = 512 and 64) instead of nine.
- The P V accumulator is split over Dv in BLOCK_DV columns, one program each (programs along
  Dv, next to each other in the launch order so that siblings reading the same rows of k run
  together and may share them in L2): a program holds (heads x BLOCK_DV) fp32 and one BLOCK_DV
  slice of v per stage. Each sibling computes the scores again: BLOCK_DV = Dv (one program,
  64 x 512 fp32 of accumulator, 128 registers a thread at 8 warps) avoids that where it fits,
  and the tuner chooses. A head group wider than MAX_BLOCK_H (MLA's 128) is split over programs
  the same way.
- Shared memory on sm_90 (Triton 3.6's own figure, the compile-only driver): 180352 bytes at
  64 heads, 576/512 in bf16, with DEFAULT_CONFIG (BLOCK_N 32, BLOCK_DV 256, 2 stages), against
  the shipped kernel's 655616; every config of TUNE_SPACE at MLA's and the bench's dims
  (16, 64 and 128 heads, decode to prefill, fp16, bf16 and fp32), and DEFAULT_CONFIG at 177
  head-dim, head-group and dtype combinations of the domain's CUDA draws, compile within
  232448. That holds because the launcher narrows a config that would not fit a call's dims
  and dtype (fp32 doubles every tile): a narrower BLOCK_DV, then fewer slots a step, then
  fewer stages, by an estimate that came within 4.2 KB of Triton's figure at two stages and
  above it at one. The kernel must never raise OutOfResources where the reference has an
  answer.
- TUNED starts empty: the shipped kernel's picks were tuned at D = 128 and name no BLOCK_DV.
- The merge of split partials runs over Dv in blocks of MERGE_DV columns, so that 64 splits of
  512 columns are not one program's registers.
- Kept as they were: one program serves a KV head's query heads (up to MAX_BLOCK_H) at once,
  both products on the tensor cores with the heads as M; P split in two 16-bit pieces for P V
  (hi = P rounded, lo = the rounding of the rest; TINY keeps a P that rounds to 0 from turning
  an infinite v into NaN, and lo's product sees the non-finite values of v as 0); fp32 inputs
  take IEEE fp32 dots and no split; flash decoding for small T (splits of the slots, running
  max, sum, count and accumulator per split, merged in split order by log-sum-exp); -1 slots
  never read; a NaN score reaches its row through the propagated max; a token with no valid
  slot stores zeros; valid scores all -inf give 0 / 0 = NaN, as the reference's softmax does.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<T>x<topk>" rounded up to powers of two; shapes between buckets take the nearest one. A pick
# that does not fit a call's dims in shared memory is narrowed (_config).
TUNE_SPACE = {
    "BLOCK_N": [32, 64],
    "BLOCK_DV": [128, 256, 512],
    "num_warps": [4, 8],
    "num_stages": [1, 2],
}
DEFAULT_CONFIG = _runtime.default_config("sparse_attn")  # configs/sparse_attn.json
TUNED = _runtime.tuned("sparse_attn")  # per device: configs/sparse_attn.json
# Splits are added until the grid has about this many programs (two per SM of an H200).
TARGET_PROGRAMS = 264
MAX_BLOCK_H = 64  # query heads a program serves: the M of its tile products
MERGE_DV = 128  # columns of the output a merge program writes
# sm_90's shared memory a block may opt into (cudaDevAttrMaxSharedMemoryPerBlockOptin), less a
# margin for what the compiler adds to the tiles _config counts (layout conversions, barriers).
SHARED_BYTES = 232448 - 16384


@triton.jit
def _sparse_attn_kernel(
    out_ptr,  # *T, [T, Hq, Dv], contiguous (SPLITS == 1)
    m_ptr,  # *fp32, [T, Hq, SPLITS]: running max per split (SPLITS > 1)
    l_ptr,  # *fp32, [T, Hq, SPLITS]: running sum
    n_ptr,  # *int32, [T, Hq, SPLITS]: valid slots seen
    acc_ptr,  # *fp32, [T, Hq, SPLITS, dv_pad]: unnormalized output
    q_ptr, k_ptr, v_ptr, idx_ptr,
    scale,
    group,  # query heads per KV head
    topk,
    head_dim,  # D, of q and k
    v_dim,  # Dv, of v and out
    head_blocks,  # programs a KV head's query heads are split over, cdiv(group, BLOCK_H)
    dv_blocks,  # programs Dv is split over, cdiv(v_dim, BLOCK_DV)
    per_split,  # slots per split, a multiple of BLOCK_N
    stride_qt, stride_qh, stride_qd,
    stride_ks, stride_kh, stride_kd,
    stride_vs, stride_vh, stride_vd,
    stride_it, stride_ij,
    stride_ot, stride_oh,
    SPLITS: tl.constexpr,
    BLOCK_H: tl.constexpr,  # query heads a program serves, a power of two >= 16
    BLOCK_N: tl.constexpr,  # slots per step
    D_A: tl.constexpr,  # q's and k's first tile: the largest power of two within D (>= 16)
    D_B: tl.constexpr,  # their second tile: the rest, a power of two >= 16; 0 where none
    BLOCK_DV: tl.constexpr,  # columns of v and out a program accumulates
    IEEE: tl.constexpr,  # fp32 inputs: IEEE dots, no split of P
    TINY: tl.constexpr,  # the smallest positive value of the 16-bit dtype (0: none needed)
):  # fmt: skip
    # Axis 0 is (token, head block, Dv block), Dv fastest: the programs that read the same rows
    # run side by side.
    pid = tl.program_id(0)
    dvb = pid % dv_blocks
    hb = (pid // dv_blocks) % head_blocks
    t = (pid // (dv_blocks * head_blocks)).to(tl.int64)
    g = tl.program_id(1).to(tl.int64)
    sp = tl.program_id(2)
    hs = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = hs < group
    heads = g * group + hs
    q_rows = q_ptr + t * stride_qt + heads[:, None] * stride_qh
    da = tl.arange(0, D_A)
    da_ok = da < head_dim
    q_a = tl.load(q_rows + da[None, :] * stride_qd, mask=h_ok[:, None] & da_ok[None, :], other=0.0)
    if D_B > 0:
        db = D_A + tl.arange(0, D_B)
        db_ok = db < head_dim
        q_b = tl.load(
            q_rows + db[None, :] * stride_qd, mask=h_ok[:, None] & db_ok[None, :], other=0.0
        )
    dvs = dvb * BLOCK_DV + tl.arange(0, BLOCK_DV)
    dv_ok = dvs < v_dim
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    n_i = tl.zeros([BLOCK_H], tl.int32)
    acc = tl.zeros([BLOCK_H, BLOCK_DV], tl.float32)
    first = sp * per_split
    last = tl.minimum(first + per_split, topk)
    for start in range(first, last, BLOCK_N):
        slots = start + tl.arange(0, BLOCK_N)
        rows = tl.load(idx_ptr + t * stride_it + slots * stride_ij, mask=slots < last, other=-1)
        valid = rows >= 0
        rows = rows.to(tl.int64)
        k_rows = k_ptr + rows[:, None] * stride_ks + g * stride_kh
        k_a = tl.load(k_rows + da[None, :] * stride_kd, mask=valid[:, None] & da_ok[None, :],
                      other=0.0)  # fmt: skip
        if IEEE:
            s = tl.dot(q_a, tl.trans(k_a), input_precision="ieee")
        else:
            s = tl.dot(q_a, tl.trans(k_a))
        if D_B > 0:
            k_b = tl.load(k_rows + db[None, :] * stride_kd, mask=valid[:, None] & db_ok[None, :],
                          other=0.0)  # fmt: skip
            if IEEE:
                s = tl.dot(q_b, tl.trans(k_b), s, input_precision="ieee")
            else:
                s = tl.dot(q_b, tl.trans(k_b), s)
        s = tl.where(valid[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1), propagate_nan=tl.PropagateNan.ALL)
        # Before the first valid slot the max is -inf, and exp(-inf - -inf) would be NaN.
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        v = tl.load(
            v_ptr + rows[:, None] * stride_vs + g * stride_vh + dvs[None, :] * stride_vd,
            mask=valid[:, None] & dv_ok[None, :],
            other=0.0,
        )
        acc = acc * alpha[:, None]
        if IEEE:
            acc = tl.dot(p, v, acc, input_precision="ieee")
        else:
            # A p that rounds to 0 in 16 bits would turn its row's infinite v into 0 * inf =
            # NaN, where the reference has p * inf = inf: it keeps the smallest 16-bit step.
            p_hi = p.to(v.dtype)
            p_hi = tl.where((p > 0.0) & (p_hi == 0.0), TINY, p_hi.to(tl.float32)).to(v.dtype)
            p_lo = (p - p_hi.to(tl.float32)).to(v.dtype)
            acc = tl.dot(p_hi, v, acc)
            # The rest is 0 where p is a 16-bit value (the row's max, p = 1): the non-finite
            # values of v are carried by the first product alone, never by 0 * inf.
            acc = tl.dot(p_lo, tl.where(tl.abs(v) < float("inf"), v, 0.0).to(v.dtype), acc)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        m_i = m_new
        n_i += tl.sum(valid.to(tl.int32), axis=0)
    if SPLITS == 1:
        out = tl.where((n_i > 0)[:, None], acc / l_i[:, None], 0.0)
        tl.store(
            out_ptr + t * stride_ot + heads[:, None] * stride_oh + dvs[None, :],
            out.to(out_ptr.dtype.element_ty),
            mask=h_ok[:, None] & dv_ok[None, :],
        )
    else:
        at = (t * (group * tl.num_programs(1)) + heads) * SPLITS + sp  # [BLOCK_H]
        stats = h_ok & (dvb == 0)  # every Dv block has the same max, sum and count
        tl.store(m_ptr + at, m_i, mask=stats)
        tl.store(l_ptr + at, l_i, mask=stats)
        tl.store(n_ptr + at, n_i, mask=stats)
        tl.store(acc_ptr + at[:, None] * (dv_blocks * BLOCK_DV) + dvs[None, :], acc,
                 mask=h_ok[:, None] & dv_ok[None, :])  # fmt: skip


@triton.jit
def _merge_kernel(
    out_ptr,  # *T, [T, Hq, Dv], contiguous
    m_ptr, l_ptr, n_ptr, acc_ptr,
    v_dim,
    dv_pad,  # acc's columns per (token, head, split)
    stride_ot, stride_oh,
    SPLITS: tl.constexpr,
    BLOCK_S: tl.constexpr,  # power of two >= SPLITS
    BLOCK_DV: tl.constexpr,  # columns per program
):  # fmt: skip
    """One program per (token, query head, block of Dv): the splits' partial softmaxes merged."""
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    row = t * tl.num_programs(1) + h
    cols = tl.program_id(2) * BLOCK_DV + tl.arange(0, BLOCK_DV)
    c_ok = cols < v_dim
    ss = tl.arange(0, BLOCK_S)
    s_ok = ss < SPLITS
    m = tl.load(m_ptr + row * SPLITS + ss, mask=s_ok, other=float("-inf"))
    sums = tl.load(l_ptr + row * SPLITS + ss, mask=s_ok, other=0.0)
    n = tl.sum(tl.load(n_ptr + row * SPLITS + ss, mask=s_ok, other=0), axis=0)
    acc = tl.load(acc_ptr + (row * SPLITS + ss)[:, None] * dv_pad + cols[None, :],
                  mask=s_ok[:, None] & c_ok[None, :], other=0.0)  # fmt: skip
    m_all = tl.max(m, axis=0)  # a NaN split makes the output NaN through w or l anyway
    m_use = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.exp(m - m_use)  # a split with no valid slot: exp(-inf) = 0
    num = tl.sum(acc * w[:, None], axis=0)
    den = tl.sum(sums * w, axis=0)
    out = tl.where(n > 0, num / den, 0.0)
    tl.store(out_ptr + t * stride_ot + h * stride_oh + cols, out.to(out_ptr.dtype.element_ty),
             mask=c_ok)  # fmt: skip


def _tiles(head_dim: int) -> tuple[int, int]:
    """q's and k's head dim as two power-of-two tiles: the largest power of two within it (at
    least 16, a tile product's K), and the rest rounded up (0: no rest)."""
    first = triton.next_power_of_2(head_dim)
    if first > head_dim:
        first = first // 2
    first = max(16, first)
    rest = head_dim - first
    return first, max(16, triton.next_power_of_2(rest)) if rest > 0 else 0


@functools.lru_cache(maxsize=256)
def _config(
    tokens: int, topk: int, block_h: int, width: int, v_dim: int, itemsize: int
) -> tuple[int, int, int, int]:
    """(BLOCK_N, BLOCK_DV, num_warps, num_stages): the bucket's config, narrowed until q's tiles
    (block_h x width) and num_stages steps of k's (BLOCK_N x width) and v's (BLOCK_N x
    BLOCK_DV) fit SHARED_BYTES: BLOCK_DV first (Dv over more programs), then BLOCK_N, then the
    stages. On sm_90 this estimate came within 4.2 KB of Triton's figure with two stages, and
    above it with one (the compiler reuses a buffer there)."""
    cfg = TUNED[nearest_bucket(TUNED, (tokens, topk))] if TUNED else DEFAULT_CONFIG
    bn, stages = cfg["BLOCK_N"], cfg["num_stages"]
    block_dv = min(cfg["BLOCK_DV"], max(16, triton.next_power_of_2(v_dim)))
    while itemsize * (block_h * width + max(1, stages) * bn * (width + block_dv)) > SHARED_BYTES:
        if block_dv > 64:
            block_dv = block_dv // 2
        elif bn > 16:
            bn = bn // 2
        elif stages > 1:
            stages = stages - 1
        else:
            break
    return bn, block_dv, cfg["num_warps"], stages


def sparse_attn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    tokens, heads, head_dim = q.shape
    kv_heads, v_dim = k.shape[1], v.shape[2]
    topk = indices.shape[1]
    group = heads // kv_heads
    out = torch.empty((tokens, heads, v_dim), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    block_h = min(MAX_BLOCK_H, max(16, triton.next_power_of_2(group)))
    head_blocks = triton.cdiv(group, block_h)
    d_a, d_b = _tiles(head_dim)
    bn, block_dv, warps, stages = _config(tokens, topk, block_h, d_a + d_b, v_dim, q.element_size())
    dv_blocks = triton.cdiv(v_dim, block_dv)
    steps = triton.cdiv(topk, bn)
    programs = tokens * kv_heads * head_blocks * dv_blocks
    splits = max(1, min(steps, TARGET_PROGRAMS // programs))
    per_split = triton.cdiv(steps, splits) * bn
    splits = triton.cdiv(topk, per_split)  # no split without a slot
    dv_pad = dv_blocks * block_dv
    if splits > 1:
        parts = (tokens, heads, splits)
        maxes = torch.empty(parts, dtype=torch.float32, device=q.device)
        sums = torch.empty(parts, dtype=torch.float32, device=q.device)
        n = torch.empty(parts, dtype=torch.int32, device=q.device)
        acc = torch.empty((tokens, heads, splits, dv_pad), dtype=torch.float32, device=q.device)
    else:
        maxes = sums = n = acc = out  # not read: the kernel writes out itself
    _sparse_attn_kernel[(tokens * head_blocks * dv_blocks, kv_heads, splits)](
        out, maxes, sums, n, acc, q, k, v, indices, scale, group, topk, head_dim, v_dim,
        head_blocks, dv_blocks, per_split,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        indices.stride(0), indices.stride(1),
        out.stride(0), out.stride(1),
        SPLITS=splits, BLOCK_H=block_h, BLOCK_N=bn, D_A=d_a, D_B=d_b, BLOCK_DV=block_dv,
        IEEE=q.dtype == torch.float32, TINY=2.0**-24 if q.dtype == torch.float16 else 0.0,
        num_warps=warps, num_stages=stages,
    )  # fmt: skip
    if splits > 1:
        merge_dv = min(MERGE_DV, max(16, triton.next_power_of_2(v_dim)))
        _merge_kernel[(tokens, heads, triton.cdiv(v_dim, merge_dv))](
            out, maxes, sums, n, acc, v_dim, dv_pad, out.stride(0), out.stride(1),
            SPLITS=splits, BLOCK_S=triton.next_power_of_2(splits), BLOCK_DV=merge_dv,
        )  # fmt: skip
    return out


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
