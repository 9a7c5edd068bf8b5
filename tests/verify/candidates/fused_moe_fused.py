"""Honest fused_moe in another style: one kernel, no scratch buffer. A program per (token, block
of outputs) recomputes each intermediate block it needs (gate and up over all of H) and applies
the slot's weight block by block; silu as g * sigmoid(g). fp32 throughout, its own summation
order, one rounding at the store.

Right on every case it finishes, and hopeless at a real batch: a program per (token, 128 outputs)
reads its experts' whole w1 again, 235 MB, so DeepSeek-V3's dims at 65600 tokens (the limit
case) would read about 860 TB. On CUDA it is rejected as `timeout` there."""

import torch
import triton
import triton.language as tl


@triton.jit
def _moe_fused_kernel(
    y_ptr, x_ptr, w1_ptr, w2_ptr, tw_ptr, ids_ptr, hidden, inter, topk,
    stride_xm, stride_xh, stride_w1e, stride_w1n, stride_w1h, stride_w2e, stride_w2h, stride_w2i,
    stride_twm, stride_twk, stride_idm, stride_idk, stride_ym,
    BLOCK_OUT: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    m = tl.program_id(0).to(tl.int64)
    outs = tl.program_id(1) * BLOCK_OUT + tl.arange(0, BLOCK_OUT)
    acc = tl.zeros([BLOCK_OUT], tl.float32)
    for j in range(0, topk):
        e = tl.load(ids_ptr + m * stride_idm + j * stride_idk).to(tl.int64)
        wt = tl.load(tw_ptr + m * stride_twm + j * stride_twk)
        for i0 in range(0, inter, BLOCK_I):
            cols = i0 + tl.arange(0, BLOCK_I)
            gate = tl.zeros([BLOCK_I], tl.float32)
            up = tl.zeros([BLOCK_I], tl.float32)
            for k0 in range(0, hidden, BLOCK_K):
                ks = k0 + tl.arange(0, BLOCK_K)
                xv = tl.load(x_ptr + m * stride_xm + ks * stride_xh, mask=ks < hidden, other=0.0)
                mask = (cols[:, None] < inter) & (ks[None, :] < hidden)
                base = w1_ptr + e * stride_w1e + ks[None, :] * stride_w1h
                wg = tl.load(base + cols[:, None] * stride_w1n, mask=mask, other=0.0)
                wu = tl.load(base + (cols[:, None] + inter) * stride_w1n, mask=mask, other=0.0)
                xf = xv.to(tl.float32)[None, :]
                gate += tl.sum(wg.to(tl.float32) * xf, axis=1)
                up += tl.sum(wu.to(tl.float32) * xf, axis=1)
            act = gate * tl.sigmoid(gate) * up
            w2 = tl.load(
                w2_ptr + e * stride_w2e + outs[:, None] * stride_w2h + cols[None, :] * stride_w2i,
                mask=(outs[:, None] < hidden) & (cols[None, :] < inter),
                other=0.0,
            )
            acc += wt * tl.sum(w2.to(tl.float32) * act[None, :], axis=1)
    tl.store(y_ptr + m * stride_ym + outs, acc.to(y_ptr.dtype.element_ty), mask=outs < hidden)


def fused_moe(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    m, hidden = x.shape
    inter = w1.shape[1] // 2
    y = torch.empty((m, hidden), dtype=x.dtype, device=x.device)
    if m == 0:
        return y
    grid = (m, triton.cdiv(hidden, 128))
    _moe_fused_kernel[grid](
        y, x, w1, w2, topk_weights, topk_ids, hidden, inter, topk_ids.shape[1],
        x.stride(0), x.stride(1), w1.stride(0), w1.stride(1), w1.stride(2),
        w2.stride(0), w2.stride(1), w2.stride(2), topk_weights.stride(0), topk_weights.stride(1),
        topk_ids.stride(0), topk_ids.stride(1), y.stride(0),
        BLOCK_OUT=128, BLOCK_I=32, BLOCK_K=64,
    )  # fmt: skip
    return y
