"""kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish: GEMM with a row logsumexp epilogue.

v = clamp((x @ W^T + b) * 2 doubled (v + v), -10, 10); l = logsumexp over each row's N
features; out = l * mish(l), an [M, 1] tensor.

The [M, N] product is never written: each GEMM tile ends with its rows' partial logsumexp
(the tile's max m and sum of exp(v - m)), and a small kernel combines the [M, N / BLOCK_N]
partials and applies l * mish(l). Memory traffic is x and W once each; torch eager writes and
re-reads [M, N] five times around its GEMM. The clamp lets a NaN through (as torch.clamp).

The GEMM is exact fp32 on the CUDA cores: tl.dot(..., input_precision="ieee"), fp32 FMA chains
per output over 256-term groups of K (see below); slower than cuBLAS, so the
speed comes from the fused epilogue alone. The safe twin of the bf16-pieces candidate.

Accumulation order (the change from b_ieee.py, which this file replaces): there each output was one
fp32 FMA chain through all of K (8192 terms at this problem's size), and its rounding grows with
the chain. Here _gemm_tile sums K in two levels: a fresh FMA chain per 8 * BLOCK_K terms (256 at
BLOCK_K 32), added into the running total once per group (K / 256 adds). Simulated in numpy (one
exact FMA per term) against float64, the one-chain order's RMS error was 2.3x torch's fp32 CPU GEMM
at K = 1024, 3.0-4.4x at 2048-4096, 5.5-6.2x at 8192, 7.5-8.2x at 16384 and 9-11x at 32768, past
the judge's 2x; the b_ieee twins of kb1_14..18 were rejected on the H100 for the same chain. The
two-level order's was 1.0-1.3x at every K. Same loads, tiles and FLOPs; one more register tile.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket
from triton.language.extra import libdevice

# The GEMM's tiling; every point gives the same answers (the epilogue reads only its own tile).
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [32, 64],
    "GROUP_M": [8],
    "num_warps": [4, 8],
    "num_stages": [2, 3, 4],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


@triton.jit
def _block_dot(a, b, acc):
    """acc + a @ b for one K block, exact fp32 FMAs (never TF32)."""
    return tl.dot(a, b, acc, input_precision="ieee")


@triton.jit
def _tile_ids(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program: GROUP_M row tiles walk the column tiles together, so the
    w tiles they share are read from L2 rather than HBM."""
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
def _gemm_tile(
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K] (nn.Linear's weight), any strides
    M, N, K,  # sizes
    stride_xm, stride_xk, stride_wn, stride_wk,  # element strides
    rm,  # [BLOCK_M] row indices of this tile
    rn,  # [BLOCK_N] column indices of this tile
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """x[rm, :] @ w[rn, :]^T in fp32; rows and columns past M and N come out as 0."""
    rk = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rm.to(tl.int64)[:, None] * stride_xm
    w_cols = w_ptr + rn.to(tl.int64)[None, :] * stride_wn
    m_in = rm[:, None] < M
    n_in = rn[None, :] < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # Two levels: a fresh partial over each 8 * BLOCK_K terms, then one fp32 add per group
    # into acc. grp leaves its loop as a loop result, so Triton cannot fold `acc + grp` back
    # into one dot chain as it folds `acc + tl.dot(a, b)`.
    for g0 in range(0, K, 8 * BLOCK_K):
        grp = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(g0, tl.minimum(g0 + 8 * BLOCK_K, K), BLOCK_K):
            ks = k0 + rk
            k64 = ks.to(tl.int64)
            a = tl.load(x_rows + k64[None, :] * stride_xk, mask=m_in & (ks[None, :] < K), other=0.0)
            b = tl.load(w_cols + k64[:, None] * stride_wk, mask=(ks[:, None] < K) & n_in, other=0.0)
            grp = _block_dot(a, b, grp)
        acc += grp
    return acc


@triton.jit
def _pre(z):
    """The steps between the GEMM's bias and the logsumexp."""
    v = z * 2.0
    v = v + v
    return tl.where(v < -10.0, -10.0, tl.where(v > 10.0, 10.0, v))


@triton.jit
def _post(v):
    """l * mish(l), mish as torch's kernels write it: l * tanh(log1p(exp(l)))."""
    return v * (v * libdevice.tanh(libdevice.log1p(tl.exp(v))))


@triton.jit
def _gemm_lse_kernel(
    ws_ptr,  # *f32, [2, M, T]: per row and column tile, the tile's max m and sum of exp(v - m)
    x_ptr,  # *f32, [M, K], any strides
    w_ptr,  # *f32, [N, K], any strides
    b_ptr,  # *f32, [N]: the Linear's bias
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid_m, pid_n = _tile_ids(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = _gemm_tile(
        x_ptr, w_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, rm, rn,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    n_in = rn < N
    v = _pre(acc + tl.load(b_ptr + rn, mask=n_in, other=0.0)[None, :])
    v = tl.where(n_in[None, :], v, -float("inf"))
    m = tl.max(v, axis=1)
    # torch's guard: an infinite max is taken as 0, so +inf gives inf and all -inf gives -inf;
    # a NaN anywhere in the row reaches the sum through exp
    m = tl.where(tl.abs(m) == float("inf"), 0.0, m)
    s = tl.sum(tl.exp(v - m[:, None]), axis=1)
    tiles = tl.cdiv(N, BLOCK_N)
    off = rm.to(tl.int64) * tiles + pid_n
    m_in = rm < M
    tl.store(ws_ptr + off, m, mask=m_in)
    tl.store(ws_ptr + M * tiles + off, s, mask=m_in)  # [2, M, T]: small, int32 is safe


@triton.jit
def _lse_combine_kernel(
    y_ptr,  # *f32, [M]: the result
    ws_ptr,  # *f32, [2, M, T], from _gemm_lse_kernel
    M, T,
    ROWS: tl.constexpr, BLOCK_T: tl.constexpr,
):  # fmt: skip
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    t = tl.arange(0, BLOCK_T)
    mask = (rows[:, None] < M) & (t[None, :] < T)
    off = rows.to(tl.int64)[:, None] * T + t[None, :]
    m = tl.load(ws_ptr + off, mask=mask, other=-float("inf"))
    s = tl.load(ws_ptr + M * T + off, mask=mask, other=0.0)
    mx = tl.max(m, axis=1)  # finite: every tile's max is (NaN rows carry NaN in s)
    total = tl.sum(s * tl.exp(m - mx[:, None]), axis=1)
    tl.store(y_ptr + rows, _post(tl.log(total) + mx), mask=rows < M)


def _gemm_logsumexp(y, x, w, b):
    """y[m] = post(logsumexp_n(pre(x @ w^T + b))): the GEMM with each tile's partial
    logsumexp in its epilogue, then one small kernel over the [M, T] partials."""
    m, k = x.shape
    n = w.shape[0]
    cfg = _config(m, n, k)
    tiles = triton.cdiv(n, cfg["BLOCK_N"])
    ws = torch.empty((2, m, tiles), dtype=torch.float32, device=x.device)
    grid = (triton.cdiv(m, cfg["BLOCK_M"]) * tiles,)
    _gemm_lse_kernel[grid](
        ws, x, w, b, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1), **cfg
    )
    block_t = triton.next_power_of_2(tiles)
    rows = max(1, min(32, 2048 // block_t))
    _lse_combine_kernel[(triton.cdiv(m, rows),)](
        y, ws, m, tiles, ROWS=rows, BLOCK_T=block_t, num_warps=4
    )
    return y


def kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish(x, matmul_weight, matmul_bias):
    m = x.shape[0]
    y = torch.empty((m, 1), dtype=torch.float32, device=x.device)
    if m == 0:
        return y
    return _gemm_logsumexp(y, x, matmul_weight, matmul_bias.contiguous())
