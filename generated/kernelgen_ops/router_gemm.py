# kernelgen_ops.router_gemm: written by `kernelgen promote`; do not edit, promote again.
# The source below is the candidate as judged, except for this header, the two config
# loads (TUNED, DEFAULT_CONFIG come from configs/router_gemm.json) and the last line (lean
# launches, see _launch.py); ruff leaves it as it is.
#
# source    evaluations/router_gemm/20261202-025138-agent-92d4/candidates/r02-c01/source.py
# record    evaluations/router_gemm/20261202-025138-agent-92d4/candidates/r02-c01/record.json
# proposer  agent (model kernelgen-session (written by hand, as an agent), round 2, parent r01-c01)
# device    NVIDIA H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130, Triton 3.6.0)
# best peer 2.63x geomean over 12 shapes, each against the fastest peer measured there: eager or
#           torch.compile in the run's record
#           1x192x4096 bfloat16: 1.28x vs torch.compile
#           16x192x4096 bfloat16: 2.58x vs torch.compile
#           48x192x4096 bfloat16: 2.34x vs torch.compile
#           96x192x4096 bfloat16: 3.28x vs torch.compile
#           208x192x4096 bfloat16: 2.89x vs torch.compile
#           512x192x4096 bfloat16: 3.02x vs torch.compile
#           1024x192x4096 bfloat16: 3.71x vs torch.compile
#           2048x192x4096 bfloat16: 2.99x vs torch.compile
#           4096x192x4096 bfloat16: 3.11x vs torch.compile
#           1x256x7168 bfloat16: 1.41x vs torch.compile
#           128x256x7168 bfloat16: 2.74x vs torch.compile
#           4096x256x7168 bfloat16: 3.71x vs torch.compile
# speedups  geomean 3.01x vs eager, 2.63x vs torch.compile, - vs seed
# peers     eager = references/router_gemm.py:eager, the op as torch users call it; torch.compile of
#           the same
#           1x192x4096 bfloat16: 4.9 us, 1.69x eager, 1.28x compile, - seed
#           16x192x4096 bfloat16: 5.0 us, 3.05x eager, 2.58x compile, - seed
#           48x192x4096 bfloat16: 6.0 us, 2.72x eager, 2.34x compile, - seed
#           96x192x4096 bfloat16: 7.3 us, 3.61x eager, 3.28x compile, - seed
#           208x192x4096 bfloat16: 9.2 us, 3.09x eager, 2.89x compile, - seed
#           512x192x4096 bfloat16: 11.3 us, 3.33x eager, 3.02x compile, - seed
#           1024x192x4096 bfloat16: 15.1 us, 4.09x eager, 3.71x compile, - seed
#           2048x192x4096 bfloat16: 29.9 us, 3.42x eager, 2.99x compile, - seed
#           4096x192x4096 bfloat16: 57.8 us, 3.54x eager, 3.11x compile, - seed
#           1x256x7168 bfloat16: 6.2 us, 1.74x eager, 1.41x compile, - seed
#           128x256x7168 bfloat16: 10.2 us, 2.93x eager, 2.74x compile, - seed
#           4096x256x7168 bfloat16: 94.3 us, 4.16x eager, 3.71x compile, - seed
# dispatch  per call (host time counted at launch-bound shapes), against eager: the kernel at
#           512x192x4096, 1024x192x4096, 2048x192x4096, 4096x192x4096, 4096x256x7168; torch's op at
#           1x192x4096, 16x192x4096, 48x192x4096, 96x192x4096, 208x192x4096, 1x256x7168,
#           128x256x7168
# sha256    0d3b0e6f6954db48243715d4645e3ce9ef7b27e5f0f67b73237998503e6c5b93
# promoted  2026-12-02T02:54:00+00:00
#
# ruff: noqa
# fmt: off
"""router_gemm on 16-bit tensor cores, HPC-Ops' way: w as a bf16 high part plus a bf16 residual,
two bf16 tensor-core products per tile, fp32 accumulation; split-K at decode sizes.

Each fp32 tile of w is split in registers: w1 = bf16(w), w2 = bf16(w - w1). The rest is exact in
fp32, so w1 + w2 holds w's leading 16 significant bits (bf16 has the exponent range of fp32, so
the residual needs no scaling). What is dropped is below 2^-16 of |w|: by the reference's own
figures (bf16 w 8.4e-3 per sqrt(K)), about 3e-5 per sqrt(K), a third of its bound 1e-4, and top-k
sets are kept wherever float64's 8th and 9th scores are a bound apart. A bf16 x times a piece is
exact in fp32; only the fp32 sums round. An fp16 x (11 bits) is split the same way into two bf16
pieces, four products. No bf16 copy of w exists outside the registers of one tile.

Two products where the three-piece split takes three: at prefill sizes, where the dot is the
cost, a third less tensor-core work. Decode sizes read w (N * K * 4 bytes) and need more programs
than the [M, N] tiles give: K is cut into chunks whose partial tiles are added into a zeroed
output (fp32 atomics: the sum's order varies from call to call, within fp32 rounding).

GPU only: Triton's interpreter computes bf16 wrongly.
"""

import torch
import triton
import triton.language as tl

from . import _runtime

PROGRAMS = 264  # two per SM of an H200 (132): the grid to reach at decode sizes
MIN_CHUNK = 128  # K elements per program at least: fewer and the atomics cost more than they save


@triton.jit
def _pieces(v):
    """v (fp32) as two bf16 pieces, leading bits first: 16 of an fp32's 24 significant bits."""
    p1 = v.to(tl.bfloat16)
    p2 = (v - p1.to(tl.float32)).to(tl.bfloat16)
    return p1, p2


@triton.jit
def _router_gemm_2p(
    y_ptr, x_ptr, w_ptr, M, N, K, CHUNK,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    X_PIECES: tl.constexpr, ATOMIC: tl.constexpr,
):  # fmt: skip
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_start = tl.program_id(2) * CHUNK
    k_end = tl.minimum(k_start + CHUNK, K)
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        ks = k0 + rk
        xf = tl.load(
            x_rows + ks[None, :] * stride_xk,
            mask=(rm[:, None] < M) & (ks[None, :] < k_end),
            other=0.0,
        ).to(tl.float32)
        wt = tl.load(  # w^T tile, [BLOCK_K, BLOCK_N], from w's [N, K] rows
            w_cols + ks[:, None] * stride_wk,
            mask=(ks[:, None] < k_end) & (rn[None, :] < N),
            other=0.0,
        )
        w1, w2 = _pieces(wt)
        x1 = xf.to(tl.bfloat16)  # exact for a bf16 x
        acc = tl.dot(x1, w1, acc)
        acc = tl.dot(x1, w2, acc)
        if X_PIECES == 2:  # fp16 x: its 11 bits in two bf16 pieces
            x2 = (xf - x1.to(tl.float32)).to(tl.bfloat16)
            acc = tl.dot(x2, w1, acc)
            acc = tl.dot(x2, w2, acc)
    y = y_ptr + rm.to(tl.int64)[:, None] * stride_ym + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if ATOMIC:
        tl.atomic_add(y, acc, mask=mask, sem="relaxed")
    else:
        tl.store(y, acc, mask=mask)


def _plan(m: int, n: int, k: int) -> tuple[int, int, int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, chunk, splits): the smallest M tile that holds the tokens
    (tl.dot's minimum is 16), narrower N tiles at decode sizes (more programs, each reading less
    of w), and K split until the grid reaches PROGRAMS. A starting point, not yet timed."""
    block_m = 16 if m <= 16 else 32 if m <= 32 else 64 if m <= 64 else 128
    block_n, block_k = (32 if m <= 64 else 64), 64
    tiles = triton.cdiv(m, block_m) * triton.cdiv(n, block_n)
    splits = max(1, min(triton.cdiv(k, MIN_CHUNK), triton.cdiv(PROGRAMS, tiles)))
    chunk = triton.cdiv(triton.cdiv(k, splits), block_k) * block_k
    return block_m, block_n, block_k, chunk, triton.cdiv(k, chunk)


def router_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    n = w.shape[0]
    block_m, block_n, block_k, chunk, splits = _plan(m, n, max(k, 1))
    atomic = splits > 1
    # Split-K adds its partial tiles into the output, which must start at zero.
    y = (torch.zeros if atomic or k == 0 else torch.empty)(
        (m, n), dtype=torch.float32, device=x.device
    )
    if y.numel() == 0 or k == 0:
        return y
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n), splits)
    _router_gemm_2p[grid](
        y, x, w, m, n, k, chunk,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        X_PIECES=1 if x.dtype == torch.bfloat16 else 2, ATOMIC=atomic,
        num_warps=8 if block_m == 128 else 4, num_stages=3,
    )  # fmt: skip
    return y


# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).
_runtime.lean_launches(globals())
