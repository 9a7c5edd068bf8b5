"""AvgPool1d(kernel_size=8, stride=1, padding=4) over x [N, C, L] (count_include_pad, floor mode).

y[n, c, o] = (sum over k < 8 of x[n, c, o - 4 + k], taps outside [0, L) counting as 0) / 8,
L_out = (L + 2*4 - 8) // 1 + 1. With ceil_mode off every window lies inside the padded input,
so torch's divisor is always the full 8. The taps are summed in order in fp32 and divided once,
as torch's avg_pool kernels do.

Each program owns one (n, c) row and BLOCK adjacent outputs: the 8 taps are 8 shifted, coalesced
loads of the same input span, so each input element comes from DRAM once and from L1 the other
times. Traffic: x read once and y written once (64 x 128 x 65536 fp32: 2.1 GB each way), so the
op is memory-bound at the H200's bandwidth. The pooling constants are the Model's (constexpr:
the tap loop unrolls), the strides any (no layout copy); row bases are int64 because the problem's
own tensor has over 2^31 elements.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

KERNEL_SIZE, STRIDE, PADDING = 8, 1, 4  # the Model's nn.AvgPool1d

TUNE_SPACE = {"BLOCK": [512, 1024, 2048, 4096], "num_warps": [4, 8]}
DEFAULT_CONFIG = {"BLOCK": 2048, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}


@triton.jit
def _avgpool1d_kernel(
    y_ptr,  # *fp32, [N, C, L_out], contiguous
    x_ptr,  # *fp32, [N, C, L], strides (stride_n, stride_c, stride_l)
    C,  # channels
    L,  # input length
    L_out,  # output length
    n_tiles,  # output tiles per row: cdiv(L_out, BLOCK)
    stride_n,  # elements between batches of x
    stride_c,  # elements between channels of x
    stride_l,  # elements between positions of x
    K: tl.constexpr,  # kernel size, also the divisor
    S: tl.constexpr,  # stride
    P: tl.constexpr,  # padding
    BLOCK: tl.constexpr,  # outputs per program
):
    pid = tl.program_id(0)
    row = pid // n_tiles
    tile = pid - row * n_tiles
    n = row // C
    c = row - n * C
    o = tile * BLOCK + tl.arange(0, BLOCK)
    omask = o < L_out
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(K):
        i = o * S - P + k
        m = omask & (i >= 0) & (i < L)
        acc += tl.load(base + i * stride_l, mask=m, other=0.0).to(tl.float32)
    y = acc / K
    tl.store(y_ptr + row.to(tl.int64) * L_out + o, y.to(y_ptr.dtype.element_ty), mask=omask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_44_average_pooling_1d(x):
    N, C, L = x.shape
    L_out = (L + 2 * PADDING - KERNEL_SIZE) // STRIDE + 1
    y = torch.empty((N, C, L_out), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = _config(N * C, L_out)
    n_tiles = triton.cdiv(L_out, cfg["BLOCK"])
    sn, sc, sl = x.stride()
    _avgpool1d_kernel[(N * C * n_tiles,)](
        y, x, C, L, L_out, n_tiles, sn, sc, sl, K=KERNEL_SIZE, S=STRIDE, P=PADDING, **cfg
    )
    return y
