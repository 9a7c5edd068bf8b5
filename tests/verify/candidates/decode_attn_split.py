"""Honest decode_attn in another style: split-KV (flash-decoding). A program per (request, KV
head, split of SPLIT tokens) takes all the query heads of its group at once, looks up the page of
every token of its split (not page by page), scores them with one tl.dot and does a one-pass
softmax over the split; it writes the split's max, sum and fp32 accumulator to scratch buffers.
A second kernel, one program per (request, query head), merges the request's live splits at
once with log-sum-exp weights. Splits past a request's length are neither computed nor read.
Scores: a dot of the inputs in their dtype with fp32 accumulation (IEEE fp32 for fp32 inputs,
not TF32); probabilities stay fp32 into the PV product."""

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(
    m_ptr, l_ptr, acc_ptr, q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, scale, group, head_dim,
    n_splits, stride_qb, stride_qh, stride_qd, stride_kp, stride_kt, stride_kh, stride_kd,
    stride_vp, stride_vt, stride_vh, stride_vd, stride_tb, stride_tp,
    PAGE: tl.constexpr, SPLIT: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    g = tl.program_id(1).to(tl.int64)
    split = tl.program_id(2)
    n = tl.load(lens_ptr + b)
    if split * SPLIT < n:
        rows = tl.arange(0, BLOCK_G)
        heads = g * group + rows
        row_ok = rows < group
        ds = tl.arange(0, BLOCK_D)
        d_ok = ds < head_dim
        q = tl.load(
            q_ptr + b * stride_qb + heads[:, None] * stride_qh + ds[None, :] * stride_qd,
            mask=row_ok[:, None] & d_ok[None, :],
            other=0.0,
        )
        ts = split * SPLIT + tl.arange(0, SPLIT)
        live = ts < n
        page = tl.load(table_ptr + b * stride_tb + (ts // PAGE) * stride_tp, mask=live, other=0)
        page = page.to(tl.int64)
        slot = ts % PAGE
        mask = live[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + page[:, None] * stride_kp + slot[:, None] * stride_kt + g * stride_kh
            + ds[None, :] * stride_kd,
            mask=mask,
            other=0.0,
        )  # fmt: skip
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale  # (BLOCK_G, SPLIT)
        s = tl.where(live[None, :], s, float("-inf"))
        m = tl.max(s, axis=1)
        p = tl.exp(s - m[:, None])
        v = tl.load(
            v_ptr + page[:, None] * stride_vp + slot[:, None] * stride_vt + g * stride_vh
            + ds[None, :] * stride_vd,
            mask=mask,
            other=0.0,
        ).to(tl.float32)  # fmt: skip
        acc = tl.dot(p, v, input_precision="ieee")  # (BLOCK_G, BLOCK_D)
        at = (b * group * tl.num_programs(1) + heads) * n_splits + split
        tl.store(m_ptr + at, m, mask=row_ok)
        tl.store(l_ptr + at, tl.sum(p, axis=1), mask=row_ok)
        tl.store(
            acc_ptr + at[:, None] * BLOCK_D + ds[None, :], acc, mask=row_ok[:, None] & d_ok[None, :]
        )


@triton.jit
def _merge_kernel(
    out_ptr, m_ptr, l_ptr, acc_ptr, lens_ptr, head_dim, n_splits, stride_ob, stride_oh,
    SPLIT: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    n = tl.load(lens_ptr + b)
    splits = tl.arange(0, BLOCK_S)
    ok = splits < tl.cdiv(n, SPLIT)
    at = (b * tl.num_programs(1) + h) * n_splits + splits
    m = tl.load(m_ptr + at, mask=ok, other=float("-inf"))
    # A NaN split max must reach the output; the GPU's max would drop it.
    top = tl.reduce(m, 0, _max_nan)
    w = tl.where(ok, tl.exp(m - top), 0.0)
    total = tl.sum(w * tl.load(l_ptr + at, mask=ok, other=0.0), axis=0)
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    parts = tl.load(
        acc_ptr + at[:, None] * BLOCK_D + ds[None, :], mask=ok[:, None] & d_ok[None, :], other=0.0
    )
    out = tl.sum(w[:, None] * parts, axis=0) / total
    tl.store(
        out_ptr + b * stride_ob + h * stride_oh + ds, out.to(out_ptr.dtype.element_ty), mask=d_ok
    )


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


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
    split = 128
    # The table's width bounds every request's length (the lengths themselves are on the device).
    n_splits = triton.cdiv(block_table.shape[1] * page, split)
    block_d = max(16, triton.next_power_of_2(head_dim))
    m = torch.empty((batch, heads, n_splits), dtype=torch.float32, device=q.device)
    l_sum = torch.empty_like(m)
    acc = torch.empty((batch, heads, n_splits, block_d), dtype=torch.float32, device=q.device)
    _split_kernel[(batch, kv_heads, n_splits)](
        m, l_sum, acc, q, k_cache, v_cache, block_table, seq_lens, scale, group, head_dim,
        n_splits, q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), k_cache.stride(3),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), v_cache.stride(3),
        block_table.stride(0), block_table.stride(1),
        PAGE=page, SPLIT=split, BLOCK_G=max(16, triton.next_power_of_2(group)), BLOCK_D=block_d,
    )  # fmt: skip
    _merge_kernel[(batch, heads)](
        out, m, l_sum, acc, seq_lens, head_dim, n_splits, out.stride(0), out.stride(1),
        SPLIT=split, BLOCK_S=triton.next_power_of_2(n_splits), BLOCK_D=block_d,
    )  # fmt: skip
    return out
