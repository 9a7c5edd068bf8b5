# kernelgen_ops.hadamard: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/hadamard.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/hadamard/20261202-090420-agent-ef70/candidates/r03-c01/source.py
# record    evaluations/hadamard/20261202-090420-agent-ef70/candidates/r03-c01/record.json
# proposer  agent (model kernelgen-session (written by hand, as an agent), round 3, parent seed)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 1.40x geomean over 3 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           4096x128 bfloat16: 0.85x vs eager
#           65536x128 bfloat16: 0.73x vs torch.compile
#           4096x4096 bfloat16: 4.41x vs eager
# speedups  geomean 1.40x vs eager, 1.44x vs torch.compile, - vs seed
# peers     eager = references/hadamard.py:eager, the op as torch users call it; torch.compile of
#           the same
#           4096x128 bfloat16: 4.2 us, 0.85x eager, 0.85x compile, - seed
#           65536x128 bfloat16: 14.8 us, 0.74x eager, 0.73x compile, - seed
#           4096x4096 bfloat16: 37.5 us, 4.41x eager, 4.87x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           4096x4096; torch's op at 4096x128, 65536x128
# sha256    6f67c2e1dea5b097e9eacb94409d5017d700cfd254e3d60a6b4ec16aeded13a9
# promoted  2026-12-02T09:15:06+00:00
#
# ruff: noqa
# fmt: off
"""Hadamard transform on the tensor cores: H_D = H_D1 (x) H_D2 (Kronecker), so with a row seen as
a D1 x D2 matrix M (entry a * D2 + b at M[a, b]), y = H_D1 M H_D2 * D^-0.5: two small matmuls
per row instead of log2(D) butterfly stages or one D x D product.

Every product with a +-1 sign is exact, so the dots need operands that hold the values exactly:
16-bit x goes in as it is (its own dtype), fp32 x and the fp32 intermediate go in as three bf16
pieces (all 24 bits), each piece's dot accumulated in fp32. Two pieces (16 bits) were not enough
even for fp16 outputs: an output near 0 is judged by its absolute error (1e-5), and 2^-17 of
the intermediate's size (about sqrt(D2) |x|) is more than that. D <= 128 is one dot (D1 = 1).

One program per BLOCK_R rows: the tile [BLOCK_R * D1, D2] is read once (row r's block a at tile
row r * D1 + a, a plain 2D load), multiplied by H_D2, turned to [BLOCK_R * D2, D1] for H_D1, and
turned back to be stored. The sign matrices are built in registers from popcount(i & j).
"""

import torch
import triton
import triton.language as tl

from . import _runtime


@triton.jit
def _signs(N: tl.constexpr, DTYPE: tl.constexpr):
    i = tl.arange(0, N)
    bits = i[:, None] & i[None, :]
    bits = bits ^ (bits >> 8)
    bits = bits ^ (bits >> 4)
    bits = bits ^ (bits >> 2)
    bits = bits ^ (bits >> 1)
    return (1 - 2 * (bits & 1)).to(DTYPE)


@triton.jit
def _times(v, h, PIECES: tl.constexpr):
    """v @ h with h exact in its dtype: v itself (PIECES == 0, a 16-bit v of h's dtype), or v in
    fp32 split into PIECES bf16 pieces, exact products summed in fp32."""
    if PIECES == 0:
        acc = tl.dot(v, h)
    else:
        hi = v.to(tl.bfloat16)
        rest = v - hi.to(tl.float32)
        acc = tl.dot(hi, h)
        mid = rest.to(tl.bfloat16)
        acc = tl.dot(mid, h, acc)
        if PIECES == 3:
            lo = (rest - mid.to(tl.float32)).to(tl.bfloat16)
            acc = tl.dot(lo, h, acc)
    return acc


@triton.jit
def _hadamard_kernel(
    y_ptr,  # *T, [rows, D], contiguous
    x_ptr,  # *T, [rows, D], any strides
    rows,
    scale,  # D^-0.5
    stride_xm,
    stride_xn,
    stride_ym,
    D1: tl.constexpr,  # D = D1 * D2, powers of two; D1 = 1 or D1 >= 16
    D2: tl.constexpr,
    BLOCK_R: tl.constexpr,  # rows per program
    IN_PIECES: tl.constexpr,  # 0: x's own dtype in the first dot; 3: fp32 x in bf16 pieces
    MID_PIECES: tl.constexpr,  # bf16 pieces of the fp32 intermediate in the second dot
):
    t = tl.arange(0, BLOCK_R * D1)
    r = (tl.program_id(0) * BLOCK_R + t // D1).to(tl.int64)
    col = (t % D1)[:, None] * D2 + tl.arange(0, D2)[None, :]
    ok = (r < rows)[:, None]
    x = tl.load(x_ptr + r[:, None] * stride_xm + col * stride_xn, mask=ok, other=0.0)
    if IN_PIECES == 0:
        y = _times(x, _signs(D2, x_ptr.dtype.element_ty), 0)
    else:
        y = _times(x.to(tl.float32), _signs(D2, tl.bfloat16), IN_PIECES)
    if D1 > 1:
        yt = tl.reshape(tl.permute(tl.reshape(y, (BLOCK_R, D1, D2)), (0, 2, 1)), (BLOCK_R * D2, D1))
        z = _times(yt, _signs(D1, tl.bfloat16), MID_PIECES)
        y = tl.reshape(tl.permute(tl.reshape(z, (BLOCK_R, D2, D1)), (0, 2, 1)), (BLOCK_R * D1, D2))
    out = (y * scale).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + r[:, None] * stride_ym + col, out, mask=ok)


def _split(d: int) -> tuple[int, int]:
    """D = D1 * D2 with both >= 16 (tl.dot's least), D1 = 1 where D <= 128."""
    if d <= 128:
        return 1, d
    d1 = 1 << (d.bit_length() - 1) // 2
    return d1, d // d1


def hadamard(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1]
    x2 = x.reshape(-1, d)
    n_rows = x2.shape[0]
    y = torch.empty((n_rows, d), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y.view(x.shape)
    d1, d2 = _split(d)
    block_r = max(1, 64 // d1)
    wide = x.dtype == torch.float32
    _hadamard_kernel[(triton.cdiv(n_rows, block_r),)](
        y, x2, n_rows, d**-0.5, x2.stride(0), x2.stride(1), y.stride(0),
        D1=d1, D2=d2, BLOCK_R=block_r, IN_PIECES=3 if wide else 0,
        MID_PIECES=3, num_warps=4,
    )  # fmt: skip
    return y.view(x.shape)


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
