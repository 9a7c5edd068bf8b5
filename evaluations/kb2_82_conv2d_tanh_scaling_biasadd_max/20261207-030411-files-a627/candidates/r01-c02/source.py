"""kb2_82_conv2d_tanh_scaling_biasadd_max: y = maxpool4(tanh(conv2d(x, W) + b) * 2 + c), by rows.

The same function as a_fused.py, laid out for the loads. a_fused walks a window's 16 pixels with
BLOCK pooled positions a program: each load of a tap reads one input value in four along a row
(the pooled positions are 4 columns apart), and each pixel loads the weights again. KernelBench
timed it at 104.8 ms on an H100 against eager's 10.0 and torch.compile's 3.8
(evaluations/logs/h100-20261207-kernelbench-convolutions-first-attempt).

One program: one pooled row of one image, PWB pooled columns, all CO (at most 64) channels.
The weights are loaded once, as [CO_BLOCK, 64] and [CO_BLOCK, 16] taps in torch's (ci, kh, kw)
order (CI * 9 <= 72 of them real, the rest zero). For each of the window's 4 conv rows, the conv
at the block's 4 * PWB consecutive conv columns for every channel: two fp32 dots of the weights
with the input values the taps read, each tap a run of consecutive columns (one load in full
sectors where x's rows are contiguous), `input_precision="ieee"`: FMAs on the CUDA cores, never
TF32, exact fp32 products as torch's fp32 conv gives at this problem's 8 input channels. Then
the steps, each rounded to fp32 as torch's kernels round (libdevice's tanh is CUDA's tanhf,
which torch calls), the row's 4 columns of each window folded by a max, and a running maximum
over the 4 rows. torch's max pooling lets NaN through, so a NaN seen in a window is kept aside
and wins at the end. Floor mode: the last conv rows and columns no window reads are never
computed. Every stride of x, the weights and c is honoured (the domain's strided, transposed and
offset views of x); the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

K, POOL = 3, 4  # the kernel and the pool, fixed by the problem
SCALE = 2.0  # the Model's scaling_factor, a constant of the problem
TUNE_SPACE = {"PWB": [8, 16, 32], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"PWB": 16, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _tap_weights(t, w_ptr, co, co_ok, CI, swo, swc, swh, sww, K: tl.constexpr):
    """The weights [CO_BLOCK, T] of taps t, and each tap's offset into x (0 past CI * K * K)."""
    t_ok = t < CI * K * K
    ci = t // (K * K)
    kh = (t // K) % K
    kw = t % K
    w = tl.load(
        w_ptr + co[:, None] * swo + (ci * swc + kh * swh + kw * sww)[None, :],
        mask=co_ok[:, None] & t_ok[None, :],
        other=0.0,
    )
    return w, t_ok, ci, kh, kw


@triton.jit
def _rows_kernel(
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
    CO_BLOCK: tl.constexpr, PWB: tl.constexpr,
):  # fmt: skip
    n = tl.program_id(0).to(tl.int64)
    ph = tl.program_id(1)
    pw = tl.program_id(2) * PWB + tl.arange(0, PWB)  # the block's pooled columns
    pw_ok = pw < PW
    j = tl.arange(0, PWB * POOL)  # its conv columns, POOL a pooled column
    col = (tl.program_id(2) * PWB * POOL + j).to(tl.int64)
    col_ok = (j // POOL + tl.program_id(2) * PWB) < PW
    co = tl.arange(0, CO_BLOCK)
    co_ok = co < CO
    w1, t1_ok, ci1, kh1, kw1 = _tap_weights(tl.arange(0, 64), w_ptr, co, co_ok, CI,
                                            swo, swc, swh, sww, K)  # fmt: skip
    w2, t2_ok, ci2, kh2, kw2 = _tap_weights(64 + tl.arange(0, 16), w_ptr, co, co_ok, CI,
                                            swo, swc, swh, sww, K)  # fmt: skip
    tap1 = ci1.to(tl.int64) * sxc + kh1.to(tl.int64) * sxh + kw1.to(tl.int64) * sxw
    tap2 = ci2.to(tl.int64) * sxc + kh2.to(tl.int64) * sxh + kw2.to(tl.int64) * sxw
    bias = tl.load(b_ptr + co, mask=co_ok, other=0.0)
    c = tl.load(c_ptr + co * sc, mask=co_ok, other=0.0)
    best = tl.full((CO_BLOCK, PWB), float("-inf"), tl.float32)
    nan = tl.zeros((CO_BLOCK, PWB), dtype=tl.int32)
    for r in range(POOL):  # the window's conv rows
        row = n * sxn + (ph * POOL + r).to(tl.int64) * sxh + col * sxw
        x1 = tl.load(x_ptr + tap1[:, None] + row[None, :],
                     mask=t1_ok[:, None] & col_ok[None, :], other=0.0)  # fmt: skip
        z = tl.dot(w1, x1, input_precision="ieee")  # taps 0-63, then 64-79 into the same chain
        x2 = tl.load(x_ptr + tap2[:, None] + row[None, :],
                     mask=t2_ok[:, None] & col_ok[None, :], other=0.0)  # fmt: skip
        z = tl.dot(w2, x2, z, input_precision="ieee")
        s = libdevice.tanh(z + bias[:, None]) * SCALE + c[:, None]
        windows = tl.reshape(s, (CO_BLOCK, PWB, POOL))
        nan = tl.maximum(nan, tl.max((windows != windows).to(tl.int32), axis=2))
        m = tl.max(windows, axis=2)
        best = tl.where(m > best, m, best)
    out = tl.where(nan > 0, float("nan"), best)
    y = y_ptr + (n * CO + co.to(tl.int64))[:, None] * (PH * PW) + ph * PW + pw[None, :]
    tl.store(y, out, mask=co_ok[:, None] & pw_ok[None, :])


def kb2_82_conv2d_tanh_scaling_biasadd_max(x, bias, conv_weight, conv_bias):
    n, ci, h, w = x.shape
    co = conv_weight.shape[0]
    ph, pw = (h - K + 1) // POOL, (w - K + 1) // POOL
    y = torch.empty((n, co, ph, pw), dtype=torch.float32, device=x.device)
    if y.numel() == 0:
        return y
    assert ci * K * K <= 80, "at most 80 taps: two dots of 64 and 16"
    cfg = _config(n, co, ph * pw)
    grid = (n, ph, triton.cdiv(pw, cfg["PWB"]))
    _rows_kernel[grid](
        y, x, conv_weight, conv_bias, bias, ci, co, ph, pw, *x.stride(), *conv_weight.stride(),
        bias.stride(0), K=K, POOL=POOL, SCALE=SCALE,
        CO_BLOCK=max(16, triton.next_power_of_2(co)), **cfg,
    )  # fmt: skip
    return y
