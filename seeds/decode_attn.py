"""Naive paged decode attention: out[b, h] = softmax(scale * q[b, h] . K_b) @ V_b over the first
seq_lens[b] tokens of request b, K_b and V_b read through its block table, KV head h // group.

One program per (request, query head). It walks the request's pages in order, one page (PAGE
tokens x D, the cache's page size: 16, 32 or 64) per step, with an online softmax in fp32: a
running max m, a running sum l and an accumulator acc, rescaled by exp(m_old - m_new) whenever
the max grows; the tokens past seq_lens on the last page are masked, and no page past it is
read. No tl.dot: products and sums in fp32.
Traffic: every query head reads its KV head's pages itself, so each live K and V byte is read
Hq/Hkv times (L2 catches repeats only while the group's programs run together).
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<B>x<L>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"num_warps": [1, 2, 4, 8]}
DEFAULT_CONFIG = {"num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _decode_attn_kernel(
    out_ptr,  # *T, [B, Hq, D], contiguous
    q_ptr,  # *T, [B, Hq, D], any strides
    k_ptr,  # *T, [pages, PAGE, Hkv, D], any strides
    v_ptr,  # *T, [pages, PAGE, Hkv, D], any strides
    table_ptr,  # *int32, [B, P], any strides: page of each request's j-th PAGE tokens
    lens_ptr,  # *int32, [B]: tokens per request
    scale,  # multiplies q . k
    group,  # query heads per KV head, Hq // Hkv
    head_dim,  # D
    stride_qb, stride_qh, stride_qd,  # elements between requests, heads, dims of q
    stride_kp, stride_kt, stride_kh, stride_kd,  # pages, slots, heads, dims of k_cache
    stride_vp, stride_vt, stride_vh, stride_vd,  # the same for v_cache
    stride_tb, stride_tp,  # rows and columns of block_table
    stride_lb,  # elements between entries of seq_lens
    stride_ob, stride_oh,  # requests and heads of out
    PAGE: tl.constexpr,  # tokens per page, a power of two
    BLOCK_D: tl.constexpr,  # power of two >= head_dim
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
        page = tl.load(table_ptr + b * stride_tb + j * stride_tp).to(tl.int64)
        live = j * PAGE + slots < n
        mask = live[:, None] & d_ok[None, :]
        k = tl.load(
            k_ptr + page * stride_kp + slots[:, None] * stride_kt + kv_head * stride_kh
            + ds[None, :] * stride_kd,
            mask=mask,
            other=0.0,
        ).to(tl.float32)  # fmt: skip
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(live, s, float("-inf"))
        # A NaN score makes the row NaN, as in the reference's softmax. It reaches l and acc
        # through p = exp(NaN - m) whatever the max does; propagating it in m too (the GPU's
        # max.f32 drops it) keeps the running max itself honest.
        m_new = tl.maximum(m_i, tl.max(s, axis=0), propagate_nan=tl.PropagateNan.ALL)
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new)
        v = tl.load(
            v_ptr + page * stride_vp + slots[:, None] * stride_vt + kv_head * stride_vh
            + ds[None, :] * stride_vd,
            mask=mask,
            other=0.0,
        ).to(tl.float32)  # fmt: skip
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
    out = acc / l_i
    tl.store(out_ptr + b * stride_ob + h * stride_oh + ds, out.to(out_ptr.dtype.element_ty),
             mask=d_ok)  # fmt: skip


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


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
    # The longest request is known only on the device; the table's width bounds it (a host read
    # of seq_lens would be a sync per call).
    cfg = _config(batch, block_table.shape[1] * page)
    _decode_attn_kernel[(batch, heads)](
        out, q, k_cache, v_cache, block_table, seq_lens, scale, heads // kv_heads, head_dim,
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), k_cache.stride(3),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), v_cache.stride(3),
        block_table.stride(0), block_table.stride(1), seq_lens.stride(0),
        out.stride(0), out.stride(1),
        PAGE=page, BLOCK_D=triton.next_power_of_2(head_dim),
        **cfg,
    )  # fmt: skip
    return out
