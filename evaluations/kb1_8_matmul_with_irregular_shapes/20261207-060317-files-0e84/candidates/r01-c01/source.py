"""kb1_8_matmul_with_irregular_shapes: C = A @ B, A [M, K], B [K, N] of odd sizes.

At the problem's size (M=8205, K=2949, N=5921): 287 GFLOP against 388 MB, compute-bound. The
accepted c_levels.py runs exact fp32 FMAs at 0.62x torch eager (H100). This one runs the GEMM
on the bf16 tensor cores in pieces, as the other level-1 GEMMs do at 1.3-1.8x eager, with the
fault that had it rejected here mended.

The fault: the tensor cores give 0 for products in fp32's subnormal range. At the `denormal`
case M=8205, K=1, N=1 every output is such a product (B's one entry subnormal), and the pieces
returned 0 where torch's fp32 GEMM keeps them (relative error 1, H100). So each row of A and
each column of B is scaled by a power of two that brings its largest finite magnitude into
[1, 2) before the split, and each output is scaled back once, at the end:
    C[m, n] = ldexp((2^ea[m] A[m, :]) @ (2^eb[n] B[:, n]), -(ea[m] + eb[n])).
Scaling by a power of two is exact wherever the scaled value is normal; the products of scaled
values are normal whenever their rows' and columns' largest values are what the output is made
of, and `ldexp` rounds the result once into fp32, subnormals included (libdevice's, not a
multiply that could round twice). A value that stays subnormal after its row's scaling is below
2^-126 of the row's largest: what it would have added is below the rounding of the others. The
exponents come from one pass over A and one over B (about 0.4 GB read at the problem's size,
next to 287 GFLOP), float64 log2 so subnormal maxima are seen as they are (fp32's lg2.approx
flushes them). log2's rounding can leave a scaled maximum in [0.5, 4): harmless, only overflow
would matter, and scaled values stay far below it.

The GEMM: each fp32 tile of a and of b (scaled in registers by two power-of-two multiplies,
each factor a normal fp32 made from its exponent bits) is split into three bf16 pieces
(v = v1 + v2 + v3, every split exact in fp32), and the six products whose bits reach fp32's
precision (a3b1, a2b2, a1b3, a2b1, a1b2, a1b1, smallest first) are chained into one fresh
accumulator per K block, which is added into the fp32 running total on the CUDA cores: the
tensor cores never carry a sum through all of K. Specials: an inf or NaN is carried by its
leading piece alone (its residual pieces are 0), and the products of a residual piece take the
other side's leading piece with its specials zeroed, so inf * (a residual piece that is exactly
0) never makes a NaN that torch's inf * b has not; a row's exponent is taken over its finite
values, and inf scaled is inf.

No split-K: the problem's domain has K at most 2949, and the tiles at its own size (65 x 47)
fill the GPU many times over.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

# The GEMM's tiling; every point gives the same answers (each output is one tile's K loop).
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128, 256],
    "BLOCK_K": [32, 64],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}

_SCALE_ROWS = 32  # lines whose exponent one program finds
_SCALE_COLS = 128  # elements of each line read per step


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _exponents_kernel(
    e_ptr,  # *i32, [R]: the exponent of each line
    x_ptr,  # *f32: line r's element c at r * stride_r + c * stride_c
    R, C,
    stride_r, stride_c,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):  # fmt: skip
    """e[r] = -floor(log2(max |x[r, :]|)) over the line's finite values, 0 for a line with none
    nonzero: 2^e[r] brings its largest into [1, 2), up to log2's rounding."""
    rr = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    r_in = rr < R
    rc = tl.arange(0, BLOCK_C)
    rows = x_ptr + rr.to(tl.int64)[:, None] * stride_r
    top = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        cc = c0 + rc
        inside = r_in[:, None] & (cc < C)[None, :]
        x = tl.load(rows + cc.to(tl.int64)[None, :] * stride_c, mask=inside, other=0.0)
        mag = tl.abs(x)
        mag = tl.where(mag < float("inf"), mag, 0.0)  # inf and NaN (NaN < inf is false) left out
        top = tl.maximum(top, tl.max(mag, axis=1))
    lg = tl.floor(tl.log2(tl.where(top > 0.0, top, 1.0).to(tl.float64)))
    tl.store(e_ptr + rr, (-lg).to(tl.int32), mask=r_in)


@triton.jit
def _pieces(v):
    """fp32 v as bf16 pieces, leading bits first: (v1, v1 with inf/NaN zeroed, v2, v3). A
    special stays whole in v1; its residuals are 0 (inf - inf is NaN, so it is replaced)."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    r = tl.where(r == r, r, 0.0)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    p1f = tl.where(tl.abs(v) < float("inf"), p1.to(tl.float32), 0.0).to(tl.bfloat16)
    return p1, p1f, p2, p3


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block: six bf16 products in a fresh accumulator, smallest first;
    only a1 b1 sees the specials, so inf times a zero residual never turns into NaN."""
    a1, a1f, a2, a3 = _pieces(a)
    b1, b1f, b2, b3 = _pieces(b)
    part = tl.dot(a3, b1f)
    part = tl.dot(a2, b2, part)
    part = tl.dot(a1f, b3, part)
    part = tl.dot(a2, b1f, part)
    part = tl.dot(a1f, b2, part)
    part = tl.dot(a1, b1, part)
    return acc + part  # the running total, an ordinary fp32 add


@triton.jit
def _power(e):
    """2^e for integer e in [-126, 127], exactly: its exponent field written (exp2 is approx.)."""
    return ((e + 127) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _factors(e):
    """2^e as two normal fp32 factors (e from -127 to 149: 2^e alone may not be an fp32)."""
    half = e // 2
    return _power(half), _power(e - half)


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program: GROUP_M row tiles walk the column tiles together, so the
    b tiles they share are read from L2 rather than HBM."""
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    size_m = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % size_m
    pid_n = (pid % per_group) // size_m
    return pid_m, pid_n


@triton.jit
def _gemm_kernel(
    c_ptr,  # *f32, [M, N] contiguous
    a_ptr,  # *f32: a(m, k) at m * stride_am + k * stride_ak
    b_ptr,  # *f32: b(k, n) at k * stride_bk + n * stride_bn
    ea_ptr,  # *i32, [M]: row m of a is scaled by 2^ea[m]
    eb_ptr,  # *i32, [N]: column n of b by 2^eb[n]
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rm64 = rm.to(tl.int64)
    rn64 = rn.to(tl.int64)
    m_in = rm < M
    n_in = rn < N
    ea = tl.load(ea_ptr + rm, mask=m_in, other=0)
    eb = tl.load(eb_ptr + rn, mask=n_in, other=0)
    fa1, fa2 = _factors(ea)
    fb1, fb2 = _factors(eb)
    a_ptrs = a_ptr + rm64[:, None] * stride_am + rk[None, :].to(tl.int64) * stride_ak
    b_ptrs = b_ptr + rk[:, None].to(tl.int64) * stride_bk + rn64[None, :] * stride_bn
    a_step = tl.full((), BLOCK_K, tl.int64) * stride_ak
    b_step = tl.full((), BLOCK_K, tl.int64) * stride_bk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_in = rk < K - k0
        a = tl.load(a_ptrs, mask=m_in[:, None] & k_in[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_in[:, None] & n_in[None, :], other=0.0)
        a = a * fa1[:, None] * fa2[:, None]
        b = b * fb1[None, :] * fb2[None, :]
        acc = _block_dot(a, b, acc)
        a_ptrs += a_step
        b_ptrs += b_step
    c = libdevice.ldexp(acc, -(ea[:, None] + eb[None, :]))
    tl.store(c_ptr + rm64[:, None] * N + rn64[None, :], c, mask=m_in[:, None] & n_in[None, :])


def _exponents(x, lines, length, stride_line, stride_el):
    e = torch.empty((lines,), dtype=torch.int32, device=x.device)
    grid = (triton.cdiv(lines, _SCALE_ROWS),)
    _exponents_kernel[grid](
        e, x, lines, length, stride_line, stride_el,
        BLOCK_R=_SCALE_ROWS, BLOCK_C=_SCALE_COLS, num_warps=4,
    )  # fmt: skip
    return e


def kb1_8_matmul_with_irregular_shapes(A, B):
    m, k = A.shape
    n = B.shape[1]
    c = torch.empty((m, n), dtype=torch.float32, device=A.device)
    if m == 0 or n == 0:
        return c
    ea = _exponents(A, m, k, A.stride(0), A.stride(1))  # A's rows
    eb = _exponents(B, n, k, B.stride(1), B.stride(0))  # B's columns
    cfg = _config(m, n, k)
    grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
    _gemm_kernel[grid](
        c, A, B, ea, eb, m, n, k,
        A.stride(0), A.stride(1), B.stride(0), B.stride(1),
        **cfg,
    )  # fmt: skip
    return c
