"""Paged decode attention, split-KV, over pages of any size: the shipped kernel with its KV tile
made a constexpr block of BLOCK_N = 64 tokens that spans as many pages as it holds (one page of 64,
two of 32, four of 16), and its chunks counted in those blocks, not in pages.

What changed from the shipped kernel (evaluations/decode_attn/20261202-032133-agent-e9a6, r01-c01)
and why: the shipped kernel steps one page at a time, so its tile is the cache's page. At vLLM's
16-token pages that is a [16 heads, 16 tokens] score dot and a K = 16 P V dot per step, 4x the
loop trips, table reads and softmax rescales of 64-token pages for the same bytes; and its chunks
(at least 8 pages, the table in 32 pieces) shrink with the page, so a 4K request at 16-token pages
is split 32 ways where 64-token pages split it 8 ways, with 4x the partials to merge. Here every
step is a 64-token block whatever the page: where the page is smaller, each token looks up its own
page in the table (tokens // PAGE; a page's tokens read one entry, which the GPU serves once per
warp) and its slot (tokens % PAGE); where the page is the block, one table read as before. The
table entries and slots past a request's length are never read: the table load is masked by the
live tokens, as the K and V loads are. At 64-token pages the kernel is the shipped one: the same
loop, chunks and launch.

The shipped kernel's notes, which still hold:
Paged decode attention, split-KV: each request's KV cut into chunks of whole blocks, one program
per (request, KV head, chunk) for the whole group of query heads that share the KV head, then a
merge of the chunks' partial softmaxes by their log-sum-exp.

The seed runs one program per (request, query head) over the whole request: 32 x 8 programs at
most per request, each reading its KV head's pages again (Hq / Hkv = 4 times over), and a batch
with one long request waits on that request's programs alone. Here:
- The group's query heads are the rows of one [16, D] tile (padded with zero rows), so each live
  K and V byte is read once, and q . k runs as one tensor-core dot per block: products of two
  16-bit values are exact in fp32 and the dot accumulates in fp32, as the seed's fp32 sums do.
- The chunk is the table's width in 32 pieces, at least 8 blocks, so the longest request a table
  can hold is split 32 ways and short ones are one chunk (then no merge: the chunk's program
  writes the output). The length is read on the device only: chunks past it exit at once.
- P V keeps the probabilities in fp32, as the reference's precision note asks: p is split into
  two 16-bit pieces (p = p1 + p2 to 2^-16 of p, far below the output's rounding), two tensor-core
  dots. An infinite v times a zero second piece would read NaN where the reference reads inf, so
  the second dot takes v with its infinities zeroed (they reach the output through the first).
- fp32 caches take fp32 dots (IEEE: no TF32).
Online softmax per chunk in fp32 (running max, sum, accumulator), NaN propagated through the max
as in the seed. Partials are fp32 (m, l, acc) per (request, query head, chunk).
"""

import torch
import triton
import triton.language as tl

BLOCK_N = 64  # KV tokens a step; a page wider than it is its own block
MIN_CHUNK_BLOCKS = 8
MAX_SPLITS = 32


@triton.jit
def _decode_split(
    out_ptr, part_ptr, ml_ptr,  # [B, Hq, D]; partials [B, Hq, S, BLOCK_D] and [B, Hq, S, 2]
    q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, scale,
    group, head_dim, splits, chunk_blocks,
    stride_qb, stride_qh, stride_qd,
    stride_kp, stride_kt, stride_kh, stride_kd,
    stride_vp, stride_vt, stride_vh, stride_vd,
    stride_tb, stride_tp, stride_lb, stride_ob, stride_oh,
    PAGE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
    F32: tl.constexpr, DIRECT: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1).to(tl.int64)
    c = tl.program_id(2)
    n = tl.load(lens_ptr + b * stride_lb)
    first = c * chunk_blocks
    if first * BLOCK_N >= n:
        return
    last = tl.minimum(first + chunk_blocks, tl.cdiv(n, BLOCK_N))
    rows = tl.arange(0, BLOCK_H)
    heads = g * group + rows
    row_ok = rows < group
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    slots = tl.arange(0, BLOCK_N)
    q = tl.load(
        q_ptr + b * stride_qb + heads[:, None] * stride_qh + ds[None, :] * stride_qd,
        mask=row_ok[:, None] & d_ok[None, :],
        other=0.0,
    )
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    for j in range(first, last):
        tokens = j * BLOCK_N + slots
        live = tokens < n
        if PAGE >= BLOCK_N:  # the block is one page: its first token is live
            page = tl.load(table_ptr + b * stride_tb + (j * BLOCK_N // PAGE) * stride_tp)
        else:  # BLOCK_N // PAGE pages: each token's own entry
            page = tl.load(table_ptr + b * stride_tb + (tokens // PAGE) * stride_tp, mask=live,
                           other=0)  # fmt: skip
        page = page.to(tl.int64)
        slot = tokens % PAGE
        mask = live[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + (page * stride_kp + slot * stride_kt)[:, None] + g * stride_kh
            + ds[None, :] * stride_kd,
            mask=mask,
            other=0.0,
        )  # fmt: skip
        if F32:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(live[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1), propagate_nan=tl.PropagateNan.ALL)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        v = tl.load(
            v_ptr + (page * stride_vp + slot * stride_vt)[:, None] + g * stride_vh
            + ds[None, :] * stride_vd,
            mask=mask,
            other=0.0,
        )  # fmt: skip
        if F32:
            pv = tl.dot(p, v, input_precision="ieee")
        else:
            p1 = p.to(v.dtype)
            p2 = (p - p1.to(tl.float32)).to(v.dtype)
            v_finite = tl.where(tl.abs(v.to(tl.float32)) == float("inf"), 0.0, v).to(v.dtype)
            pv = tl.dot(p1, v) + tl.dot(p2, v_finite)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + pv
        m_i = m_new
    if DIRECT:
        o = out_ptr + b * stride_ob + heads[:, None] * stride_oh + ds[None, :]
        tl.store(o, (acc / l_i[:, None]).to(out_ptr.dtype.element_ty),
                 mask=row_ok[:, None] & d_ok[None, :])  # fmt: skip
    else:
        at = (b * (group * tl.num_programs(1)) + heads) * splits + c
        tl.store(part_ptr + at[:, None] * BLOCK_D + ds[None, :], acc, mask=row_ok[:, None])
        tl.store(ml_ptr + at * 2, m_i, mask=row_ok)
        tl.store(ml_ptr + at * 2 + 1, l_i, mask=row_ok)


@triton.jit
def _decode_merge(
    out_ptr, part_ptr, ml_ptr, lens_ptr, heads_q, head_dim, splits, chunk_tokens,
    stride_lb, stride_ob, stride_oh,
    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    n = tl.load(lens_ptr + b * stride_lb)
    ss = tl.arange(0, BLOCK_S)
    s_ok = ss < tl.cdiv(n, chunk_tokens)
    ds = tl.arange(0, BLOCK_D)
    at = (b * heads_q + h) * splits + ss
    m = tl.load(ml_ptr + at * 2, mask=s_ok, other=float("-inf"))
    l_s = tl.load(ml_ptr + at * 2 + 1, mask=s_ok, other=0.0)
    m_all = tl.max(m, axis=0)  # a NaN m (dropped here) still makes its weight, so the output, NaN
    w = tl.where(s_ok, tl.exp(m - m_all), 0.0)
    acc = tl.load(part_ptr + at[:, None] * BLOCK_D + ds[None, :], mask=s_ok[:, None], other=0.0)
    o = tl.sum(acc * w[:, None], axis=0) / tl.sum(l_s * w, axis=0)
    tl.store(out_ptr + b * stride_ob + h * stride_oh + ds, o.to(out_ptr.dtype.element_ty),
             mask=ds < head_dim)  # fmt: skip


def decode_attn(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_table: torch.Tensor,
    seq_lens: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    batch, heads, head_dim = q.shape
    page = k_cache.shape[1]
    kv_heads = k_cache.shape[2]
    group = heads // kv_heads
    out = torch.empty((batch, heads, head_dim), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    # The longest request is known only on the device; the table's width bounds it. Chunks of
    # whole blocks: the same split of a request's tokens whatever its page size.
    block_n = max(BLOCK_N, page)
    blocks = triton.cdiv(block_table.shape[1] * page, block_n)
    chunk = max(MIN_CHUNK_BLOCKS, triton.cdiv(blocks, MAX_SPLITS))
    splits = triton.cdiv(blocks, chunk)
    block_d = max(16, triton.next_power_of_2(head_dim))
    direct = splits == 1
    shape = (batch, heads, splits) if not direct else (1, 1, 1)
    part = torch.empty((*shape, block_d), dtype=torch.float32, device=q.device)
    ml = torch.empty((*shape, 2), dtype=torch.float32, device=q.device)
    _decode_split[(batch, kv_heads, splits)](
        out, part, ml, q, k_cache, v_cache, block_table, seq_lens, scale,
        group, head_dim, splits, chunk,
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), k_cache.stride(3),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), v_cache.stride(3),
        block_table.stride(0), block_table.stride(1), seq_lens.stride(0),
        out.stride(0), out.stride(1),
        PAGE=page, BLOCK_N=block_n, BLOCK_H=max(16, triton.next_power_of_2(group)),
        BLOCK_D=block_d,
        F32=q.dtype == torch.float32, DIRECT=direct, num_warps=4,
    )  # fmt: skip
    if not direct:
        _decode_merge[(batch, heads)](
            out, part, ml, seq_lens, heads, head_dim, splits, chunk * block_n,
            seq_lens.stride(0), out.stride(0), out.stride(1),
            BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=block_d, num_warps=4,
        )  # fmt: skip
    return out
