"""kb2_48_conv3d_scaling_tanh_multiply_sigmoid: sigmoid(tanh((conv3d(x, W) + b) * s) * c), fused.

The Model: Conv3d(3 -> CO, kernel 3, no padding) with its bias, then four elementwise steps with
per-channel parameters s (scaling_factor) and c (bias), both [CO, 1, 1, 1]. Torch eager writes
the conv's output ([128, 16, 14, 62, 62] at the problem's size: 441 MB) and reads and writes it
once per step, five passes; here x (101 MB) is read and the output written once.

One program: BLOCK output voxels of one image (flattened over d, h, w), all CO (at most 16)
channels. The conv is two fp32 dots, in torch's (ci, kd, kh, kw) order, of the weights with
the input values the taps read: taps 0-63 and 64-95, 81 of them real and the rest zero-padded
(one dot of 128 would pad 81 to 128). `input_precision="ieee"`: FMAs on the CUDA cores, never
TF32 (torch's cuDNN may run the conv in TF32; these are exact fp32 products). 18 GFLOP at the
problem's size, 21 with the padding. The steps follow in registers, each rounded to fp32 as
torch's kernels round: libdevice's tanh and exp are CUDA's tanhf and expf, which torch's
kernels call. Every stride of x and of the parameters is honoured (the domain's strided,
transposed and offset views of x); the output is contiguous, each channel's voxels stored in a
row.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

CI, K = 3, 3  # in_channels and the kernel, fixed by the problem
TUNE_SPACE = {"BLOCK": [32, 64, 128], "num_warps": [2, 4]}
DEFAULT_CONFIG = {"BLOCK": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _taps(t, x_ptr, w_ptr, co, co_ok, x_q, q_ok, sxc, sxd, sxh, sxw, swo, swc, swd, swh, sww,
          CI: tl.constexpr, K: tl.constexpr):  # fmt: skip
    """The weights [CO_BLOCK, T] and input values [T, BLOCK] of taps t, in torch's
    (ci, kd, kh, kw) order (zero past CI * K^3)."""
    t_ok = t < CI * K * K * K
    ci = t // (K * K * K)
    kd = (t // (K * K)) % K
    kh = (t // K) % K
    kw = t % K
    w_tap = ci * swc + kd * swd + kh * swh + kw * sww
    wt = tl.load(
        w_ptr + co[:, None] * swo + w_tap[None, :], mask=co_ok[:, None] & t_ok[None, :], other=0.0
    )
    x_tap = ci * sxc + kd * sxd + kh * sxh + kw * sxw
    xt = tl.load(
        x_ptr + x_tap[:, None] + x_q[None, :], mask=t_ok[:, None] & q_ok[None, :], other=0.0
    )
    return wt, xt


@triton.jit
def _fused_kernel(
    y_ptr,  # *f32, [N, CO, OD, OH, OW] contiguous
    x_ptr,  # *f32, [N, 3, D, H, W], strides (sxn, sxc, sxd, sxh, sxw)
    w_ptr,  # *f32, [CO, 3, 3, 3, 3], strides (swo, swc, swd, swh, sww)
    cb_ptr,  # *f32, [CO]: the conv's bias
    s_ptr,  # *f32, [CO, 1, 1, 1]: scaling_factor, channel stride ss
    c_ptr,  # *f32, [CO, 1, 1, 1]: bias, channel stride sc
    CO, OD, OH, OW,
    sxn, sxc, sxd, sxh, sxw,
    swo, swc, swd, swh, sww,
    ss, sc,
    CI: tl.constexpr, K: tl.constexpr,
    CO_BLOCK: tl.constexpr, BLOCK: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    q = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)  # output voxel in the image
    q_ok = q < OD * OH * OW
    d = q // (OH * OW)
    h = (q // OW) % OH
    w = q % OW
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    x_q = n * sxn + d.to(tl.int64) * sxd + h.to(tl.int64) * sxh + w.to(tl.int64) * sxw
    # Taps 0-63, then 64-95 (81 real) into the same chain: exact fp32 FMAs, never the tensor
    # cores.
    w1, x1 = _taps(tl.arange(0, 64), x_ptr, w_ptr, co, co_ok, x_q, q_ok,
                   sxc, sxd, sxh, sxw, swo, swc, swd, swh, sww, CI, K)  # fmt: skip
    z = tl.dot(w1, x1, input_precision="ieee")
    w2, x2 = _taps(64 + tl.arange(0, 32), x_ptr, w_ptr, co, co_ok, x_q, q_ok,
                   sxc, sxd, sxh, sxw, swo, swc, swd, swh, sww, CI, K)  # fmt: skip
    z = tl.dot(w2, x2, z, input_precision="ieee")
    cb = tl.load(cb_ptr + co, mask=co_ok, other=0.0)
    s = tl.load(s_ptr + co * ss, mask=co_ok, other=0.0)
    c = tl.load(c_ptr + co * sc, mask=co_ok, other=0.0)
    z = z + cb[:, None]
    z = z * s[:, None]
    z = libdevice.tanh(z)
    z = z * c[:, None]
    z = 1.0 / (1.0 + libdevice.exp(-z))
    y = y_ptr + (n * CO + co.to(tl.int64))[:, None] * (OD * OH * OW) + q[None, :]
    tl.store(y, z, mask=co_ok[:, None] & q_ok[None, :])


def kb2_48_conv3d_scaling_tanh_multiply_sigmoid(x, scaling_factor, bias, conv_weight, conv_bias):
    n, _, d, h, w = x.shape
    co = conv_weight.shape[0]
    od, oh, ow = d - K + 1, h - K + 1, w - K + 1
    y = torch.empty((n, co, od, oh, ow), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(n, co, od * oh * ow)
    grid = (n, triton.cdiv(od * oh * ow, cfg["BLOCK"]))
    _fused_kernel[grid](
        y, x, conv_weight, conv_bias, scaling_factor, bias, co, od, oh, ow,
        *x.stride(), *conv_weight.stride(), scaling_factor.stride(0), bias.stride(0),
        CI=CI, K=K, CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
