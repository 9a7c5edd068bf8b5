"""kb2_82_conv2d_tanh_scaling_biasadd_max: y = maxpool4(tanh(conv2d(x, W) + b) * 2 + c).

The Model: Conv2d(CI -> CO, kernel 3, no padding) with its bias b, tanh, times 2 (its
scaling_factor), plus a per-channel bias c, then MaxPool2d(4). Torch eager writes the conv's
output ([128, 64, 254, 254] at the problem's size: 2.1 GB) and reads and writes it once per step
after, then reads it for the pool; here x (268 MB) is read and the pooled output (130 MB) written,
nothing between. The conv is computed only at the pixels a window reads (floor mode leaves the
last rows and columns to none), once each.

One program: BLOCK pooled positions of one image, all CO (at most 64) channels. It walks the 16
pixels of their windows in turn: the conv at that pixel for every channel, as two fp32 dots in
torch's (ci, kh, kw) order of the weights (loaded at each pixel: the L1 holds them) with the
input values the taps read (taps 0-63 and 64-79, CI * 9 <= 72 of them real, the rest zero-padded),
`input_precision="ieee"`: FMAs on the CUDA cores, never TF32 (torch's cuDNN may run the conv in
TF32; these are exact fp32 products), 76 GFLOP at the problem's size; then the steps, each
rounded to fp32 as torch's kernels round (libdevice's tanh is CUDA's tanhf, which torch calls),
and a running maximum. torch's max pooling lets NaN through, so a NaN seen at any pixel is kept
aside and wins at the end. Every stride of x, the weights and c is honoured (the domain's strided,
transposed and offset views of x); the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

K, POOL = 3, 4  # the kernel and the pool, fixed by the problem
SCALE = 2.0  # the Model's scaling_factor, a constant of the problem
TUNE_SPACE = {"BLOCK": [32, 64], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK": 32, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _taps(t, x_ptr, w_ptr, co, co_ok, x_q, q_ok, CI, sxc, sxh, sxw, swo, swc, swh, sww,
          K: tl.constexpr):  # fmt: skip
    """The weights [CO_BLOCK, T] and input values [T, BLOCK] of taps t (zero past CI * K * K)."""
    t_ok = t < CI * K * K
    ci = t // (K * K)
    kh = (t // K) % K
    kw = t % K
    w_tap = ci * swc + kh * swh + kw * sww
    wt = tl.load(
        w_ptr + co[:, None] * swo + w_tap[None, :], mask=co_ok[:, None] & t_ok[None, :], other=0.0
    )
    x_tap = ci * sxc + kh * sxh + kw * sxw
    xt = tl.load(
        x_ptr + x_tap[:, None] + x_q[None, :], mask=t_ok[:, None] & q_ok[None, :], other=0.0
    )
    return wt, xt


@triton.jit
def _fused_kernel(
    y_ptr,  # *f32, [N, CO, PH, PW] contiguous
    x_ptr,  # *f32, [N, CI, H, W], strides (sxn, sxc, sxh, sxw)
    w_ptr,  # *f32, [CO, CI, 3, 3], strides (swo, swc, swh, sww)
    b_ptr,  # *f32, [CO]: the conv's bias
    c_ptr,  # *f32, [CO, 1, 1]: the Model's bias, channel stride sc
    CI, CO, PH, PW,
    sxn, sxc, sxh, sxw,
    swo, swc, swh, sww,
    sc,
    K: tl.constexpr, POOL: tl.constexpr, SCALE: tl.constexpr,
    CO_BLOCK: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    q = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # pooled position in the image
    q_ok = q < PH * PW
    ph = q // PW
    pw = q % PW
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    bias = tl.load(b_ptr + co, mask=co_ok, other=0.0)
    c = tl.load(c_ptr + co * sc, mask=co_ok, other=0.0)
    best = tl.full((CO_BLOCK, BLOCK), float("-inf"), tl.float32)
    nan = tl.zeros((CO_BLOCK, BLOCK), dtype=tl.int1)
    for v in range(POOL * POOL):  # the window's pixels
        h = ph * POOL + v // POOL
        w = pw * POOL + v % POOL
        x_q = n * sxn + h.to(tl.int64) * sxh + w.to(tl.int64) * sxw
        # Taps 0-63, then 64-79 into the same chain: exact fp32 FMAs, never the tensor cores.
        w1, x1 = _taps(tl.arange(0, 64), x_ptr, w_ptr, co, co_ok, x_q, q_ok, CI,
                       sxc, sxh, sxw, swo, swc, swh, sww, K)  # fmt: skip
        z = tl.dot(w1, x1, input_precision="ieee")
        w2, x2 = _taps(64 + tl.arange(0, 16), x_ptr, w_ptr, co, co_ok, x_q, q_ok, CI,
                       sxc, sxh, sxw, swo, swc, swh, sww, K)  # fmt: skip
        z = tl.dot(w2, x2, z, input_precision="ieee")
        s = libdevice.tanh(z + bias[:, None]) * SCALE + c[:, None]
        nan = nan | (s != s)
        best = tl.where(s > best, s, best)
    out = tl.where(nan, float("nan"), best)
    y = y_ptr + (n * CO + co.to(tl.int64))[:, None] * (PH * PW) + q[None, :]
    tl.store(y, out, mask=co_ok[:, None] & q_ok[None, :])


def kb2_82_conv2d_tanh_scaling_biasadd_max(x, bias, conv_weight, conv_bias):
    n, ci, h, w = x.shape
    co = conv_weight.shape[0]
    ph, pw = (h - K + 1) // POOL, (w - K + 1) // POOL
    y = torch.empty((n, co, ph, pw), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    assert ci * K * K <= 80, "at most 80 taps: two dots of 64 and 16"
    cfg = _config(n, co, ph * pw)
    grid = (n, triton.cdiv(ph * pw, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_weight, conv_bias, bias, ci, co, ph, pw, *x.stride(), *conv_weight.stride(),
        bias.stride(0), K=K, POOL=POOL, SCALE=SCALE,
        CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
