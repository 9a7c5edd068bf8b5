"""kb2_50_convtranspose3d_scaling_avgpool_biasadd_scaling: (avgpool2(convT(x) s1) + c) s2, fused.

The Model: ConvTranspose3d(3 -> CO, kernel 3, stride 2, padding 1) with its bias, times the
scalar parameter s1, AvgPool3d(2), plus a per-channel bias c, times the scalar s2. Torch eager
writes the transposed conv's output ([128, 16, 31, 63, 63] at the problem's size: 1 GB), reads
and writes it for the scaling, reads it for the pool, then reads and writes the pooled tensor
twice; here x (25 MB) is read and the pooled output (122 MB) written once.

Which taps reach an output: o = 2 i - 1 + k per dimension. The pool's window at j covers
o = 2 j (even: k = 1 from i = j) and o = 2 j + 1 (odd: k = 0 from i = j + 1, k = 2 from
i = j), so the window's 8 voxels, one per parity class (qd, qh, qw), take 3 x 1, 2, 4 or 8 taps
each: 81 in all. i never leaves the input (j runs to D - 2), and the last output plane, which
no window reads (floor mode), is never computed.

One program: BLOCK pooled positions of one image, all CO (at most 16) channels. For each of the
8 classes, in the window's (d, h, w) order as torch's pool adds them: the conv at that voxel
for every channel as one fp32 dot of the class's weights [CO, taps] with the input values the
taps read [taps, BLOCK] (padded to 16 or 32 taps), `input_precision="ieee"`: FMAs on the CUDA
cores, never TF32 (torch's cuDNN may run it in TF32; these are exact fp32 products); the bias,
times s1, added into the window's sum. Then / 8, + c, times s2, each rounded to fp32 as torch's
kernels round. Every stride of x and of the parameters is honoured; the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# 3 input channels, the kernel 3, stride 2, padding 1 and the pool of 2: constants of the problem
TUNE_SPACE = {"BLOCK": [32, 64, 128], "num_warps": [2, 4]}
DEFAULT_CONFIG = {"BLOCK": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _class_conv(
    x_n, w_ptr, co, co_ok, jd, jh, jw, p_ok,
    sxc, sxd, sxh, sxw, swi, swo, swd, swh, sww,
    QD: tl.constexpr, QH: tl.constexpr, QW: tl.constexpr, TP: tl.constexpr,
):  # fmt: skip
    """The transposed conv, without its bias, at the window voxel of parity (QD, QH, QW) for
    every channel [CO_BLOCK, BLOCK]: its taps, 3 x (1 + QD)(1 + QH)(1 + QW), padded to TP."""
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
    tap = ci * sxc + (QD * (1 - ad)) * sxd + (QH * (1 - ah)) * sxh + (QW * (1 - aw)) * sxw
    xt = tl.load(
        x_n + tap[:, None] + (jd * sxd + jh * sxh + jw * sxw)[None, :],
        mask=t_ok[:, None] & p_ok[None, :],
        other=0.0,
    )  # [TP, BLOCK]
    return tl.dot(wt, xt, input_precision="ieee")


@triton.jit
def _fused_kernel(
    y_ptr,  # *f32, [N, CO, PD, PH, PW] contiguous
    x_ptr,  # *f32, [N, 3, D, H, W], strides (sxn, sxc, sxd, sxh, sxw)
    w_ptr,  # *f32, [3, CO, 3, 3, 3], strides (swi, swo, swd, swh, sww)
    b_ptr,  # *f32, [CO]: the transposed conv's bias
    s1_ptr,  # *f32, []: scale1
    c_ptr,  # *f32, [CO, 1, 1, 1]: the Model's bias, channel stride sc
    s2_ptr,  # *f32, []: scale2
    CO, PD, PH, PW,
    sxn, sxc, sxd, sxh, sxw,
    swi, swo, swd, swh, sww,
    sc,
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
    c = tl.load(c_ptr + co * sc, mask=co_ok, other=0.0)
    s1 = tl.load(s1_ptr)
    s2 = tl.load(s2_ptr)
    x_n = x_ptr + n * sxn
    acc = tl.zeros((CO_BLOCK, BLOCK), dtype=tl.float32)
    for qd in tl.static_range(2):
        for qh in tl.static_range(2):
            for qw in tl.static_range(2):
                z = _class_conv(
                    x_n, w_ptr, co, co_ok, jd, jh, jw, p_ok,
                    sxc, sxd, sxh, sxw, swi, swo, swd, swh, sww,
                    qd, qh, qw, 32 if qd + qh + qw == 3 else 16,
                )  # fmt: skip
                acc += (z + bias[:, None]) * s1
    out = (acc * 0.125 + c[:, None]) * s2  # / 8: exact, a power of two
    y = y_ptr + (n * CO + co.to(tl.int64))[:, None] * (PD * PH * PW) + p[None, :]
    tl.store(y, out, mask=co_ok[:, None] & p_ok[None, :])


def kb2_50_convtranspose3d_scaling_avgpool_biasadd_scaling(
    x, scale1, bias, scale2, conv_transpose_weight, conv_transpose_bias
):
    n, _, d, h, w = x.shape
    co = conv_transpose_weight.shape[1]
    # the transposed conv's output is 2 D - 1 a side; the pool of 2 halves it, rounding down
    pd, ph, pw = d - 1, h - 1, w - 1
    y = torch.empty((n, co, max(pd, 0), max(ph, 0), max(pw, 0)), dtype=torch.float32,
                    device=x.device)  # fmt: skip
    if y.numel() == 0:
        return y
    cfg = _config(n, co, pd * ph * pw)
    grid = (n, triton.cdiv(pd * ph * pw, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_transpose_weight, conv_transpose_bias, scale1, bias, scale2,
        co, pd, ph, pw, *x.stride(), *conv_transpose_weight.stride(), bias.stride(0),
        CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
