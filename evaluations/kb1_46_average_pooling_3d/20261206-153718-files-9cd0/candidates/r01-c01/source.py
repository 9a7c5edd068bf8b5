"""AvgPool3d(kernel_size=3, stride=2, padding=1) over x [N, C, D, H, W] (count_include_pad, floor).

y[n, c, od, oh, ow] = (sum over kd, kh, kw < 3 of x[n, c, 2od - 1 + kd, 2oh - 1 + kh,
2ow - 1 + kw], taps in the padding counting as 0) / 27; each output extent is
(in + 2 - 3) // 2 + 1. With ceil_mode off every window lies inside the padded volume, so torch's
divisor is always 27. fp32 sums, one division.

Each program owns one output depth slice od of one (n, c) volume, BLOCK_H output rows and
BLOCK_W outputs along them, held as a [BLOCK_H, BLOCK_W, 4] tile whose element (i, j, kw) is
input column 2 ow_j - 1 + kw (kw = 3 masked): a tile row is a contiguous span of the input row,
so each of the 9 (kd, kh) loads is coalesced. The 9 tiles are added into one fp32 accumulator,
summed across kw once at the end. Windows overlap by one plane, row and column (stride 2 < 3):
the shared columns come from the same load, the shared rows and planes from L1/L2 when the
neighbouring program reads them. Traffic: x read about once (16 x 32 x 128 x 128 x 256 fp32:
8.6 GB at the problem's size) and y written once (1.1 GB): memory-bound at the H200's bandwidth.
The pooling constants are the Model's (constexpr), the strides any (no layout copy); volume bases
are int64 because the problem's own tensor has over 2^31 elements.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

KERNEL_SIZE, STRIDE, PADDING = 3, 2, 1  # the Model's nn.AvgPool3d

TUNE_SPACE = {"BLOCK_H": [1, 2, 4, 8], "BLOCK_W": [32, 64, 128], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK_H": 4, "BLOCK_W": 128, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _avgpool3d_kernel(
    y_ptr,  # *fp32, [N, C, D_out, H_out, W_out], contiguous
    x_ptr,  # *fp32, [N, C, D, H, W], strides (stride_n, stride_c, stride_d, stride_h, stride_w)
    C,  # channels
    D,  # input depth
    H,  # input height
    W,  # input width
    D_out,  # output depth
    H_out,  # output height
    W_out,  # output width
    tiles_h,  # tiles down a slice: cdiv(H_out, BLOCK_H)
    tiles_w,  # tiles across a slice: cdiv(W_out, BLOCK_W)
    stride_n,  # elements between batches of x
    stride_c,  # elements between channels of x
    stride_d,  # elements between depth slices of x
    stride_h,  # elements between rows of x
    stride_w,  # elements between columns of x
    K: tl.constexpr,  # kernel size (cube); K^3 is the divisor
    S: tl.constexpr,  # stride
    P: tl.constexpr,  # padding
    K_POW2: tl.constexpr,  # next power of two >= K: the tile's tap axis
    BLOCK_H: tl.constexpr,  # output rows per program
    BLOCK_W: tl.constexpr,  # output columns per program
):
    pid = tl.program_id(0)
    tw = pid % tiles_w
    rest = pid // tiles_w
    th = rest % tiles_h
    rest = rest // tiles_h
    od = rest % D_out
    vol = rest // D_out
    n = vol // C
    c = vol - n * C
    oh = th * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tw * BLOCK_W + tl.arange(0, BLOCK_W)
    kw = tl.arange(0, K_POW2)
    iw = ow[:, None] * S - P + kw[None, :]  # [BLOCK_W, K_POW2]
    wmask = (ow < W_out)[:, None] & (kw < K)[None, :] & (iw >= 0) & (iw < W)
    omask = (oh < H_out)[:, None, None] & wmask[None, :, :]
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    acc = tl.zeros([BLOCK_H, BLOCK_W, K_POW2], dtype=tl.float32)
    for kd in tl.static_range(K):
        idp = od * S - P + kd
        dok = (idp >= 0) & (idp < D)
        dbase = base + idp.to(tl.int64) * stride_d
        for kh in tl.static_range(K):
            ih = oh * S - P + kh
            m = omask & dok & ((ih >= 0) & (ih < H))[:, None, None]
            offs = ih[:, None, None] * stride_h + (iw * stride_w)[None, :, :]
            acc += tl.load(dbase + offs, mask=m, other=0.0).to(tl.float32)
    y = tl.sum(acc, axis=2) / (K * K * K)
    slice_at = (vol.to(tl.int64) * D_out + od) * H_out * W_out
    out = y_ptr + slice_at + oh[:, None] * W_out + ow[None, :]
    tl.store(out, y.to(y_ptr.dtype.element_ty), mask=(oh < H_out)[:, None] & (ow < W_out)[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def _out(size: int) -> int:
    return (size + 2 * PADDING - KERNEL_SIZE) // STRIDE + 1


def kb1_46_average_pooling_3d(x):
    N, C, D, H, W = x.shape
    D_out, H_out, W_out = _out(D), _out(H), _out(W)
    y = torch.empty((N, C, D_out, H_out, W_out), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(N * C * D_out, H_out, W_out)
    tiles_h = triton.cdiv(H_out, cfg["BLOCK_H"])
    tiles_w = triton.cdiv(W_out, cfg["BLOCK_W"])
    sn, sc, sd, sh, sw = x.stride()
    _avgpool3d_kernel[(N * C * D_out * tiles_h * tiles_w,)](
        y, x, C, D, H, W, D_out, H_out, W_out, tiles_h, tiles_w, sn, sc, sd, sh, sw,
        K=KERNEL_SIZE, S=STRIDE, P=PADDING, K_POW2=triton.next_power_of_2(KERNEL_SIZE), **cfg,
    )  # fmt: skip
    return y
