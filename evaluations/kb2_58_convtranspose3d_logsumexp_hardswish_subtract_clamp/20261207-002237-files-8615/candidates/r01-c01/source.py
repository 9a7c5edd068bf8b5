"""kb2_58_convtranspose3d_logsumexp_hardswish_subtract_clamp: the Model's tail on logsumexp_c.

The Model: ConvTranspose3d(3 -> CO, kernel 3, stride 2, padding 1) with its bias, logsumexp over
the channels (keepdim), v * sigmoid(v + 3) / 6, minus a scalar parameter, clamp to [-1, 1]: one
value per output voxel. Torch eager writes the transposed conv's output ([128, 16, 31, 63, 63]
at the problem's size: 1 GB) and reads it for the logsumexp (amax, subtract, exp, sum, log, add:
several passes), then passes over the [128, 1, 31, 63, 63] result once per step; here x (25 MB)
is read and the result (63 MB) written once.

Which taps reach an output: o = 2 i - 1 + k per dimension. Output o = 2 j + q (parity q) takes
k = 1 from i = j when q = 0, and k = 0 from i = j + 1 or k = 2 from i = j when q = 1. So each
2x2x2 block of outputs at j holds one voxel of each parity class (qd, qh, qw), taking 3 x 1, 2,
4 or 8 taps: 81 in all, none masked. The output is 2 D - 1 a side: the last block's odd voxels
lie past it, are not stored, and their taps past the input (i = D) read 0.

One program: BLOCK blocks of one image. For each of the 8 classes: the conv at that voxel for
every channel as one fp32 dot of the class's weights [CO, taps] with the input values the taps
read [taps, BLOCK] (padded to 16 or 32 taps), `input_precision="ieee"`: FMAs on the CUDA cores,
never TF32 (torch's cuDNN may run it in TF32; these are exact fp32 products); the bias; then in
registers torch's logsumexp (its max m, set to 0 where infinite, log(sum(exp(v - m))) + m, with
libdevice's exp and log, CUDA's expf and logf), and the tail, each step rounded to fp32 as
torch's kernels round (`div_rn`: torch's division is IEEE's; clamp lets NaN through). Every
stride of x and of the weights is honoured; the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

# 3 input channels, the kernel 3, stride 2 and padding 1: constants of the problem
TUNE_SPACE = {"BLOCK": [64, 128, 256], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK": 256, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _class_conv(
    x_n, w_ptr, co, co_ok, jd, jh, jw, p_ok, D, H, W,
    sxc, sxd, sxh, sxw, swi, swo, swd, swh, sww,
    QD: tl.constexpr, QH: tl.constexpr, QW: tl.constexpr, TP: tl.constexpr,
):  # fmt: skip
    """The transposed conv, without its bias, at the window voxel of parity (QD, QH, QW) for
    every channel [CO_BLOCK, BLOCK]: its taps, 3 x (1 + QD)(1 + QH)(1 + QW), padded to TP. A
    tap whose input lies past the last plane (i = D: the odd voxel past the output's end, in
    the last window) reads 0."""
    ND: tl.constexpr = 1 + QD
    NH: tl.constexpr = 1 + QH
    NW: tl.constexpr = 1 + QW
    t = tl.arange(0, TP)
    t_ok = t < 3 * ND * NH * NW
    ci = t // (ND * NH * NW)
    r = t % (ND * NH * NW)
    ad = r // (NH * NW)
    ah = (r // NW) % NH
    aw = r % NW
    # per dimension: an even output (q = 0) takes k = 1 from i = j; an odd one k = 2a from
    # i = j + 1 - a
    kd = (1 - QD) + 2 * ad * QD
    kh = (1 - QH) + 2 * ah * QH
    kw = (1 - QW) + 2 * aw * QW
    wt = tl.load(
        w_ptr + ci[None, :] * swi + co[:, None] * swo + (kd * swd + kh * swh + kw * sww)[None, :],
        mask=co_ok[:, None] & t_ok[None, :],
        other=0.0,
    )  # [CO_BLOCK, TP]
    ed = QD * (1 - ad)  # i - j per dimension: 0 or 1
    eh = QH * (1 - ah)
    ew = QW * (1 - aw)
    tap = ci * sxc + ed * sxd + eh * sxh + ew * sxw
    inside = (
        ((jd[None, :] + ed[:, None]) < D)
        & ((jh[None, :] + eh[:, None]) < H)
        & ((jw[None, :] + ew[:, None]) < W)
    )
    xt = tl.load(
        x_n + tap[:, None] + (jd * sxd + jh * sxh + jw * sxw)[None, :],
        mask=t_ok[:, None] & p_ok[None, :] & inside,
        other=0.0,
    )  # [TP, BLOCK]
    return tl.dot(wt, xt, input_precision="ieee")


@triton.jit
def _tail(z, co_ok, sub):
    """torch's logsumexp over the channels (axis 0), then v * sigmoid(v + 3) / 6 - sub, clamped
    to [-1, 1]."""
    z = tl.where(co_ok[:, None], z, float("-inf"))
    m = tl.max(z, axis=0)
    m = tl.where(tl.max((z != z).to(tl.int32), axis=0) > 0, float("nan"), m)  # amax keeps NaN
    m = tl.where(tl.abs(m) == float("inf"), 0.0, m)
    v = libdevice.log(tl.sum(libdevice.exp(z - m[None, :]), axis=0)) + m
    g = 1.0 / (1.0 + libdevice.exp(-(v + 3.0)))
    v = tl.div_rn(v * g, 6.0) - sub
    return tl.where(v < -1.0, -1.0, tl.where(v > 1.0, 1.0, v))


@triton.jit
def _fused_kernel(
    y_ptr,  # *f32, [N, 1, OD, OH, OW] contiguous
    x_ptr,  # *f32, [N, 3, D, H, W], strides (sxn, sxc, sxd, sxh, sxw)
    w_ptr,  # *f32, [3, CO, 3, 3, 3], strides (swi, swo, swd, swh, sww)
    b_ptr,  # *f32, [CO]: the transposed conv's bias
    s_ptr,  # *f32, [1, 1, 1, 1]: the Model's bias, subtracted
    CO, D, H, W,
    sxn, sxc, sxd, sxh, sxw,
    swi, swo, swd, swh, sww,
    CO_BLOCK: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # block of outputs (jd, jh, jw)
    p_ok = p < D * H * W
    jd = (p // (H * W)).to(tl.int64)
    jh = ((p // W) % H).to(tl.int64)
    jw = (p % W).to(tl.int64)
    od_n, oh_n, ow_n = 2 * D - 1, 2 * H - 1, 2 * W - 1
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    bias = tl.load(b_ptr + co, mask=co_ok, other=0.0)
    sub = tl.load(s_ptr)
    x_n = x_ptr + n * sxn
    y_n = y_ptr + n * od_n * oh_n * ow_n
    for qd in tl.static_range(2):
        for qh in tl.static_range(2):
            for qw in tl.static_range(2):
                z = _class_conv(
                    x_n, w_ptr, co, co_ok, jd, jh, jw, p_ok, D, H, W,
                    sxc, sxd, sxh, sxw, swi, swo, swd, swh, sww,
                    qd, qh, qw, 32 if qd + qh + qw == 3 else 16,
                )  # fmt: skip
                out = _tail(z + bias[:, None], co_ok, sub)
                od = 2 * jd + qd
                oh = 2 * jh + qh
                ow = 2 * jw + qw
                keep = p_ok & (od < od_n) & (oh < oh_n) & (ow < ow_n)
                tl.store(y_n + (od * oh_n + oh) * ow_n + ow, out, mask=keep)


def kb2_58_convtranspose3d_logsumexp_hardswish_subtract_clamp(
    x, bias, conv_transpose_weight, conv_transpose_bias
):
    n, _, d, h, w = x.shape
    co = conv_transpose_weight.shape[1]
    y = torch.empty((n, 1, 2 * d - 1, 2 * h - 1, 2 * w - 1), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(n, co, d * h * w)
    grid = (n, triton.cdiv(d * h * w, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_transpose_weight, conv_transpose_bias, bias, co, d, h, w,
        *x.stride(), *conv_transpose_weight.stride(),
        CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
