"""Scaled dot-product attention, fp32: O = softmax(Q K^T / sqrt(E)) V over Q, K, V [B, H, L, E].

No tensor cores and no TF32: IEEE arithmetic on the CUDA cores, the safe twin of a_pieces (same
three kernels): the scores in fp64, P V as exact fp32 FMAs (tl.dot input_precision="ieee").

Three kernels:
1. `_scores_kernel`: S = (Q K^T) / sqrt(E) per (batch, head) in fp64, [BLOCK_M, BLOCK_N] tiles over
   the L x L scores, one fp64 outer product per column of E (1024 at the problem's size).
2. `_softmax_kernel`: each fp64 score row (L <= 512 wide, one block) to exp(s - max) / sum in
   fp64, stored as fp32 probabilities.
3. `_pv_kernel`: O = P V, [BLOCK_M, BLOCK_N] tiles over L x E, the K loop over the L keys.
Why not one fused flash kernel: E reaches 1024, so a query block's Q rows and its output
accumulator ([BLOCK_M, E] each) do not fit in registers, and an online softmax would rescale that
accumulator for every key block; with L <= 512 the scores of one (batch, head) are at most 2 MB.

What was wrong before (rejected on the H100, `constant` values, L = 511, E = 86, |err| 9.4e-5
against a bound of 9.3e-5 on one row): the code meant a fresh fp32 partial per K block added into
the running total, but it wrote `acc += tl.dot(a, b)`, and Triton's combine pass folds
`acc + dot(a, b, 0)` into `dot(a, b, acc)` (checked in the sm_90 TTGIR): each score was one fp32
FMA chain through all of E, and each output one chain through all L keys. In the `constant`
family a score is 86 equal products c * d, so the chain's roundings pile up in one direction:
several ulps of |s|, and |s| = sqrt(86) |c d| reaches ~200, where an ulp is 1.5e-5. The softmax
turns an absolute score error d into a relative probability error of d, so the output of a row
whose top keys carry different V moved by ~1e-4. A numpy emulation of that order (one FMA chain,
fp32 softmax with ex2) at the failing shape put 1-5 rows past the bound in 3 of 4 draws (max
1.16-1.44x the bound); fp32 scores rounded once would still carry 0.04-0.07x of it, the chain ~1x.

Now:
- the scores are exact products summed in fp64 (each fp32 q and k is exact in fp64, the FMA
  rounds at 2^-53), scaled by 1/sqrt(E) in fp64 and stored in fp64: no fp32 rounding of a score
  anywhere, so the exponent's error is ~1e-13 however large |s| is. The loop is an explicit outer
  product per column of E (no tl.dot on fp64 and no broadcast-multiply-reduce, which Triton may
  turn into a dot);
- the softmax is fp64 throughout (max subtracted, libdevice exp, sum, divide); p is rounded to
  fp32 once;
- P V: a fresh fp32 FMA chain per block of BLOCK_K keys (tl.dot "ieee", zero accumulator), each
  converted to fp64 before it joins the running total; the conversion keeps Triton from folding
  the add into the dot, so no fp32 chain is longer than BLOCK_K terms. Its error is a few fp32
  ulps of sum_j p_j |v_j| (the tolerance's atol is 1e-5 * log2 L), and a one-hot row (p = 1
  exactly, as `large` values give) returns its V row exactly.
The same emulation of this order puts the failing shape's worst row at 0.01x the bound.

Cost: the scores are E fp64 FMAs per entry (550 GFLOP at the problem's size, about twice the
fp32 FMA time); P V as before. The scores (fp64) and the probabilities (fp32) take 12 bytes per
entry of scratch: 3.2 GB at the problem's size.

Special values are outside the domain (no NaN/inf families). Any strides of Q, K and V are
honoured (the "leading" and transposed layouts included), with int64 offsets; the output is
contiguous.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# BLOCK_* tile the scores kernel (BLOCK_K: columns of E unrolled per loop step), PV_* the P V
# kernel (PV_BLOCK_K: keys per fp32 chain); BLOCK_M and the launch options are shared.
TUNE_SPACE = {
    "BLOCK_M": [32, 64],
    "BLOCK_N": [64, 128],
    "BLOCK_K": [4, 8],
    "PV_BLOCK_N": [32, 64],
    "PV_BLOCK_K": [16, 32],
    "num_warps": [4, 8],
    "num_stages": [2, 3],
}
DEFAULT_CONFIG = {
    "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 8, "PV_BLOCK_N": 64, "PV_BLOCK_K": 16,
    "num_warps": 4, "num_stages": 3,
}  # fmt: skip
TUNED: dict[str, dict[str, int]] = {}

_ROW_TILE = 2048  # score entries each softmax program holds, at least


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
    BLOCK_K: tl.constexpr,  # embedding columns unrolled per loop step
):  # fmt: skip
    tiles_n = tl.cdiv(L, BLOCK_N)
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh - b * H
    rm = (pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    q_base = q_ptr + b.to(tl.int64) * sqb + h.to(tl.int64) * sqh
    k_base = k_ptr + b.to(tl.int64) * skb + h.to(tl.int64) * skh
    q_rows = q_base + rm.to(tl.int64) * sql  # [BLOCK_M]
    k_rows = k_base + rn.to(tl.int64) * skl  # [BLOCK_N]
    m_ok = rm < L
    n_ok = rn < L
    # The fp64 total starts as a zero product of zeros (E * 0.0 keeps it from folding away):
    # Triton then gives it the register-blocked layout of an FMA dot (a 4 x 4 patch a thread),
    # which the outer products below keep. From tl.zeros it took the default layout, one
    # column of 32 rows a thread (33 loads for 32 FMAs), and ptxas spilled 5 KB a thread.
    zero_a = tl.zeros((BLOCK_M, 16), dtype=tl.float32) + E * 0.0
    zero_b = tl.zeros((16, BLOCK_N), dtype=tl.float32) + E * 0.0
    acc = tl.dot(zero_a, zero_b, input_precision="ieee").to(tl.float64)
    for k0 in range(0, E, BLOCK_K):
        for kk in tl.static_range(BLOCK_K):
            e = k0 + kk
            qa = tl.load(q_rows + e.to(tl.int64) * sqe, mask=m_ok & (e < E), other=0.0)
            kb = tl.load(k_rows + e.to(tl.int64) * ske, mask=n_ok & (e < E), other=0.0)
            # fp32 x fp32 is exact in fp64; one rounding (2^-53) per term.
            acc += qa.to(tl.float64)[:, None] * kb.to(tl.float64)[None, :]
    scale = 1.0 / tl.sqrt(tl.cast(E, tl.float64))  # E may come in as the constant 1
    out = s_ptr + bh.to(tl.int64) * L * L + rm.to(tl.int64)[:, None] * L + rn[None, :]
    tl.store(out, acc * scale, mask=m_ok[:, None] & n_ok[None, :])


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
    BLOCK_K: tl.constexpr,  # keys per fp32 chain
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
        part = tl.dot(a, vt, input_precision="ieee")  # a fresh chain of BLOCK_K FMAs
        acc += part.to(tl.float64)  # converted first: no fold into the dot
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
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, **launch,
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
