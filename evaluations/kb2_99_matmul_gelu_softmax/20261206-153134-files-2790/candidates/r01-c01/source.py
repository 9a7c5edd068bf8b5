"""kb2_99_matmul_gelu_softmax: y = x @ W^T + b; g = gelu(y) (erf form); out = softmax(g, dim=1).

Two kernels. The GEMM's epilogue writes g and reduces each tile's rows to a partial softmax
(the tile's max m_t and s_t = sum exp(g - m_t)) in an [M, N / BLOCK_N] pair of buffers. The second
kernel merges a row's partials (max, then sum s_t * exp(m_t - max)) and writes exp(g - max) / sum
over the row a block at a time, so no row needs to fit in one block. Specials as torch's softmax:
a row with +inf has sum NaN (inf - inf), so all of it is NaN; exp(-inf - max) is 0.

GEMM on the tensor cores in bf16 pieces: each fp32 tile of x and of w is split in registers into
three bf16 pieces (hi + mid + lo holds all 24 significant bits, each product of two pieces is
exact in fp32), and the six products at or above 2^-24 of hi * hi are chained into one fresh
accumulator per K block, which is added into the fp32 running total on the CUDA cores (one
tensor-core accumulator through all of K was 10-100x less accurate than cuBLAS's fp32 GEMM on the
H200). Six bf16 MMAs at the H200's ~990 TFLOP/s (dense bf16) leave about twice the ~67 TFLOP/s of
fp32 FMAs that torch eager's cuBLAS fp32 GEMM (no TF32) runs on, if the splits keep up. An inf or
NaN of x stays in its hi piece alone, so inf * w keeps w's sign as in torch. The CPU check
emulates the bf16 products exactly but not the tensor cores' summation within a block: b_ieee.py
is the same kernel with exact fp32 FMAs, the fallback where this is not accepted on the GPU.

Traffic at the problem's size (M=1024, N=K=8192): x and w read (w once from HBM), g written and
read once (32 MB each way), out written (32 MB); torch eager writes y, reads it for gelu, writes
g, reads it for softmax and writes out. The GEMM's 137 GFLOP decide the time.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# Tiles are free: every point gives the same answer (masks cover the edges), only speed differs.
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [32, 64],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
}
DEFAULT_CONFIG = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3}
TUNED: dict[str, dict[str, int]] = {}
MERGE_BLOCK = 512  # partials a row's merge reads at a time
ROW_BLOCK = 2048  # entries of a row the normalising pass handles at a time


@triton.jit
def _split(v):
    """fp32 -> bf16 pieces (hi, hi_finite, mid, lo): hi + mid + lo == v for finite v. An inf or
    NaN lives in hi alone (its residuals are zero), and hi_finite, hi with inf/NaN zeroed, is
    what meets the other operand's residuals, so inf * w keeps w's sign (never inf - inf)."""
    hi = v.to(tl.bfloat16)
    hf = hi.to(tl.float32)
    finite = tl.abs(hf) < float("inf")
    r = tl.where(finite, v - hf, 0.0)
    mid = r.to(tl.bfloat16)
    lo = (r - mid.to(tl.float32)).to(tl.bfloat16)
    return hi, tl.where(finite, hf, 0.0).to(tl.bfloat16), mid, lo


@triton.jit
def _gemm_tile(
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K] (nn.Linear's weight), any strides
    M, N, K,  # the GEMM's sizes
    stride_xm, stride_xk, stride_wn, stride_wk,  # elements between rows / columns
    rm, rn,  # this tile's rows of x and rows of w
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """acc[i, j] = sum_k x[rm[i], k] * w[rn[j], k] in fp32; rows and columns out of range are 0.
    Each K block's six piece products (all those at or above 2^-24 of hi * hi) go into a fresh
    tensor-core accumulator, added into the fp32 total on the CUDA cores."""
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    m_ok = rm[:, None] < M
    n_ok = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        xt = tl.load(
            x_rows + ks[None, :].to(tl.int64) * stride_xk,
            mask=m_ok & (ks[None, :] < K),
            other=0.0,
        )
        wt = tl.load(  # w^T tile, [BLOCK_K, BLOCK_N], from w's [N, K] rows
            w_cols + ks[:, None].to(tl.int64) * stride_wk,
            mask=(ks[:, None] < K) & n_ok,
            other=0.0,
        )
        x1, x1f, x2, x3 = _split(xt)
        w1, w1f, w2, w3 = _split(wt)
        part = tl.dot(x1, w1)  # this block's sum, leading product first
        part = tl.dot(x1f, w2, part)
        part = tl.dot(x2, w1f, part)
        part = tl.dot(x1f, w3, part)
        part = tl.dot(x2, w2, part)
        part = tl.dot(x3, w1f, part)
        acc += part  # the running total, rounded as an fp32 sum
    return acc


@triton.jit
def _gemm_gelu_partial_kernel(
    g_ptr,  # *fp32, [M, N], contiguous: gelu(y)
    pmax_ptr,  # *fp32, [M, NT], contiguous: per (row, N tile) max of g
    psum_ptr,  # *fp32, [M, NT], contiguous: per (row, N tile) sum of exp(g - that max)
    x_ptr,  # *fp32, [M, K], any strides
    w_ptr,  # *fp32, [N, K], any strides
    b_ptr,  # *fp32, [N]: the Linear's bias
    M, N, K, NT,  # the GEMM's sizes; NT = cdiv(N, BLOCK_N)
    stride_xm, stride_xk, stride_wn, stride_wk,  # elements between rows / columns
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    pid_n = pid // num_m
    rm = (pid % num_m) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    n_ok = rn < N
    m_ok = rm < M
    b = tl.load(b_ptr + rn, mask=n_ok, other=0.0)
    v = acc + b[None, :]
    g = v * 0.5 * (1.0 + tl.erf(v * 0.7071067811865476))
    rows = rm.to(tl.int64)
    tl.store(g_ptr + rows[:, None] * N + rn[None, :], g, mask=m_ok[:, None] & n_ok[None, :])
    gm = tl.where(n_ok[None, :], g, -float("inf"))
    mx = tl.max(gm, axis=1)
    # An infinite max shifts by 0: the +inf entries then make s_t inf, the merge makes it NaN.
    shift = tl.where(tl.abs(mx) < float("inf"), mx, 0.0)
    se = tl.sum(tl.exp(gm - shift[:, None]), axis=1)
    tl.store(pmax_ptr + rows * NT + pid_n, mx, mask=m_ok)
    tl.store(psum_ptr + rows * NT + pid_n, se, mask=m_ok)


@triton.jit
def _softmax_finish_kernel(
    y_ptr,  # *fp32, [M, N], contiguous: the output
    g_ptr,  # *fp32, [M, N], contiguous
    pmax_ptr,  # *fp32, [M, NT], contiguous
    psum_ptr,  # *fp32, [M, NT], contiguous
    N, NT,  # row length, partials per row
    BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    row = tl.program_id(0).to(tl.int64)
    ts = tl.arange(0, BLOCK_T)
    mx = tl.full((BLOCK_T,), -float("inf"), dtype=tl.float32)
    for t0 in range(0, NT, BLOCK_T):
        m_t = tl.load(pmax_ptr + row * NT + t0 + ts, mask=t0 + ts < NT, other=-float("inf"))
        mx = tl.maximum(mx, m_t)
    big = tl.max(mx, axis=0)
    total = tl.zeros((BLOCK_T,), dtype=tl.float32)
    for t0 in range(0, NT, BLOCK_T):
        ok = t0 + ts < NT
        m_t = tl.load(pmax_ptr + row * NT + t0 + ts, mask=ok, other=0.0)
        s_t = tl.load(psum_ptr + row * NT + t0 + ts, mask=ok, other=0.0)
        m_t = tl.where(tl.abs(m_t) < float("inf"), m_t, 0.0)  # the shift its s_t was taken at
        # s_t == 0 (a tile of -inf) adds nothing, whatever exp(m_t - big) is; a NaN s_t stays.
        total += tl.where(s_t == 0.0, 0.0, s_t * tl.exp(m_t - big))
    denom = tl.sum(total, axis=0)
    denom = tl.where(big == float("inf"), float("nan"), denom)  # torch: inf - inf in the sum
    cols = tl.arange(0, BLOCK_N)
    for c0 in range(0, N, BLOCK_N):
        ok = c0 + cols < N
        g = tl.load(g_ptr + row * N + c0 + cols, mask=ok, other=0.0)
        tl.store(y_ptr + row * N + c0 + cols, tl.exp(g - big) / denom, mask=ok)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb2_99_matmul_gelu_softmax(x, linear_weight, linear_bias) -> torch.Tensor:
    m, k = x.shape
    n = linear_weight.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    cfg = dict(_config(m, n, k))
    # A tile no taller than the batch (tl.dot's least is 16): small batches waste no rows.
    block_m = min(cfg.pop("BLOCK_M"), max(16, triton.next_power_of_2(m)))
    nt = triton.cdiv(n, cfg["BLOCK_N"])
    g = torch.empty((m, n), dtype=torch.float32, device=x.device)
    pmax = torch.empty((m, nt), dtype=torch.float32, device=x.device)
    psum = torch.empty((m, nt), dtype=torch.float32, device=x.device)
    _gemm_gelu_partial_kernel[(triton.cdiv(m, block_m) * nt,)](
        g, pmax, psum, x, linear_weight, linear_bias.contiguous(), m, n, k, nt,
        x.stride(0), x.stride(1), linear_weight.stride(0), linear_weight.stride(1),
        BLOCK_M=block_m, **cfg,
    )  # fmt: skip
    _softmax_finish_kernel[(m,)](
        y, g, pmax, psum, n, nt,
        BLOCK_T=min(MERGE_BLOCK, triton.next_power_of_2(nt)),
        BLOCK_N=min(ROW_BLOCK, triton.next_power_of_2(n)),
        num_warps=8,
    )  # fmt: skip
    return y
