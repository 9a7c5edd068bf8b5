"""AvgPool2d(kernel_size=11) over x [N, C, H, W]: stride 11 (the kernel size), no padding.

y[n, c, oh, ow] = (sum over kh, kw < 11 of x[n, c, 11oh + kh, 11ow + kw]) / 121, with
H_out = (H - 11) // 11 + 1 (floor mode), the same for W. With ceil_mode off and no padding every
window lies inside the image, so torch's divisor is always 121. fp32 sums, one division.

The windows tile the image without overlap, so the op is a pure stream: x read once (16 x 64 x
2048 x 2048 fp32 = 17.2 GB at the problem's size) and y written once (0.14 GB), memory-bound at
the H200's bandwidth. Each program owns one output row of one (n, c) plane and BLOCK_W outputs
along it. For each of the 11 input rows it loads a [BLOCK_W, 16] tile, element (j, kw) at column
11 * ow_j + kw with kw >= 11 masked: a row of the tile is one window's 11 contiguous floats and
the tile is one contiguous span of the input row, so the loads are coalesced. The tile is added
into a [BLOCK_W, 16] fp32 accumulator over the 11 rows and summed across kw once at the end.
The pooling constants are the Model's (constexpr), the strides any (no layout copy); plane bases
are int64 because the problem's own tensor has over 2^31 elements.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

KERNEL_SIZE, STRIDE, PADDING = 11, 11, 0  # the Model's nn.AvgPool2d (stride defaults to kernel)

TUNE_SPACE = {"BLOCK_W": [16, 32, 64, 128], "num_warps": [2, 4, 8]}
DEFAULT_CONFIG = {"BLOCK_W": 64, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _avgpool2d_kernel(
    y_ptr,  # *fp32, [N, C, H_out, W_out], contiguous
    x_ptr,  # *fp32, [N, C, H, W], strides (stride_n, stride_c, stride_h, stride_w)
    C,  # channels
    H,  # input height
    W,  # input width
    H_out,  # output height
    W_out,  # output width
    tiles_w,  # tiles along an output row: cdiv(W_out, BLOCK_W)
    stride_n,  # elements between batches of x
    stride_c,  # elements between channels of x
    stride_h,  # elements between rows of x
    stride_w,  # elements between columns of x
    K: tl.constexpr,  # kernel size (square); K * K is the divisor
    S: tl.constexpr,  # stride
    P: tl.constexpr,  # padding
    K_POW2: tl.constexpr,  # next power of two >= K: the tile's tap axis
    BLOCK_W: tl.constexpr,  # outputs per program
):
    pid = tl.program_id(0)
    tw = pid % tiles_w
    rest = pid // tiles_w
    oh = rest % H_out
    plane = rest // H_out
    n = plane // C
    c = plane - n * C
    ow = tw * BLOCK_W + tl.arange(0, BLOCK_W)
    kw = tl.arange(0, K_POW2)
    iw = ow[:, None] * S - P + kw[None, :]
    wmask = (ow < W_out)[:, None] & (kw < K)[None, :] & (iw >= 0) & (iw < W)
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    ptrs = base + iw * stride_w
    acc = tl.zeros([BLOCK_W, K_POW2], dtype=tl.float32)
    for kh in tl.static_range(K):
        ih = oh * S - P + kh
        m = wmask & (ih >= 0) & (ih < H)
        acc += tl.load(ptrs + ih.to(tl.int64) * stride_h, mask=m, other=0.0).to(tl.float32)
    y = tl.sum(acc, axis=1) / (K * K)
    out = y_ptr + (plane.to(tl.int64) * H_out + oh) * W_out + ow
    tl.store(out, y.to(y_ptr.dtype.element_ty), mask=ow < W_out)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_45_average_pooling_2d(x):
    N, C, H, W = x.shape
    H_out = (H + 2 * PADDING - KERNEL_SIZE) // STRIDE + 1
    W_out = (W + 2 * PADDING - KERNEL_SIZE) // STRIDE + 1
    y = torch.empty((N, C, H_out, W_out), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(N * C, H_out, W_out)
    tiles_w = triton.cdiv(W_out, cfg["BLOCK_W"])
    sn, sc, sh, sw = x.stride()
    _avgpool2d_kernel[(N * C * H_out * tiles_w,)](
        y, x, C, H, W, H_out, W_out, tiles_w, sn, sc, sh, sw,
        K=KERNEL_SIZE, S=STRIDE, P=PADDING, K_POW2=triton.next_power_of_2(KERNEL_SIZE), **cfg,
    )  # fmt: skip
    return y
