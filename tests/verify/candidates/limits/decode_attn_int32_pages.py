"""Right below 2^31 elements of KV cache, wrong past it: the page's offset is the table's int32
entry times the page stride, in int32, as a kernel written for small pools computes it (the
request and head offsets are int64). On decode_attn's limit case every page a request owns
starts at element 2^31 or later of its cache (262144 pages of 8192 elements no request owns come
first), so every request's offset wraps negative and is read 2.5 to 4 GiB before the cache:
garbage or an illegal address. Must be rejected on the limit case (incorrect or crash), after
passing the smaller cases; its twin is the seed (seeds/decode_attn.py), which casts the entry to
int64."""

import torch
import triton
import triton.language as tl


@triton.jit
def _decode_attn_kernel(
    out_ptr, q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, scale, group, head_dim,
    stride_qb, stride_qh, stride_qd,
    stride_kp, stride_kt, stride_kh, stride_kd,
    stride_vp, stride_vt, stride_vh, stride_vd,
    stride_tb, stride_tp, stride_lb, stride_ob, stride_oh,
    PAGE: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1).to(tl.int64)
    kv_head = h // group
    n = tl.load(lens_ptr + b * stride_lb)
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    slots = tl.arange(0, PAGE)
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + ds * stride_qd, mask=d_ok, other=0.0)
    q = q.to(tl.float32)
    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.zeros([1], tl.float32)
    acc = tl.zeros([BLOCK_D], tl.float32)
    for j in range(0, tl.cdiv(n, PAGE)):
        page = tl.load(table_ptr + b * stride_tb + j * stride_tp)
        k_page = page * stride_kp
        v_page = page * stride_vp
        live = j * PAGE + slots < n
        mask = live[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + k_page + slots[:, None] * stride_kt + kv_head * stride_kh
            + ds[None, :] * stride_kd,
            mask=mask, other=0.0,
        ).to(tl.float32)  # fmt: skip
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(live, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0), propagate_nan=tl.PropagateNan.ALL)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(
            v_ptr + v_page + slots[:, None] * stride_vt + kv_head * stride_vh
            + ds[None, :] * stride_vd,
            mask=mask, other=0.0,
        ).to(tl.float32)  # fmt: skip
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
    tl.store(out_ptr + b * stride_ob + h * stride_oh + ds, (acc / l_i).to(out_ptr.dtype.element_ty),
             mask=d_ok)  # fmt: skip


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
    out = torch.empty((batch, heads, head_dim), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    _decode_attn_kernel[(batch, heads)](
        out, q, k_cache, v_cache, block_table, seq_lens, scale, heads // kv_heads, head_dim,
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), k_cache.stride(3),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), v_cache.stride(3),
        block_table.stride(0), block_table.stride(1), seq_lens.stride(0),
        out.stride(0), out.stride(1),
        PAGE=page, BLOCK_D=triton.next_power_of_2(head_dim),
    )  # fmt: skip
    return out
