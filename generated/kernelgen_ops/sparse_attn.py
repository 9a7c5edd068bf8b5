# kernelgen_ops.sparse_attn: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/sparse_attn.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/sparse_attn/20261203-093152-agent-dc80/candidates/r02-c01-tuned/source.py
# record    evaluations/sparse_attn/20261203-093152-agent-dc80/candidates/r02-c01-tuned/record.json
# proposer  tune (model -, round 2, parent r02-c01)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 7.96x geomean over 4 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           1x128K bfloat16: 31.28x vs torch.compile
#           64x128K bfloat16: 4.37x vs torch.compile
#           2048x128K bfloat16: 5.13x vs torch.compile
#           gqa_64x64K bfloat16: 5.72x vs torch.compile
# speedups  geomean 15.11x vs eager, 7.96x vs torch.compile, - vs seed
# peers     eager = references/sparse_attn.py:eager, the op as torch users call it; torch.compile of
#           the same
#           1x128K bfloat16: 7.2 us, 36.12x eager, 31.28x compile, - seed
#           64x128K bfloat16: 71.4 us, 9.16x eager, 4.37x compile, - seed
#           2048x128K bfloat16: 1076.8 us, 13.48x eager, 5.13x compile, - seed
#           gqa_64x64K bfloat16: 222.8 us, 11.68x eager, 5.72x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           1x128K, gqa_64x64K, 2048x128K; torch's op at no shape
# sha256    20a67098310c4d547e85d306bd682b7cfa02d2472b2613762f0e6d90e72a8818
# promoted  2026-12-03T09:51:44+00:00
#
# ruff: noqa
# fmt: off
"""Sparse attention as flash attention over gathered rows: out[t, h] = softmax(scale * q[t, h] .
K_t) @ V_t over the rows K_t, V_t of KV head h // group that token t's indices select.

What changed from the seed, and why:
- One program per (token, KV head, split of the slots) serves all the query heads of that KV
  head at once (64 for DeepSeek's latent head): a gathered K or V row is read once per token, not
  once per query head, and both products go through the tensor cores as tile products, the
  heads as the M dimension: S = Q K^T over BLOCK_N slots, then P V.
- The probabilities are split in two 16-bit pieces for P V (hi = P rounded, lo = the rounding
  of the rest): P rounded once to bf16 misses the tolerance on rows with few slots (the
  reference's precision note), hi + lo carries ~16 more bits. Q K^T is exact in fp32 (16-bit
  products). fp32 inputs (CPU cases) take IEEE fp32 dots and no split. Infinite and NaN values
  of v reach the output as in the reference (p * inf): the second product sees them as 0 (its
  piece of P is 0 wherever P is a 16-bit value, and 0 * inf would be NaN), and a P that rounds
  to 0 in fp16 keeps fp16's smallest step in the first.
- Decode and small batches split each token's slots over several programs (flash decoding): a
  token alone would be one program walking 2048 gathered rows. Each split keeps its running max,
  sum, count of valid slots and accumulator; a second kernel merges them in split order with the
  log-sum-exp rule. With one split per token (prefill, GQA with many programs) the first kernel
  writes the output itself.
- Semantics as the seed's: -1 slots never read; a NaN score reaches the row through the max
  (propagated) and the sums; a token with no valid slot stores zeros; valid scores all -inf give
  0 / 0 = NaN, as the reference's softmax does.
"""

import functools
import math

import torch
import triton
import triton.language as tl

from . import _runtime

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<T>x<topk>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"BLOCK_N": [32, 64], "num_warps": [4, 8], "num_stages": [2, 3]}
DEFAULT_CONFIG = _runtime.default_config("sparse_attn")  # configs/sparse_attn.json
TUNED = _runtime.tuned("sparse_attn")  # per device: configs/sparse_attn.json
# Splits are added until the grid has about this many programs (two per SM of an H200).
TARGET_PROGRAMS = 264


@triton.jit
def _sparse_attn_kernel(
    out_ptr,  # *T, [T, Hq, D], contiguous (SPLITS == 1)
    m_ptr,  # *fp32, [T, Hq, SPLITS]: running max per split (SPLITS > 1)
    l_ptr,  # *fp32, [T, Hq, SPLITS]: running sum
    n_ptr,  # *int32, [T, Hq, SPLITS]: valid slots seen
    acc_ptr,  # *fp32, [T, Hq, SPLITS, D]: unnormalized output
    q_ptr, k_ptr, v_ptr, idx_ptr,
    scale,
    group,  # query heads per KV head
    topk,
    head_dim,
    per_split,  # slots per split, a multiple of BLOCK_N
    stride_qt, stride_qh, stride_qd,
    stride_ks, stride_kh, stride_kd,
    stride_vs, stride_vh, stride_vd,
    stride_it, stride_ij,
    stride_ot, stride_oh,
    SPLITS: tl.constexpr,
    BLOCK_H: tl.constexpr,  # power of two >= group, at least 16 (a tile product's rows)
    BLOCK_N: tl.constexpr,  # slots per step
    BLOCK_D: tl.constexpr,  # power of two >= head_dim, at least 16
    IEEE: tl.constexpr,  # fp32 inputs: IEEE dots, no split of P
    TINY: tl.constexpr,  # the smallest positive value of the 16-bit dtype (0: none needed)
):  # fmt: skip
    t = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1).to(tl.int64)
    sp = tl.program_id(2)
    hs = tl.arange(0, BLOCK_H)
    h_ok = hs < group
    heads = g * group + hs
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    q = tl.load(
        q_ptr + t * stride_qt + heads[:, None] * stride_qh + ds[None, :] * stride_qd,
        mask=h_ok[:, None] & d_ok[None, :],
        other=0.0,
    )
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    n_i = tl.zeros([BLOCK_H], tl.int32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    first = sp * per_split
    last = tl.minimum(first + per_split, topk)
    for start in range(first, last, BLOCK_N):
        slots = start + tl.arange(0, BLOCK_N)
        rows = tl.load(idx_ptr + t * stride_it + slots * stride_ij, mask=slots < last, other=-1)
        valid = rows >= 0
        rows = rows.to(tl.int64)
        kv_mask = valid[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + rows[:, None] * stride_ks + g * stride_kh + ds[None, :] * stride_kd,
            mask=kv_mask,
            other=0.0,
        )
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(valid[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1), propagate_nan=tl.PropagateNan.ALL)
        # Before the first valid slot the max is -inf, and exp(-inf - -inf) would be NaN.
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use[:, None])
        v = tl.load(
            v_ptr + rows[:, None] * stride_vs + g * stride_vh + ds[None, :] * stride_vd,
            mask=kv_mask,
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
            out_ptr + t * stride_ot + heads[:, None] * stride_oh + ds[None, :],
            out.to(out_ptr.dtype.element_ty),
            mask=h_ok[:, None] & d_ok[None, :],
        )
    else:
        at = (t * (group * tl.num_programs(1)) + heads) * SPLITS + sp  # [BLOCK_H]
        tl.store(m_ptr + at, m_i, mask=h_ok)
        tl.store(l_ptr + at, l_i, mask=h_ok)
        tl.store(n_ptr + at, n_i, mask=h_ok)
        tl.store(acc_ptr + at[:, None] * BLOCK_D + ds[None, :], acc, mask=h_ok[:, None])


@triton.jit
def _merge_kernel(
    out_ptr,  # *T, [T, Hq, D], contiguous
    m_ptr, l_ptr, n_ptr, acc_ptr,
    head_dim,
    stride_ot, stride_oh,
    SPLITS: tl.constexpr,
    BLOCK_S: tl.constexpr,  # power of two >= SPLITS
    BLOCK_D: tl.constexpr,
):  # fmt: skip
    """One program per (token, query head): the splits' partial softmaxes merged."""
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    row = t * tl.num_programs(1) + h
    ss = tl.arange(0, BLOCK_S)
    s_ok = ss < SPLITS
    ds = tl.arange(0, BLOCK_D)
    m = tl.load(m_ptr + row * SPLITS + ss, mask=s_ok, other=float("-inf"))
    sums = tl.load(l_ptr + row * SPLITS + ss, mask=s_ok, other=0.0)
    n = tl.sum(tl.load(n_ptr + row * SPLITS + ss, mask=s_ok, other=0), axis=0)
    acc = tl.load(acc_ptr + (row * SPLITS + ss)[:, None] * BLOCK_D + ds[None, :],
                  mask=s_ok[:, None], other=0.0)  # fmt: skip
    m_all = tl.max(m, axis=0)  # a NaN split makes the output NaN through w or l anyway
    m_use = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.exp(m - m_use)  # a split with no valid slot: exp(-inf) = 0
    num = tl.sum(acc * w[:, None], axis=0)
    den = tl.sum(sums * w, axis=0)
    out = tl.where(n > 0, num / den, 0.0)
    tl.store(out_ptr + t * stride_ot + h * stride_oh + ds, out.to(out_ptr.dtype.element_ty),
             mask=ds < head_dim)  # fmt: skip


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    if not TUNED:
        return DEFAULT_CONFIG
    want = [math.log2(triton.next_power_of_2(d)) for d in dims]

    def distance(key: str) -> float:
        return sum(abs(math.log2(int(k)) - w) for k, w in zip(key.split("x"), want, strict=True))

    return TUNED[min(TUNED, key=distance)]


def sparse_attn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    tokens, heads, head_dim = q.shape
    kv_heads = k.shape[1]
    topk = indices.shape[1]
    group = heads // kv_heads
    out = torch.empty((tokens, heads, head_dim), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    cfg = _config(tokens, topk)
    bn = cfg["BLOCK_N"]
    steps = triton.cdiv(topk, bn)
    splits = max(1, min(steps, TARGET_PROGRAMS // (tokens * kv_heads)))
    per_split = triton.cdiv(steps, splits) * bn
    splits = triton.cdiv(topk, per_split)  # no split without a slot
    block_d = max(16, triton.next_power_of_2(head_dim))
    if splits > 1:
        parts = (tokens, heads, splits)
        maxes = torch.empty(parts, dtype=torch.float32, device=q.device)
        sums = torch.empty(parts, dtype=torch.float32, device=q.device)
        n = torch.empty(parts, dtype=torch.int32, device=q.device)
        acc = torch.empty((tokens, heads, splits, block_d), dtype=torch.float32, device=q.device)
    else:
        maxes = sums = n = acc = out  # not read: the kernel writes out itself
    _sparse_attn_kernel[(tokens, kv_heads, splits)](
        out, maxes, sums, n, acc, q, k, v, indices, scale, group, topk, head_dim, per_split,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        indices.stride(0), indices.stride(1),
        out.stride(0), out.stride(1),
        SPLITS=splits, BLOCK_H=max(16, triton.next_power_of_2(group)), BLOCK_N=bn,
        BLOCK_D=block_d, IEEE=q.dtype == torch.float32,
        TINY=2.0**-24 if q.dtype == torch.float16 else 0.0, num_warps=cfg["num_warps"],
        num_stages=cfg["num_stages"],
    )  # fmt: skip
    if splits > 1:
        _merge_kernel[(tokens, heads)](
            out, maxes, sums, n, acc, head_dim, out.stride(0), out.stride(1),
            SPLITS=splits, BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=block_d,
        )  # fmt: skip
    return out


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
