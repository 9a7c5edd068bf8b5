"""MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=3) over x [N, C, D, H, W].

y[n, c, od, oh, ow] = max over kd, kh, kw < 3 of x[n, c, 2od - 1 + 3kd, 2oh - 1 + 3kh,
2ow - 1 + 3kw], taps outside the volume skipped (implicit -inf padding); each output extent is
(in + 2 - 3*2 - 1) // 2 + 1 (floor: the Model leaves ceil_mode off). NaN wins, as in torch's
kernels (`v > m or v is NaN`); max is exact, so the result is bit-equal to torch's.

Each program owns one output depth slice od of one (n, c) volume and a [BLOCK_H, BLOCK_W] tile
of it; the 27 taps are 27 shifted loads (rows along W, at stride 2), and the taps of a tile and
of its neighbours cover the same input rows, so the input comes from DRAM about once and from
L1/L2 the other times. Traffic: x read once (16 x 32 x 128^3 fp32: 4.3 GB) and y written once
(0.5 GB): memory-bound at the H200's bandwidth. The pooling constants are the Model's (constexpr:
the 27 taps unroll), the strides any (no layout copy); volume bases are int64 because the
problem's own tensor has over 2^31 elements.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

KERNEL_SIZE, STRIDE, PADDING, DILATION = 3, 2, 1, 3  # the Model's nn.MaxPool3d

TUNE_SPACE = {"BLOCK_H": [4, 8, 16, 32], "BLOCK_W": [32, 64, 128], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK_H": 8, "BLOCK_W": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _maxpool3d_kernel(
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
    K: tl.constexpr,  # kernel size (cube)
    S: tl.constexpr,  # stride
    P: tl.constexpr,  # padding
    DIL: tl.constexpr,  # dilation
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
    omask = (oh < H_out)[:, None] & (ow < W_out)[None, :]
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    acc = tl.full([BLOCK_H, BLOCK_W], float("-inf"), dtype=tl.float32)
    for kd in tl.static_range(K):
        idp = od * S - P + kd * DIL
        dok = (idp >= 0) & (idp < D)
        dbase = base + idp.to(tl.int64) * stride_d
        for kh in tl.static_range(K):
            ih = oh * S - P + kh * DIL
            hmask = omask & dok & ((ih >= 0) & (ih < H))[:, None]
            for kw in tl.static_range(K):
                iw = ow * S - P + kw * DIL
                m = hmask & ((iw >= 0) & (iw < W))[None, :]
                ptrs = dbase + ih[:, None] * stride_h + iw[None, :] * stride_w
                v = tl.load(ptrs, mask=m, other=float("-inf")).to(tl.float32)
                acc = tl.where((v > acc) | (v != v), v, acc)
    slice_at = (vol.to(tl.int64) * D_out + od) * H_out * W_out
    out = y_ptr + slice_at + oh[:, None] * W_out + ow[None, :]
    tl.store(out, acc.to(y_ptr.dtype.element_ty), mask=omask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def _out(size: int) -> int:
    return (size + 2 * PADDING - DILATION * (KERNEL_SIZE - 1) - 1) // STRIDE + 1


def kb1_43_max_pooling_3d(x):
    N, C, D, H, W = x.shape
    D_out, H_out, W_out = _out(D), _out(H), _out(W)
    y = torch.empty((N, C, D_out, H_out, W_out), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(N * C * D_out, H_out, W_out)
    tiles_h = triton.cdiv(H_out, cfg["BLOCK_H"])
    tiles_w = triton.cdiv(W_out, cfg["BLOCK_W"])
    sn, sc, sd, sh, sw = x.stride()
    _maxpool3d_kernel[(N * C * D_out * tiles_h * tiles_w,)](
        y, x, C, D, H, W, D_out, H_out, W_out, tiles_h, tiles_w, sn, sc, sd, sh, sw,
        K=KERNEL_SIZE, S=STRIDE, P=PADDING, DIL=DILATION, **cfg,
    )  # fmt: skip
    return y
