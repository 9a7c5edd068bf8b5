"""MaxPool2d(kernel_size=4, stride=1, padding=1, dilation=1) over x [N, C, H, W].

y[n, c, oh, ow] = max over kh, kw < 4 of x[n, c, oh - 1 + kh, ow - 1 + kw], taps outside the
image skipped (implicit -inf padding); H_out = H + 2 - 3 - 1 + 1 = H - 1 (floor: ceil_mode is
off), the same for W. NaN wins, as in torch's kernels (`v > m or v is NaN`); max is exact, so the
result is bit-equal to torch's.

Each program owns a [BLOCK_H, BLOCK_W] tile of one (n, c) plane; the 16 taps are 16 shifted
loads of the same input window, each row of them coalesced along W, so the input comes from DRAM
about once and from L1 the other times. Traffic: x read once and y written once (32 x 64 x 512 x
512 fp32: 2.1 GB each way), so the op is memory-bound at the H200's bandwidth. The pooling
constants are the Model's (constexpr: the 16 taps unroll), the strides any (no layout copy);
plane bases are int64 because the problem's own tensor has over 2^31 elements.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

KERNEL_SIZE, STRIDE, PADDING, DILATION = 4, 1, 1, 1  # the Model's nn.MaxPool2d

TUNE_SPACE = {"BLOCK_H": [4, 8, 16, 32], "BLOCK_W": [64, 128, 256], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK_H": 16, "BLOCK_W": 128, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _maxpool2d_kernel(
    y_ptr,  # *fp32, [N, C, H_out, W_out], contiguous
    x_ptr,  # *fp32, [N, C, H, W], strides (stride_n, stride_c, stride_h, stride_w)
    C,  # channels
    H,  # input height
    W,  # input width
    H_out,  # output height
    W_out,  # output width
    tiles_h,  # tiles down a plane: cdiv(H_out, BLOCK_H)
    tiles_w,  # tiles across a plane: cdiv(W_out, BLOCK_W)
    stride_n,  # elements between batches of x
    stride_c,  # elements between channels of x
    stride_h,  # elements between rows of x
    stride_w,  # elements between columns of x
    K: tl.constexpr,  # kernel size (square)
    S: tl.constexpr,  # stride
    P: tl.constexpr,  # padding
    D: tl.constexpr,  # dilation
    BLOCK_H: tl.constexpr,  # output rows per program
    BLOCK_W: tl.constexpr,  # output columns per program
):
    pid = tl.program_id(0)
    tw = pid % tiles_w
    rest = pid // tiles_w
    th = rest % tiles_h
    plane = rest // tiles_h
    n = plane // C
    c = plane - n * C
    oh = th * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tw * BLOCK_W + tl.arange(0, BLOCK_W)
    omask = (oh < H_out)[:, None] & (ow < W_out)[None, :]
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    acc = tl.full([BLOCK_H, BLOCK_W], float("-inf"), dtype=tl.float32)
    for kh in tl.static_range(K):
        ih = oh * S - P + kh * D
        hmask = (ih >= 0) & (ih < H)
        for kw in tl.static_range(K):
            iw = ow * S - P + kw * D
            m = omask & hmask[:, None] & ((iw >= 0) & (iw < W))[None, :]
            ptrs = base + ih[:, None] * stride_h + iw[None, :] * stride_w
            v = tl.load(ptrs, mask=m, other=float("-inf")).to(tl.float32)
            acc = tl.where((v > acc) | (v != v), v, acc)
    out = y_ptr + plane.to(tl.int64) * H_out * W_out + oh[:, None] * W_out + ow[None, :]
    tl.store(out, acc.to(y_ptr.dtype.element_ty), mask=omask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_42_max_pooling_2d(x):
    N, C, H, W = x.shape
    span = DILATION * (KERNEL_SIZE - 1) + 1
    H_out = (H + 2 * PADDING - span) // STRIDE + 1
    W_out = (W + 2 * PADDING - span) // STRIDE + 1
    y = torch.empty((N, C, H_out, W_out), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(N * C, H_out, W_out)
    tiles_h = triton.cdiv(H_out, cfg["BLOCK_H"])
    tiles_w = triton.cdiv(W_out, cfg["BLOCK_W"])
    sn, sc, sh, sw = x.stride()
    _maxpool2d_kernel[(N * C * tiles_h * tiles_w,)](
        y, x, C, H, W, H_out, W_out, tiles_h, tiles_w, sn, sc, sh, sw,
        K=KERNEL_SIZE, S=STRIDE, P=PADDING, D=DILATION, **cfg,
    )  # fmt: skip
    return y
