"""Depthwise-separable convolution, fused, in wider steps than a_pieces.py.

a_pieces.py ran at 0.89x torch eager on the H100 (4.08 ms against 3.64) at its default tiling:
64 pixels a program and 16 input channels a step, so each program chains 4 x 6 small bf16 dots
(m128 n64 k16), each waiting on the last, and splits its [128, 16] pointwise-weight tile into
pieces anew at every step. Not profiled; by that count it is bound by the dots' latency, far
from the 1.1 ms its 3.2 GB of traffic needs at the memory's rate. This file takes all of
in_channels (up to 64) in one step and 128 pixels a program over 8 warps: 6 dots of k64 a
program, the weight split once per program, half the programs. The tuner's range moves with it
(BLOCK_C 32-64). Otherwise the kernel is a_pieces.py's, with the same answers at every tiling.

Depthwise-separable convolution, fused: the depthwise 3x3 (pad 1) outputs are made in registers,
channel block by channel block, and fed straight into the 1x1 pointwise GEMM; the intermediate
never goes to memory.

Math: d[n, c, p] = sum over (kh, kw) of wd[c, 0, kh, kw] * x[n, c, oh - 1 + kh, ow - 1 + kw] (zero
outside the plane), then y[n, o, p] = sum over c of wp[o, c, 0, 0] * d[n, c, p], as the Model's
two nn.Conv2d (stride 1, padding 1, dilation 1, no bias). d is rounded to fp32 before the GEMM, as
torch's intermediate tensor is.

The GEMM on the bf16 tensor cores: each fp32 operand tile is split into three bf16 pieces (a =
a1 + a2 + a3 holds all 24 significant bits; each difference is exact in fp32), and the six
products that matter, a1b1, a1b2, a2b1, a1b3, a2b2, a3b1, are chained into one fresh accumulator
per channel block, which is then added into the fp32 total on the CUDA cores (one tensor-core
accumulator carried through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM on the
H200). A non-finite value is carried whole by its first piece, and only the a1*b1 product sees
it: its residuals are zero (inf - inf would be NaN) and the cross products take the first piece
with it zeroed (a zero residual times inf would be NaN), so inf and NaN come out where torch's
do. Triton's interpreter runs bf16 otherwise than the GPU: the CPU check shows that the variant
runs and places inf and NaN right; its precision is for the H200 to judge.

Traffic at the problem's own size (x 16x64x512x512 fp32, y 16x128x512x512): x read once (1.07 GB)
and y written once (2.15 GB), against torch's two kernels, which also write and read back the
1.07 GB intermediate; 68.7 GFLOP in the pointwise GEMM (K = in_channels = 64) and 2.4 GFLOP in the
depthwise part. One program owns BLOCK_P pixels (flattened over n, oh, ow) by BLOCK_O output
channels; BLOCK_O covers all of out_channels up to 128, so each depthwise output is made once. Its
9 shifted loads overlap and hit L1 after the first, so x comes from DRAM about once. Stores run
along the pixels, contiguous in y. Pixel bases are int64; every stride of x and of both weights
is honoured, so no layout copy is made.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The Model's own depthwise geometry, fixed by the problem (the domain draws only the sizes).
STRIDE, PAD, DIL = 1, 1, 1

# BLOCK_O is not tuned: it is out_channels' power of two (16..128), so the depthwise part is done
# once per pixel where out_channels <= 128.
# num_stages 1: the software pipeliner would stage the nine shifted x loads of a step in shared
# memory, 9 x [BLOCK_C, BLOCK_P] fp32 a stage (602 KB at 64 x 128 and three stages, past sm_90's
# 227 KB); unstaged they go to registers, and shared memory holds the dots' pieces alone.
TUNE_SPACE = {"BLOCK_P": [64, 128], "BLOCK_C": [32, 64], "num_warps": [4, 8], "num_stages": [1]}
DEFAULT_CONFIG = {"BLOCK_P": 128, "BLOCK_C": 64, "num_warps": 8, "num_stages": 1}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _pieces(v):
    """v (fp32) as three bf16 pieces, leading bits first, and the first piece again with its
    non-finite entries zeroed: a non-finite v rides on the first piece alone."""
    p1 = v.to(tl.bfloat16)
    f1 = p1.to(tl.float32)
    finite = (f1 - f1) == 0.0  # f1 - f1 is NaN exactly where f1 is inf or NaN
    r = tl.where(finite, v - f1, 0.0)  # not inf - inf = NaN
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    p1_finite = tl.where(finite, f1, 0.0).to(tl.bfloat16)
    return p1, p1_finite, p2, p3


@triton.jit
def _sep_conv_kernel(
    y_ptr,  # *fp32, [N, CO, OH, OW], contiguous
    x_ptr,  # *fp32, [N, C, H, W], strides (sxn, sxc, sxh, sxw)
    wd_ptr,  # *fp32, [C, 1, KH, KW] depthwise weight, strides (sdc, _, sdh, sdw)
    wp_ptr,  # *fp32, [CO, C, 1, 1] pointwise weight, strides (spo, spc, _, _)
    n_pix,  # N * OH * OW
    C,  # in_channels
    CO,  # out_channels
    H,  # input height
    W,  # input width
    OH,  # output height
    OW,  # output width
    sxn, sxc, sxh, sxw,  # strides of x
    sdc, sdh, sdw,  # strides of the depthwise weight
    spo, spc,  # strides of the pointwise weight
    KH: tl.constexpr,  # depthwise kernel height
    KW: tl.constexpr,  # depthwise kernel width
    S: tl.constexpr, P: tl.constexpr, D: tl.constexpr,  # stride, padding, dilation
    BLOCK_P: tl.constexpr,  # pixels per program
    BLOCK_O: tl.constexpr,  # output channels per program
    BLOCK_C: tl.constexpr,  # input channels per GEMM step (tl.dot's K, at least 16)
):  # fmt: skip
    q = tl.program_id(0).to(tl.int64) * BLOCK_P + tl.arange(0, BLOCK_P)  # flat pixel
    o = tl.program_id(1) * BLOCK_O + tl.arange(0, BLOCK_O)
    q_ok = q < n_pix
    o_ok = o < CO
    ohw = OH * OW
    n = q // ohw
    rem = q - n * ohw  # oh * OW + ow
    oh = rem // OW
    ow = rem - oh * OW
    x_pix = x_ptr + n * sxn  # [BLOCK_P] image bases (int64)
    cc = tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_O, BLOCK_P), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cc
        c_ok = c < C
        x_ch = x_pix[None, :] + c.to(tl.int64)[:, None] * sxc  # [BLOCK_C, BLOCK_P]
        # The depthwise outputs of this channel block, in fp32, zero past C.
        d = tl.zeros((BLOCK_C, BLOCK_P), dtype=tl.float32)
        for kh in tl.static_range(KH):
            ih = oh * S - P + kh * D
            h_ok = q_ok & (ih >= 0) & (ih < H)
            for kw in tl.static_range(KW):
                iw = ow * S - P + kw * D
                ok = h_ok & (iw >= 0) & (iw < W)
                wv = tl.load(wd_ptr + c * sdc + kh * sdh + kw * sdw, mask=c_ok, other=0.0)
                xv = tl.load(
                    x_ch + (ih * sxh + iw * sxw)[None, :],
                    mask=c_ok[:, None] & ok[None, :],
                    other=0.0,
                )
                d += xv.to(tl.float32) * wv.to(tl.float32)[:, None]
        wp = tl.load(
            wp_ptr + o[:, None] * spo + c[None, :] * spc,
            mask=o_ok[:, None] & c_ok[None, :],
            other=0.0,
        ).to(tl.float32)  # [BLOCK_O, BLOCK_C]
        a1, a1f, a2, a3 = _pieces(wp)
        b1, b1f, b2, b3 = _pieces(d)
        # An inf or NaN enters through a1 * b1 only: a zero residual times inf would be NaN.
        part = tl.dot(a1, b1)  # this channel block's sum, on the tensor cores
        part = tl.dot(a1f, b2, part)
        part = tl.dot(a2, b1f, part)
        part = tl.dot(a1f, b3, part)
        part = tl.dot(a2, b2, part)
        part = tl.dot(a3, b1f, part)
        acc += part  # the running total, rounded as an fp32 sum
    y = y_ptr + (n * CO * ohw + rem)[None, :] + o.to(tl.int64)[:, None] * ohw
    tl.store(y, acc, mask=o_ok[:, None] & q_ok[None, :])


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_86_conv_depthwise_separable_2d(x, depthwise_weight, pointwise_weight):
    N, C, H, W = x.shape
    CO = pointwise_weight.shape[0]
    KH, KW = depthwise_weight.shape[2], depthwise_weight.shape[3]
    OH = (H + 2 * PAD - DIL * (KH - 1) - 1) // STRIDE + 1
    OW = (W + 2 * PAD - DIL * (KW - 1) - 1) // STRIDE + 1
    y = torch.empty((N, CO, OH, OW), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    n_pix = N * OH * OW
    cfg = _config(n_pix, C, CO)
    block_o = max(16, min(128, triton.next_power_of_2(CO)))
    grid = (triton.cdiv(n_pix, cfg["BLOCK_P"]), triton.cdiv(CO, block_o))
    sd, sp = depthwise_weight.stride(), pointwise_weight.stride()
    _sep_conv_kernel[grid](
        y, x, depthwise_weight, pointwise_weight, n_pix, C, CO, H, W, OH, OW, *x.stride(),
        sd[0], sd[2], sd[3], sp[0], sp[1], KH=KH, KW=KW, S=STRIDE, P=PAD, D=DIL,
        BLOCK_O=block_o, **cfg,
    )  # fmt: skip
    return y
