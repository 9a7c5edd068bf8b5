"""kb2_22_matmul_scale_residualadd_clamp_logsumexp_mish: GEMM with a row logsumexp epilogue.

v = clamp((x @ W^T + b) * 2 doubled (v + v), -10, 10); l = logsumexp over each row's N
features; out = l * mish(l), an [M, 1] tensor.

The [M, N] product is never written: each GEMM tile ends with its rows' partial logsumexp
(the tile's max m and sum of exp(v - m)), and a small kernel combines the [M, N / BLOCK_N]
partials and applies l * mish(l). Memory traffic is x and W once each; torch eager writes and
re-reads [M, N] five times around its GEMM. The clamp lets a NaN through (as torch.clamp).

The GEMM runs on the bf16 tensor cores exactly enough for fp32: each fp32 tile of x and of w is
split in registers into three bf16 pieces (v = v1 + v2 + v3, every split exact in fp32, and an
inf or NaN kept whole in v1 and kept out of the products with w's lower pieces), and the six
products whose bits reach fp32's precision (a3b1, a2b2,
a1b3, a2b1, a1b2, a1b1, smallest first) are chained into one fresh accumulator per K block, which
is then added into the fp32 running total on the CUDA cores: the tensor cores never carry a sum
through all of K (on the H200 one accumulator through all of K was 10-100x less accurate than
cuBLAS's fp32 GEMM). Six bf16 MMAs cost about a sixth of the H200's dense bf16 rate, still above
its fp32 FMA rate that cuBLAS's fp32 GEMM (no TF32) runs at.

The running total is a compensated (Kahan) sum: on the H100 the plain fp32 total was rejected for
precision at a drawn row of 8191 ascending values (K / BLOCK_K = 256 blocks of one sign, its error
growing with each add: 1.0e-5 relative where torch's split reduction gave 4.1e-8). With the
compensation the total's error stays near one rounding whatever the number of blocks, for one
more fp32 tile of registers and four adds a block beside six MMAs.
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
def _pieces(v):
    """fp32 v as three bf16 pieces, leading bits first, and the lead with an inf or NaN zeroed."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    finite = r == r  # inf - inf is NaN: the special is carried by p1 alone
    r = tl.where(finite, r, 0.0)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    return p1, p2, p3, tl.where(finite, p1, 0.0).to(tl.bfloat16)


@triton.jit
def _block_dot(a, b):
    """a @ b for one K block: six bf16 products in a fresh accumulator, smallest first.
    An inf in a meets b only through b's lead (as torch's inf * w), never through b's lower
    pieces, which are 0 where w fits in bf16 (inf * 0 would be a NaN torch does not make)."""
    a1, a2, a3, a1f = _pieces(a)
    b1, b2, b3, _ = _pieces(b)
    part = tl.dot(a3, b1)
    part = tl.dot(a2, b2, part)
    part = tl.dot(a1f, b3, part)
    part = tl.dot(a2, b1, part)
    part = tl.dot(a1f, b2, part)
    return tl.dot(a1, b1, part)


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
    comp = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # what acc's adds have rounded away
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        k64 = ks.to(tl.int64)
        a = tl.load(x_rows + k64[None, :] * stride_xk, mask=m_in & (ks[None, :] < K), other=0.0)
        b = tl.load(w_cols + k64[:, None] * stride_wk, mask=(ks[:, None] < K) & n_in, other=0.0)
        # Kahan's compensated add of the block into the running total; where the total is inf
        # or NaN the compensation (inf - inf) is dropped, so an inf stays inf as in torch.
        y = _block_dot(a, b) - comp
        t = acc + y
        comp = tl.where(tl.abs(t) < float("inf"), (t - acc) - y, 0.0)
        acc = t
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
