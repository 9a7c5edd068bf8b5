"""kb2_69_conv2d_hardswish_relu: y = relu(hardswish(conv2d(x, W) + b)).

The Model: Conv2d(CI -> CO, kernel 3, no padding) with its bias, torch's hardswish, then relu.
Torch eager writes the conv's output ([128, 64, 126, 126] at the problem's size: 520 MB) and
reads and writes it once per step after; here x (67 MB) is read and the output written once.

One program: BLOCK output pixels of one image (flattened over h, w), all CO (at most 64)
channels. The conv is two fp32 dots, in torch's (ci, kh, kw) order, of the weights (loaded once)
with the input values the taps read: taps 0-63 and 64-79, CI * 9 <= 72 of them real and the rest
zero-padded (one dot of 128 would pad 72 to 128). `input_precision="ieee"`: FMAs on the CUDA
cores, never TF32 (torch's cuDNN may run the conv in TF32; these are exact fp32 products). 19
GFLOP at the problem's size, 21 with the padding. hardswish is torch's CUDA formula,
x * min(max(x + 3, 0), 6) / 6 in that order (`div_rn`: torch's division is IEEE's), whose
max and min let NaN through and make hardswish(-inf) NaN, as torch's does; relu lets NaN
through. Every stride of x and of the weights is honoured (the domain's strided, transposed and
offset views of x); the output is contiguous, each channel's pixels stored in a row.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

K = 3  # the kernel, fixed by the problem
TUNE_SPACE = {"BLOCK": [32, 64, 128], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK": 64, "num_warps": 4}
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
def _epilogue(z):
    """torch's hardswish, x * min(max(x + 3, 0), 6) / 6, then relu; NaN passes through."""
    t = z + 3.0
    t = tl.where(t < 0.0, 0.0, t)
    t = tl.where(6.0 < t, 6.0, t)
    hs = tl.div_rn(z * t, 6.0)
    return tl.where(hs < 0.0, 0.0, hs)


@triton.jit
def _fused_kernel(
    y_ptr,  # *f32, [N, CO, OH, OW] contiguous
    x_ptr,  # *f32, [N, CI, H, W], strides (sxn, sxc, sxh, sxw)
    w_ptr,  # *f32, [CO, CI, 3, 3], strides (swo, swc, swh, sww)
    b_ptr,  # *f32, [CO]: the conv's bias
    CI, CO, OH, OW,
    sxn, sxc, sxh, sxw,
    swo, swc, swh, sww,
    K: tl.constexpr, CO_BLOCK: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    q = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # output pixel in the image
    q_ok = q < OH * OW
    h = q // OW
    w = q % OW
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    x_q = n * sxn + h.to(tl.int64) * sxh + w.to(tl.int64) * sxw
    # Taps 0-63, then 64-79 into the same chain: exact fp32 FMAs, never the tensor cores.
    w1, x1 = _taps(tl.arange(0, 64), x_ptr, w_ptr, co, co_ok, x_q, q_ok, CI,
                   sxc, sxh, sxw, swo, swc, swh, sww, K)  # fmt: skip
    z = tl.dot(w1, x1, input_precision="ieee")
    w2, x2 = _taps(64 + tl.arange(0, 16), x_ptr, w_ptr, co, co_ok, x_q, q_ok, CI,
                   sxc, sxh, sxw, swo, swc, swh, sww, K)  # fmt: skip
    z = tl.dot(w2, x2, z, input_precision="ieee")
    bias = tl.load(b_ptr + co, mask=co_ok, other=0.0)
    z = _epilogue(z + bias[:, None])
    y = y_ptr + (n * CO + co.to(tl.int64))[:, None] * (OH * OW) + q[None, :]
    tl.store(y, z, mask=co_ok[:, None] & q_ok[None, :])


def kb2_69_conv2d_hardswish_relu(x, conv_weight, conv_bias):
    n, ci, h, w = x.shape
    co = conv_weight.shape[0]
    oh, ow = h - K + 1, w - K + 1
    y = torch.empty((n, co, oh, ow), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    assert ci * K * K <= 80, "at most 80 taps: two dots of 64 and 16"
    cfg = _config(n, co, oh * ow)
    grid = (n, triton.cdiv(oh * ow, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_weight, conv_bias, ci, co, oh, ow, *x.stride(), *conv_weight.stride(),
        K=K, CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
