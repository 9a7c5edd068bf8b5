"""Paged decode attention, split-KV, as run e9a6's r01-c01 (one program per request, KV head and
chunk of pages for the group's query heads; log-sum-exp merge), with 128 tokens per step, each
token's page gathered from the table, and 8 warps.

r01-c01 reached 1.38-1.52x the live-KV floor on every bench batch, taking one 64-token page per
step: one 16 KB K load and one V load in flight per program. Two pages per step double what
each program has in flight, for the same registers per warp at 8 warps.
"""

import torch
import triton
import triton.language as tl

MIN_CHUNK_PAGES = 8
MAX_SPLITS = 32
TOKENS = 128  # tokens per step: two pages' loads in flight at once


@triton.jit
def _decode_split(
    out_ptr, part_ptr, ml_ptr,  # [B, Hq, D]; partials [B, Hq, S, BLOCK_D] and [B, Hq, S, 2]
    q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, scale,
    group, head_dim, splits, chunk_pages,
    stride_qb, stride_qh, stride_qd,
    stride_kp, stride_kt, stride_kh, stride_kd,
    stride_vp, stride_vt, stride_vh, stride_vd,
    stride_tb, stride_tp, stride_lb, stride_ob, stride_oh,
    PAGE: tl.constexpr, TOKENS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
    F32: tl.constexpr, DIRECT: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1).to(tl.int64)
    c = tl.program_id(2)
    n = tl.load(lens_ptr + b * stride_lb)
    first = c * chunk_pages
    if first * PAGE >= n:
        return
    end = tl.minimum((first + chunk_pages) * PAGE, n)  # tokens of this chunk: [first * PAGE, end)
    rows = tl.arange(0, BLOCK_H)
    heads = g * group + rows
    row_ok = rows < group
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    ts = tl.arange(0, TOKENS)
    q = tl.load(
        q_ptr + b * stride_qb + heads[:, None] * stride_qh + ds[None, :] * stride_qd,
        mask=row_ok[:, None] & d_ok[None, :],
        other=0.0,
    )
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    for t0 in range(first * PAGE, end, TOKENS):
        t = t0 + ts
        live = t < end
        # Each token's page from the table (TOKENS spans several pages); dead rows read none.
        page = tl.load(table_ptr + b * stride_tb + (t // PAGE) * stride_tp, mask=live, other=0)
        row_k = page.to(tl.int64) * stride_kp + (t % PAGE) * stride_kt
        row_v = page.to(tl.int64) * stride_vp + (t % PAGE) * stride_vt
        mask = live[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + row_k[:, None] + g * stride_kh + ds[None, :] * stride_kd,
            mask=mask,
            other=0.0,
        )
        if F32:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(live[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1), propagate_nan=tl.PropagateNan.ALL)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        v = tl.load(
            v_ptr + row_v[:, None] + g * stride_vh + ds[None, :] * stride_vd,
            mask=mask,
            other=0.0,
        )
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
    # The longest request is known only on the device; the table's width bounds it.
    width = block_table.shape[1]
    chunk = max(MIN_CHUNK_PAGES, triton.cdiv(width, MAX_SPLITS))
    splits = triton.cdiv(width, chunk)
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
        PAGE=page, TOKENS=TOKENS, BLOCK_H=max(16, triton.next_power_of_2(group)),
        BLOCK_D=block_d, F32=q.dtype == torch.float32, DIRECT=direct, num_warps=8,
    )  # fmt: skip
    if not direct:
        _decode_merge[(batch, heads)](
            out, part, ml, seq_lens, heads, head_dim, splits, chunk * page,
            seq_lens.stride(0), out.stride(0), out.stride(1),
            BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=block_d, num_warps=4,
        )  # fmt: skip
    return out
