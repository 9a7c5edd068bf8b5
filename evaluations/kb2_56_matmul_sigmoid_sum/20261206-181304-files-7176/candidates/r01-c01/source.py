"""kb2_56_matmul_sigmoid_sum: y = x @ W^T + b; out[m, 0] = sum_n sigmoid(y[m, n]).

The [M, N] result is never written: each GEMM program sums sigmoid(y) = 1 / (1 + exp(-y)) over
its tile's valid columns and writes one partial per (row, N tile) into an [M, N / BLOCK_N]
buffer; a second kernel adds a row's partials (a loop over them: N / BLOCK_N is up to 512 at
BLOCK_N = 64). NaN anywhere in a row reaches its sum, as in torch.

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

Traffic at the problem's size (M=128, N=K=32768): w read once (4.3 GB: every program reads its
own w tile, the single M tile covers the batch), x (16 MB, from L2 after the first reads), the
partials (128 x 256 floats) twice; torch eager also writes and reads the 16 MB result twice. The
GEMM's 275 GFLOP decide the time.
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
SUM_BLOCK = 512  # partials a row's sum reads at a time


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
def _gemm_sigmoid_partial_kernel(
    part_ptr,  # *fp32, [M, NT], contiguous: per (row, N tile) sums of sigmoid(y)
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
    b = tl.load(b_ptr + rn, mask=n_ok, other=0.0)
    s = 1.0 / (1.0 + tl.exp(-(acc + b[None, :])))
    s = tl.where(n_ok[None, :], s, 0.0)
    tl.store(part_ptr + rm.to(tl.int64) * NT + pid_n, tl.sum(s, axis=1), mask=rm < M)


@triton.jit
def _row_sum_kernel(
    y_ptr,  # *fp32, [M]: the output (its [M, 1] storage)
    part_ptr,  # *fp32, [M, NT], contiguous
    NT,  # partials per row
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, NT, BLOCK):
        total += tl.load(part_ptr + row * NT + c0 + cols, mask=c0 + cols < NT, other=0.0)
    tl.store(y_ptr + row, tl.sum(total, axis=0))


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb2_56_matmul_sigmoid_sum(x, linear_weight, linear_bias) -> torch.Tensor:
    m, k = x.shape
    n = linear_weight.shape[0]
    y = torch.empty((m, 1), dtype=x.dtype, device=x.device)
    if m == 0:
        return y
    cfg = dict(_config(m, n, k))
    # A tile no taller than the batch (tl.dot's least is 16): small batches waste no rows.
    block_m = min(cfg.pop("BLOCK_M"), max(16, triton.next_power_of_2(m)))
    nt = triton.cdiv(n, cfg["BLOCK_N"])
    part = torch.empty((m, nt), dtype=torch.float32, device=x.device)
    _gemm_sigmoid_partial_kernel[(triton.cdiv(m, block_m) * nt,)](
        part, x, linear_weight, linear_bias.contiguous(), m, n, k, nt,
        x.stride(0), x.stride(1), linear_weight.stride(0), linear_weight.stride(1),
        BLOCK_M=block_m, **cfg,
    )  # fmt: skip
    block = min(SUM_BLOCK, triton.next_power_of_2(nt))
    _row_sum_kernel[(m,)](y, part, nt, BLOCK=block, num_warps=4)
    return y
