"""Scaled dot-product attention, fp32: O = softmax(Q K^T / sqrt(E)) V over Q, K, V [B, H, L, E].

Both products run on the bf16 tensor cores, fp32 split into bf16 pieces; the scores now so that
the tensor cores' sums are exact.

Three kernels:
1. `_scores_kernel`: S = (Q K^T) / sqrt(E) per (batch, head) in fp64, [BLOCK_M, BLOCK_N] tiles over
   the L x L scores, the K loop over E (1024 at the problem's size) BLOCK_K at a time.
2. `_softmax_kernel`: each fp64 score row (L <= 512 wide, one block) to exp(s - max) / sum in
   fp64, stored as fp32 probabilities.
3. `_pv_kernel`: O = P V, [BLOCK_M, BLOCK_N] tiles over L x E, the K loop over the L keys.
Why not one fused flash kernel: E reaches 1024, so a query block's Q rows and its output
accumulator ([BLOCK_M, E] each) do not fit in registers, and an online softmax would rescale that
accumulator for every key block; with L <= 512 the scores of one (batch, head) are at most 2 MB.

What was wrong (rejected on the H100: `large` values, E = 5, one output row of 5 entries
9.6e9 where the reference is -1.5e6). Nothing overflowed (|q k| <= 2^80, far inside fp32); the
row took the wrong key. The scores were per-element bf16 pieces whose six products were chained
through one fp32 tensor-core accumulator per K block: the products are exact, but each MMA adds
them into fp32 by truncation (aligned to the largest term), so a score was off by up to ~6 ulps
(~2^-20 relative, all toward zero), where an fp32 FMA chain rounds to nearest. With `large` values
the scores reach 2^80 and the softmax is one-hot; a row whose two best keys score within ~2^-21
of each other (a few rows in 250 000 at that shape) could swap them, and the output row became
another key's V row. A numpy model of that order (exact products, truncation after each MMA) at
the failing shape swapped a row in 2 of 11 draws. The interpreter computes tl.dot exactly, so the
CPU never showed it.

The scores now (Ozaki's splitting: exact sums on the tensor cores):
- each query row and each key is scaled by sigma, the power of two just above its largest |value|
  over all of E (a first sweep over E; the scaling is exact), so every value lies in (-1, 1);
- each scaled value t is split into four slices on fixed grids, t = s1 + s2 + s3 + s4 + r, with
  s1 a multiple of 2^-8, s2 of 2^-16, s3 of 2^-24, s4 of 2^-32 and |r| <= 2^-33 (`_slices`:
  (t + C) - C rounds to a grid; each slice is at most 256 steps of its grid, so exact in bf16);
- the ten slice products of levels 2..5 (s_i x s_j with i + j <= 5) run as bf16 MMAs into three
  fp32 accumulators: hi (s1 s1, multiples of 2^-16), mid (s1 s2 + s2 s1, multiples of 2^-24) and
  lo (levels 4 and 5, smallest first). Each hi or mid term is at most 2^16 units, so over
  GROUP = 128 columns of E their sums are integers below 2^23 units: every partial sum is
  representable and the MMAs' truncating fp32 accumulation is exact, on the GPU as on the CPU
  interpreter (same bits). lo is ~2^-16 of the scale; its truncation stays below 2^-26 sigma_q
  sigma_k a group;
- every GROUP columns the three accumulators go into an fp64 total, which is finally scaled by
  sigma_q sigma_k / sqrt(E) in fp64 and stored in fp64.
A score's error is then at most ~2^-31 sigma_q sigma_k per column of E (the dropped levels 6+ and
r), with random signs. In numpy at E = 1024 with normal values the worst of 65 536 scores was off
by 2e-7 before the 1/32 scale (one fp32 FMA chain: 1.6e-4; the exact score rounded to fp32
alone: 6.8e-6); `constant` rows are split
exactly (a row's 24 bits fill three slices); at the failing `large` shape a numpy model of the
split took no wrong key in 11 draws (the old order: 2 rows, in 2 draws), and the whole emulated
pipeline (this file's order, truncation after each MMA of P V) matched the fp64 reference
exactly on those 2 draws. At the b_ieee failing `constant` shape it stayed within 0.005x the
bound.

Softmax: in fp64 (max subtracted, libdevice exp, sum, divide), probabilities rounded to fp32 once.
The exponent's error is that of the fp64 score: no fp32 rounding of |s| ~ 200 (`constant` rows
reach it), where half an ulp is already 8e-6.

P V: per-element bf16 pieces as before (p = p1 + p2 + p3 exactly; the six products a1b1, a1b2,
a2b1, a1b3, a2b2, a3b1 chained smallest first into one fresh accumulator per block of
PV_BLOCK_K keys), each block's sum converted to fp64 and added into an fp64 total, so no fp32 sum
runs through more than one block. Its error is a few fp32 ulps of sum_j p_j |v_j| (the
tolerance's atol is 1e-5 * log2 L); a one-hot row (p = 1 exactly, as `large` gives) returns its V
row exactly. Where Triton sees `acc + tl.dot(a, b)` with a zero accumulator it folds the add into
the dot (one chain through all of K); every running total here is fed by a loop result, by a
chain whose accumulator is not zero, or through a conversion to fp64, so no fold joins blocks
(checked in the sm_90 TTGIR).

Cost: ten bf16 MMAs per score block instead of six, plus the slicing (about 17 fp32 ops per loaded
value) and the first sweep over E; the scores (fp64) and probabilities (fp32) take 12 bytes per
entry of scratch, 3.2 GB at the problem's size.

Special values are outside the domain (no NaN/inf families); |values| must stay below 2^126.
Any strides of Q, K and V are honoured (the "leading" and transposed layouts included), with
int64 offsets; the output is contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# BLOCK_* tile the scores kernel (BLOCK_K: columns of E per step), PV_* the P V kernel (PV_BLOCK_K:
# keys per step); BLOCK_M and the launch options are shared. At the default neither kernel spills
# when compiled for sm_90 (168 and 234 registers); 64-wide score tiles do (four accumulators, one
# of them fp64).
TUNE_SPACE = {
    "BLOCK_M": [64, 128],
    "BLOCK_N": [32],
    "BLOCK_K": [16, 32],
    "PV_BLOCK_N": [32, 64],
    "PV_BLOCK_K": [32, 64],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 128, "BLOCK_N": 32, "BLOCK_K": 32, "PV_BLOCK_N": 64, "PV_BLOCK_K": 32,
    "num_warps": 8, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}

_ROW_TILE = 2048  # score entries each softmax program holds, at least
# Columns of E whose slice products one fp32 accumulator sums before the fp64 total: at most 128
# keeps the exact levels below 2^23 units. A multiple of every BLOCK_K.
GROUP = 128


@triton.jit
def _pow2_above(m):
    """For m >= 0 (fp32): sigma, the least power of two above m (2^-126 for m below the normal
    range, 2^126 at most), and 1/sigma, both exact (built from m's exponent bits)."""
    eb = m.to(tl.int32, bitcast=True) & 0x7F800000
    eb = tl.minimum(eb, 252 << 23)
    sigma = (eb + (1 << 23)).to(tl.float32, bitcast=True)
    inv = ((253 << 23) - eb).to(tl.float32, bitcast=True)
    return sigma, inv


@triton.jit
def _slices(t):
    """t in (-1, 1) (fp32) as four bf16 slices on fixed grids: s1 a multiple of 2^-8, s2 of 2^-16,
    s3 of 2^-24, s4 of 2^-32, t - (s1 + s2 + s3 + s4) within 2^-33. (x + C) - C with
    C = 1.5 * 2^(23 - g) rounds x to a multiple of 2^-g (round to nearest, |x| < 2^(22 - g));
    each remainder is exact, and each slice is at most 256 steps of its grid: exact in bf16."""
    s1 = (t + 49152.0) - 49152.0  # 1.5 * 2^15: grid 2^-8
    r = t - s1  # |r| <= 2^-9
    s2 = (r + 192.0) - 192.0  # 1.5 * 2^7: grid 2^-16
    r = r - s2  # |r| <= 2^-17
    s3 = (r + 0.75) - 0.75  # 1.5 * 2^-1: grid 2^-24
    r = r - s3  # |r| <= 2^-25
    s4 = (r + 0.0029296875) - 0.0029296875  # 1.5 * 2^-9: grid 2^-32
    return s1.to(tl.bfloat16), s2.to(tl.bfloat16), s3.to(tl.bfloat16), s4.to(tl.bfloat16)


@triton.jit
def _pieces(v):
    """v (fp32) as three bf16 pieces, leading bits first: 8, 16 and all 24 significant bits."""
    p1 = v.to(tl.bfloat16)
    r = v - p1.to(tl.float32)
    p2 = r.to(tl.bfloat16)
    p3 = (r - p2.to(tl.float32)).to(tl.bfloat16)
    return p1, p2, p3


@triton.jit
def _scores_kernel(
    s_ptr,  # *fp64, [B*H, L, L] contiguous: scaled scores
    q_ptr,  # *fp32, [B, H, L, E], any strides
    k_ptr,  # *fp32, [B, H, L, E], any strides
    H,  # heads
    L,  # sequence length
    E,  # embedding (head) dimension, the reduced length
    sqb, sqh, sql, sqe,  # strides of q
    skb, skh, skl, ske,  # strides of k
    BLOCK_M: tl.constexpr,  # query rows per program
    BLOCK_N: tl.constexpr,  # key rows per program
    BLOCK_K: tl.constexpr,  # embedding columns per step
    GROUP: tl.constexpr,  # embedding columns per fp32 accumulator (<= 128, multiple of BLOCK_K)
):  # fmt: skip
    tiles_n = tl.cdiv(L, BLOCK_N)
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh - b * H
    rm = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    q_base = q_ptr + b.to(tl.int64) * sqb + h.to(tl.int64) * sqh
    k_base = k_ptr + b.to(tl.int64) * skb + h.to(tl.int64) * skh
    q_rows = q_base + rm.to(tl.int64)[:, None] * sql
    k_cols = k_base + rn.to(tl.int64)[None, :] * skl
    m_ok = rm[:, None] < L
    n_ok = rn[None, :] < L
    # Sweep 1: each query row's and each key's largest |value| over all of E.
    qmax = tl.zeros((BLOCK_M,), dtype=tl.float32)
    kmax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, E, BLOCK_K):
        ks = k0 + rk
        a = tl.load(
            q_rows + ks.to(tl.int64)[None, :] * sqe, mask=m_ok & (ks[None, :] < E), other=0.0
        )
        bt = tl.load(
            k_cols + ks.to(tl.int64)[:, None] * ske, mask=(ks[:, None] < E) & n_ok, other=0.0
        )
        qmax = tl.maximum(qmax, tl.max(tl.abs(a), axis=1))
        kmax = tl.maximum(kmax, tl.max(tl.abs(bt), axis=0))
    q_sigma, q_inv = _pow2_above(qmax)
    k_sigma, k_inv = _pow2_above(kmax)
    # Sweep 2: the exact slice products, GROUP columns per fp32 accumulator, groups in fp64.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
    for g0 in range(0, E, GROUP):
        hi = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # level 2: units of 2^-16
        mid = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # level 3: units of 2^-24
        lo = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # levels 4, 5 (smallest first)
        for k0 in range(g0, tl.minimum(g0 + GROUP, E), BLOCK_K):
            ks = k0 + rk
            a = tl.load(
                q_rows + ks.to(tl.int64)[None, :] * sqe, mask=m_ok & (ks[None, :] < E), other=0.0
            )
            bt = tl.load(
                k_cols + ks.to(tl.int64)[:, None] * ske, mask=(ks[:, None] < E) & n_ok, other=0.0
            )
            a1, a2, a3, a4 = _slices(a * q_inv[:, None])
            b1, b2, b3, b4 = _slices(bt * k_inv[None, :])
            lo = tl.dot(a4, b1, lo)
            lo = tl.dot(a3, b2, lo)
            lo = tl.dot(a2, b3, lo)
            lo = tl.dot(a1, b4, lo)
            lo = tl.dot(a3, b1, lo)
            lo = tl.dot(a2, b2, lo)
            lo = tl.dot(a1, b3, lo)
            mid = tl.dot(a2, b1, mid)
            mid = tl.dot(a1, b2, mid)
            hi = tl.dot(a1, b1, hi)
        acc += hi.to(tl.float64) + (mid + lo).to(tl.float64)
    scale = 1.0 / tl.sqrt(tl.cast(E, tl.float64))  # E may come in as the constant 1
    acc = acc * (q_sigma.to(tl.float64)[:, None] * k_sigma.to(tl.float64)[None, :]) * scale
    out = s_ptr + bh.to(tl.int64) * L * L + rm.to(tl.int64)[:, None] * L + rn[None, :]
    tl.store(out, acc, mask=m_ok & n_ok)


@triton.jit
def _softmax_kernel(
    p_ptr,  # *fp32, [rows, L] contiguous: probabilities out
    s_ptr,  # *fp64, [rows, L] contiguous: scores in
    n_rows,  # B * H * L
    L,  # row length
    ROWS: tl.constexpr,  # rows per program
    BLOCK: tl.constexpr,  # power of two >= L
):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < L)
    at = rows[:, None] * L + cols[None, :]
    x = tl.load(s_ptr + at, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(p_ptr + at, (num / tl.sum(num, axis=1)[:, None]).to(tl.float32), mask=mask)


@triton.jit
def _pv_kernel(
    o_ptr,  # *fp32, [B, H, L, E] contiguous
    p_ptr,  # *fp32, [B*H, L, L] contiguous: probabilities
    v_ptr,  # *fp32, [B, H, L, E], any strides
    H,  # heads
    L,  # sequence length, the reduced length here
    E,  # embedding dimension
    svb, svh, svl, sve,  # strides of v
    BLOCK_M: tl.constexpr,  # query rows per program
    BLOCK_N: tl.constexpr,  # embedding columns per program
    BLOCK_K: tl.constexpr,  # keys per step
):  # fmt: skip
    tiles_n = tl.cdiv(E, BLOCK_N)
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh - b * H
    rm = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    p_rows = p_ptr + bh.to(tl.int64) * L * L + rm.to(tl.int64)[:, None] * L
    v_base = v_ptr + b.to(tl.int64) * svb + h.to(tl.int64) * svh
    v_cols = v_base + rn.to(tl.int64)[None, :] * sve
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float64)
    for k0 in range(0, L, BLOCK_K):
        ks = k0 + rk
        a = tl.load(p_rows + ks[None, :], mask=(rm[:, None] < L) & (ks[None, :] < L), other=0.0)
        vt = tl.load(
            v_cols + ks.to(tl.int64)[:, None] * svl,
            mask=(ks[:, None] < L) & (rn[None, :] < E),
            other=0.0,
        )
        a1, a2, a3 = _pieces(a)
        b1, b2, b3 = _pieces(vt)
        # One fresh accumulator per key block, smallest products first, then into the fp64
        # total (the conversion keeps Triton from folding the add into the dot chain).
        part = tl.dot(a3, b1)
        part = tl.dot(a2, b2, part)
        part = tl.dot(a1, b3, part)
        part = tl.dot(a2, b1, part)
        part = tl.dot(a1, b2, part)
        part = tl.dot(a1, b1, part)
        acc += part.to(tl.float64)
    out = o_ptr + bh.to(tl.int64) * L * E + rm.to(tl.int64)[:, None] * E + rn[None, :]
    tl.store(out, acc.to(tl.float32), mask=(rm[:, None] < L) & (rn[None, :] < E))


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_97_scaleddotproductattention(Q, K, V):
    n_b, n_h, n_l, n_e = Q.shape
    dev = Q.device
    out = torch.empty((n_b, n_h, n_l, n_e), dtype=torch.float32, device=dev)
    if out.numel() == 0:
        return out
    cfg = _config(n_b * n_h, n_l, n_e)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    launch = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
    n_bh = n_b * n_h
    scores = torch.empty((n_bh, n_l, n_l), dtype=torch.float64, device=dev)
    _scores_kernel[(triton.cdiv(n_l, bm) * triton.cdiv(n_l, bn), n_bh)](
        scores, Q, K, n_h, n_l, n_e,
        Q.stride(0), Q.stride(1), Q.stride(2), Q.stride(3),
        K.stride(0), K.stride(1), K.stride(2), K.stride(3),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP=GROUP, **launch,
    )  # fmt: skip
    probs = torch.empty((n_bh, n_l, n_l), dtype=torch.float32, device=dev)
    block = triton.next_power_of_2(n_l)
    rows = max(1, _ROW_TILE // block)
    _softmax_kernel[(triton.cdiv(n_bh * n_l, rows),)](
        probs, scores, n_bh * n_l, n_l, ROWS=rows, BLOCK=block, num_warps=4
    )
    del scores
    pbn, pbk = cfg["PV_BLOCK_N"], cfg["PV_BLOCK_K"]
    _pv_kernel[(triton.cdiv(n_l, bm) * triton.cdiv(n_e, pbn), n_bh)](
        out, probs, V, n_h, n_l, n_e,
        V.stride(0), V.stride(1), V.stride(2), V.stride(3),
        BLOCK_M=bm, BLOCK_N=pbn, BLOCK_K=pbk, **launch,
    )  # fmt: skip
    return out
