"""Right below 65536 tokens, unlaunchable from there: the token-slot rows (M*k) and the tokens
are the grids' y axis (column blocks on x), which takes at most 65535 programs. Offsets are
int64, so only fused_moe's limit case of 65600 tokens (524800 token-slots) shows it: the launch
fails (crash). Must be rejected on the limit case after passing the smaller cases (the largest,
4096 tokens of Mixtral-8x7B's top-2, is 8192 rows); its twin is the seed (seeds/fused_moe.py),
which puts them on x."""

import torch
import triton
import triton.language as tl

CONFIG = {"BLOCK_H": 64, "BLOCK_I": 64, "num_warps": 4}


@triton.jit
def _fused_moe_up_kernel(
    act_ptr,  # *fp32, [M*k, I], contiguous: silu(gate) * up per token-slot row
    x_ptr,  # *T, [M, H], any strides
    w1_ptr,  # *T, [E, 2I, H], any strides: gate rows [0, I), up rows [I, 2I)
    ids_ptr,  # *int32, [M, k], any strides
    hidden,  # H, the hidden size
    inter,  # I, the intermediate size per expert
    topk,  # k, experts per token
    stride_xm,  # elements between rows of x
    stride_xh,  # elements between columns of x
    stride_w1e,  # elements between experts of w1
    stride_w1n,  # elements between rows of w1
    stride_w1h,  # elements between columns of w1
    stride_idm,  # elements between rows of topk_ids
    stride_idk,  # elements between columns of topk_ids
    BLOCK_H: tl.constexpr,  # reduction step over H
    BLOCK_I: tl.constexpr,  # intermediate columns per program
):
    row = tl.program_id(1).to(tl.int64)  # token-slot row, m*k + j
    m = row // topk
    j = row % topk
    expert = tl.load(ids_ptr + m * stride_idm + j * stride_idk).to(tl.int64)
    cols = tl.program_id(0) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_ok = cols < inter
    w_gate = w1_ptr + expert * stride_w1e + cols[:, None] * stride_w1n
    w_up = w_gate + inter * stride_w1n
    x_row = x_ptr + m * stride_xm
    gate = tl.zeros((BLOCK_I,), dtype=tl.float32)
    up = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for h0 in range(0, hidden, BLOCK_H):
        hs = h0 + tl.arange(0, BLOCK_H)
        h_ok = hs < hidden
        xv = tl.load(x_row + hs * stride_xh, mask=h_ok, other=0.0).to(tl.float32)
        mask = col_ok[:, None] & h_ok[None, :]
        wg = tl.load(w_gate + hs[None, :] * stride_w1h, mask=mask, other=0.0).to(tl.float32)
        wu = tl.load(w_up + hs[None, :] * stride_w1h, mask=mask, other=0.0).to(tl.float32)
        gate += tl.sum(wg * xv[None, :], axis=1)
        up += tl.sum(wu * xv[None, :], axis=1)
    act = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(act_ptr + row * inter + cols, act, mask=col_ok)


@triton.jit
def _fused_moe_down_kernel(
    y_ptr,  # *T, [M, H], contiguous
    act_ptr,  # *fp32, [M*k, I], contiguous
    w2_ptr,  # *T, [E, H, I], any strides
    tw_ptr,  # *fp32, [M, k], any strides: topk_weights
    ids_ptr,  # *int32, [M, k], any strides
    hidden,  # H, the hidden size
    inter,  # I, the intermediate size per expert
    topk,  # k, experts per token
    stride_w2e,  # elements between experts of w2
    stride_w2h,  # elements between rows of w2
    stride_w2i,  # elements between columns of w2
    stride_twm,  # elements between rows of topk_weights
    stride_twk,  # elements between columns of topk_weights
    stride_idm,  # elements between rows of topk_ids
    stride_idk,  # elements between columns of topk_ids
    stride_ym,  # elements between rows of y
    BLOCK_H: tl.constexpr,  # output columns per program
    BLOCK_I: tl.constexpr,  # reduction step over I
):
    m = tl.program_id(1).to(tl.int64)
    hs = tl.program_id(0) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = hs < hidden
    acc = tl.zeros((BLOCK_H,), dtype=tl.float32)
    for j in range(0, topk):
        expert = tl.load(ids_ptr + m * stride_idm + j * stride_idk).to(tl.int64)
        weight = tl.load(tw_ptr + m * stride_twm + j * stride_twk)
        w_rows = w2_ptr + expert * stride_w2e + hs[:, None] * stride_w2h
        act_row = act_ptr + (m * topk + j) * inter
        part = tl.zeros((BLOCK_H,), dtype=tl.float32)
        for i0 in range(0, inter, BLOCK_I):
            cols = i0 + tl.arange(0, BLOCK_I)
            i_ok = cols < inter
            a = tl.load(act_row + cols, mask=i_ok, other=0.0)
            w = tl.load(
                w_rows + cols[None, :] * stride_w2i, mask=h_ok[:, None] & i_ok[None, :], other=0.0
            ).to(tl.float32)
            part += tl.sum(w * a[None, :], axis=1)
        acc += weight * part
    tl.store(y_ptr + m * stride_ym + hs, acc.to(y_ptr.dtype.element_ty), mask=h_ok)


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
    act = torch.empty((m * topk, inter), dtype=torch.float32, device=x.device)
    cfg = CONFIG
    grid_up = (triton.cdiv(inter, cfg["BLOCK_I"]), m * topk)
    _fused_moe_up_kernel[grid_up](
        act, x, w1, topk_ids, h, inter, topk,
        x.stride(0), x.stride(1), w1.stride(0), w1.stride(1), w1.stride(2),
        topk_ids.stride(0), topk_ids.stride(1),
        **cfg,
    )
    grid_down = (triton.cdiv(h, cfg["BLOCK_H"]), m)
    _fused_moe_down_kernel[grid_down](
        y, act, w2, topk_weights, topk_ids, h, inter, topk,
        w2.stride(0), w2.stride(1), w2.stride(2),
        topk_weights.stride(0), topk_weights.stride(1),
        topk_ids.stride(0), topk_ids.stride(1), y.stride(0),
        **cfg,
    )
    return y
