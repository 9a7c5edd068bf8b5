"""kb2_89_convtranspose3d_maxpool_softmax_subtract_swish_max: max_c swish(softmax_c(pool) - s).

The Model: ConvTranspose3d(3 -> CO, kernel 3, stride 2, padding 1, output_padding 1) with its
bias, MaxPool3d(2), softmax over the channels, minus a per-channel s, swish (sigmoid(v) * v),
and the maximum over the channels: one value per pooled position. Torch eager writes the
transposed conv's output ([128, 16, 32, 64, 64] at the problem's size: 1.1 GB), reads it for the
pool, then reads and writes the pooled tensor once per step; here x (25 MB) is read and the
[128, 16, 32, 32] output (8 MB) written, nothing between.

Which taps reach an output: o = 2 i - 1 + k per dimension. The pool's window at j covers
o = 2 j (even: k = 1 from i = j) and o = 2 j + 1 (odd: k = 0 from i = j + 1, k = 2 from
i = j), so the window's 8 voxels, one per parity class (qd, qh, qw), take 3 x 1, 2, 4 or 8 taps
each: 81 in all. output_padding makes the output 2 D a side, so the last window (j = D - 1)
has an odd voxel whose k = 0 tap would read i = D: past the input, it reads 0, as the conv
adds nothing there.

One program: BLOCK pooled positions of one image, all CO (at most 16) channels. For each of the
8 classes: the conv at that voxel for every channel as one fp32 dot of the class's weights
[CO, taps] with the input values the taps read [taps, BLOCK] (padded to 16 or 32 taps),
`input_precision="ieee"`: FMAs on the CUDA cores, never TF32 (torch's cuDNN may run it in TF32;
these are exact fp32 products); the bias, and a running maximum (the pool; torch's lets NaN
through, so a NaN seen is kept aside and wins). Then, in registers: the softmax over the
channels (libdevice's exp, torch's expf; channels past CO are -inf), minus s, swish with
sigmoid as torch's 1 / (1 + exp(-v)), and the maximum over the channels, NaN winning as in
torch.max. Every stride of x and of the parameters is honoured; the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

# 3 input channels, the kernel 3, stride 2, padding 1, output_padding 1 and the pool of 2:
# constants of the problem
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
    tap whose input lies past the last plane (i = D, which output_padding's odd last plane
    asks for) reads 0."""
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
def _fused_kernel(
    y_ptr,  # *f32, [N, PD, PH, PW] contiguous
    x_ptr,  # *f32, [N, 3, D, H, W], strides (sxn, sxc, sxd, sxh, sxw)
    w_ptr,  # *f32, [3, CO, 3, 3, 3], strides (swi, swo, swd, swh, sww)
    b_ptr,  # *f32, [CO]: the transposed conv's bias
    s_ptr,  # *f32, [CO]: subtract, stride ss
    CO, D, H, W, PD, PH, PW,
    sxn, sxc, sxd, sxh, sxw,
    swi, swo, swd, swh, sww,
    ss,
    CO_BLOCK: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # pooled position in the image
    p_ok = p < PD * PH * PW
    jd = (p // (PH * PW)).to(tl.int64)
    jh = ((p // PW) % PH).to(tl.int64)
    jw = (p % PW).to(tl.int64)
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    bias = tl.load(b_ptr + co, mask=co_ok, other=0.0)
    sub = tl.load(s_ptr + co * ss, mask=co_ok, other=0.0)
    x_n = x_ptr + n * sxn
    best = tl.full((CO_BLOCK, BLOCK), float("-inf"), tl.float32)
    nan = tl.zeros((CO_BLOCK, BLOCK), dtype=tl.int1)
    for qd in tl.static_range(2):
        for qh in tl.static_range(2):
            for qw in tl.static_range(2):
                z = _class_conv(
                    x_n, w_ptr, co, co_ok, jd, jh, jw, p_ok, D, H, W,
                    sxc, sxd, sxh, sxw, swi, swo, swd, swh, sww,
                    qd, qh, qw, 32 if qd + qh + qw == 3 else 16,
                )  # fmt: skip
                v = z + bias[:, None]
                nan = nan | (v != v)
                best = tl.where(v > best, v, best)
    m = tl.where(nan, float("nan"), best)
    m = tl.where(co_ok[:, None], m, float("-inf"))
    e = libdevice.exp(m - tl.max(m, axis=0)[None, :])
    v = e / tl.sum(e, axis=0)[None, :] - sub[:, None]
    v = v * (1.0 / (1.0 + libdevice.exp(-v)))  # sigmoid(v) * v, as torch rounds each
    v = tl.where(co_ok[:, None], v, float("-inf"))
    out = tl.max(v, axis=0)
    out = tl.where(tl.max((v != v).to(tl.int32), axis=0) > 0, float("nan"), out)
    tl.store(y_ptr + n * (PD * PH * PW) + p, out, mask=p_ok)


def kb2_89_convtranspose3d_maxpool_softmax_subtract_swish_max(
    x, subtract, conv_transpose_weight, conv_transpose_bias
):
    n, _, d, h, w = x.shape
    co = conv_transpose_weight.shape[1]
    # the transposed conv's output is 2 D a side (output_padding 1); the pool of 2 halves it
    pd, ph, pw = d, h, w
    y = torch.empty((n, pd, ph, pw), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(n, co, pd * ph * pw)
    grid = (n, triton.cdiv(pd * ph * pw, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_transpose_weight, conv_transpose_bias, subtract,
        co, d, h, w, pd, ph, pw, *x.stride(), *conv_transpose_weight.stride(), subtract.stride(0),
        CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
