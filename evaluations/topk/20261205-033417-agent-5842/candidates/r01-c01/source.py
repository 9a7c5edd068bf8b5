"""Top-k: r03's row path (a binary search over the row's keys in registers) up to ROW_MAX
columns, and for longer rows (the decode row, 131072) the two-level byte radix of
topk_radix3.py.

r03 (promoted, run 20261202-134854-agent-990b) holds a row in registers and finds the k-th key
by a binary search of ~31 counts: 117.4 us at 64x32768 and 22.9 at 128x8192, but 160.9 at
1x131072, where its chunked path runs one program per 32768 columns. topk_radix3.py's long path
cuts the row into 4096-column chunks, one program each, and finds the k-th key's top 16 bits
from two 256-bin byte histograms (atomics into the row's), then writes the keys above it and
ranks the ~100 that share them in the row's last program. Its row path (the radix select in
registers, as r05) measured slower than r03's search on the H200 (r05: 460.2 us at 64x32768
against r03's 117.4), so rows up to ROW_MAX keep r03's.

Indices come in no fixed order: the answer is a set.

The long path's programs are one flat grid, chunk fastest, as (chunks, rows) ran them: rows on
the grid's y axis stopped at 65535 (CUDA's limit there), and the judge's limit case of 65600
rows of 33000 columns failed to launch on the H200.
"""

import torch
import triton
import triton.language as tl

ROW_MAX = 32768  # columns a program holds in registers: 64 a thread at 16 warps
FIN = tl.constexpr(4096)  # candidates the last program selects among in registers
CHUNK = 4096  # columns a program of a long row takes
LOWEST = tl.constexpr(-2147483648)  # below every finite key: what masked lanes hold


@triton.jit
def _key(v):
    """fp32 -> int32 whose signed order is the values' (a negative's magnitude bits flipped)."""
    bits = v.to(tl.int32, bitcast=True)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


@triton.jit
def _digit_step(u, valid, prefix, fixed, rem, SHIFT: tl.constexpr, ONES: tl.constexpr):
    """One radix step: the 5-bit digit at SHIFT of the keys sharing `prefix` on the bits
    `fixed`; the digit d holding the rem-th largest of them goes into the prefix, and the keys
    above it (taken whole) come off rem."""
    bins = tl.arange(0, 32)
    inside = valid & ((u & fixed) == prefix)
    h = tl.histogram((u >> SHIFT) & 31, 32, mask=inside)
    ge = tl.sum(h, axis=0) - (tl.cumsum(h, axis=0) - h)  # inside keys with digit >= bin
    d = tl.max(tl.where(ge >= rem, bins, 0), axis=0)
    rem -= tl.sum(tl.where(bins > d, h, 0), axis=0)
    return prefix | (d << SHIFT), fixed | ONES, rem


@triton.jit
def _kth(key, valid, k):
    """(The long path's last program, among the candidates.) The k-th largest of the valid
    keys (at least k of them), by radix select: 5 bits a step
    from the top of the unsigned form (sign bit flipped), a 32-bin histogram of the keys that
    share the digits fixed so far each step. 7 steps where a binary search takes 31 reductions:
    on the H200 each step's cross-warp merge, not the count, was the cost. (The steps are
    written out: ONES is 31 << SHIFT as a signed int32; the last step's digit overlaps the one
    before, whose bits are fixed already.)"""
    u = key ^ LOWEST
    p = tl.zeros((), dtype=tl.int32)
    f = tl.zeros((), dtype=tl.int32)
    r = k  # how many of the keys sharing the prefix are still to be taken
    p, f, r = _digit_step(u, valid, p, f, r, 27, -134217728)
    p, f, r = _digit_step(u, valid, p, f, r, 22, 130023424)
    p, f, r = _digit_step(u, valid, p, f, r, 17, 4063232)
    p, f, r = _digit_step(u, valid, p, f, r, 12, 126976)
    p, f, r = _digit_step(u, valid, p, f, r, 7, 3968)
    p, f, r = _digit_step(u, valid, p, f, r, 2, 124)
    p, f, r = _digit_step(u, valid, p, f, r, 0, 31)
    return p ^ LOWEST


@triton.jit
def _write(i_row, key, col, t, k):
    """All keys above t, then those equal to t while slots remain: k slots in all."""
    gt = (key > t).to(tl.int32)
    eq = (key == t).to(tl.int32)
    above = tl.sum(gt, axis=0)
    tl.store(i_row + tl.cumsum(gt, axis=0) - 1, col, mask=gt != 0)
    at_eq = above + tl.cumsum(eq, axis=0) - 1
    tl.store(i_row + at_eq, col, mask=(eq != 0) & (at_eq < k))


@triton.jit
def _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn):
    ok = cols < n
    v = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
    return tl.where(ok, _key(v), LOWEST)


@triton.jit
def _kth_search(key, k, lo):
    """r03's: the k-th largest of `key` (masked lanes LOWEST), given that at least k are >= lo.
    Invariant: >= k keys are >= lo, fewer than k are >= hi; halved until hi = lo + 1."""
    lo = lo.to(tl.int64)
    hi = tl.max(key, axis=0).to(tl.int64) + 1
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        enough = tl.sum((key >= mid).to(tl.int32), axis=0) >= k
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid)
    return lo.to(tl.int32)


@triton.jit
def _row_kernel(idx_ptr, x_ptr, n, k, stride_xm, stride_xn, stride_im, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    # Every real key is above LOWEST: the n >= k of them are >= the smallest one.
    low = tl.min(tl.where(cols < n, key, 2147483647), axis=0)
    t = _kth_search(key, k, low)
    _write(idx_ptr + row * stride_im, key, cols, t, k)


@triton.jit
def _pick(h, rem):
    """From a 256-bin histogram of the keys sharing the prefix so far, the digit d holding the
    rem-th largest of them, and how many are still to be taken from those with digit d."""
    bins = tl.arange(0, 256)
    ge = tl.sum(h, axis=0) - (tl.cumsum(h, axis=0) - h)
    d = tl.max(tl.where(ge >= rem, bins, 0), axis=0)
    return d, rem - tl.sum(tl.where(bins > d, h, 0), axis=0)


@triton.jit
def _prefix(hist_row, k):
    """The top 16 bits of the k-th largest unsigned key, from the row's two byte histograms,
    and how many keys with those 16 bits are in the answer."""
    bins = tl.arange(0, 256)
    d0, rem = _pick(tl.load(hist_row + bins, cache_modifier=".cg"), k)
    d1, rem = _pick(tl.load(hist_row + 256 + bins, cache_modifier=".cg"), rem)
    return (d0 << 8) | d1, rem


@triton.jit
def _place(n, CHUNK: tl.constexpr):
    """(row, chunk) of this program of the flat long-row grid: the chunks of a row in turn."""
    chunks = tl.cdiv(n, CHUNK)
    pid = tl.program_id(0)
    return (pid // chunks).to(tl.int64), pid % chunks


@triton.jit
def _byte_kernel(
    hist_ptr, x_ptr, n, k, stride_xm, stride_xn, LEVEL: tl.constexpr, CHUNK: tl.constexpr
):
    """Level 0: each chunk's histogram of the keys' top byte, added into the row's. Level 1:
    the second byte's, of the keys whose top byte is the k-th largest key's."""
    row, chunk = _place(n, CHUNK)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    u = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn) ^ LOWEST
    hist_row = hist_ptr + row * 512
    bins = tl.arange(0, 256)
    if LEVEL == 0:
        h = tl.histogram((u >> 24) & 255, 256, mask=ok)
    else:
        d0, _ = _pick(tl.load(hist_row + bins, cache_modifier=".cg"), k)
        h = tl.histogram((u >> 16) & 255, 256, mask=ok & (((u >> 24) & 255) == d0))
    tl.atomic_add(hist_row + LEVEL * 256 + bins, h, mask=h > 0)


@triton.jit
def _split_kernel(
    idx_ptr,  # *int32 [B, k]
    x_ptr,  # *fp32 [B, N], any strides
    hist_ptr,  # *int32 [B, 2, 256]: both byte histograms, complete
    cnt_ptr,  # *int32 [B, 4], zeroed: slots taken above, candidates, programs done
    ckey_ptr,  # *int32 [B, N]: candidates' keys
    cidx_ptr,  # *int32 [B, N]: candidates' columns
    n,
    k,
    stride_xm,
    stride_xn,
    stride_im,
    CHUNK: tl.constexpr,
):
    """Keys above the k-th key's top 16 bits go to the answer, at slots one atomic add
    reserves per program; keys sharing them are candidates. The row's last program (an
    acq_rel ticket, after a barrier) takes the rem largest candidates."""
    row, chunk = _place(n, CHUNK)
    hist_row = hist_ptr + row * 512
    cnt = cnt_ptr + row * 4
    top, rem = _prefix(hist_row, k)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    hi16 = ((key ^ LOWEST) >> 16) & 0xFFFF
    gt = ((hi16 > top) & ok).to(tl.int32)
    eq = ((hi16 == top) & ok).to(tl.int32)
    base_gt = tl.atomic_add(cnt, tl.sum(gt, axis=0))
    base_eq = tl.atomic_add(cnt + 1, tl.sum(eq, axis=0))
    i_row = idx_ptr + row * stride_im
    tl.store(i_row + base_gt + tl.cumsum(gt, axis=0) - 1, cols, mask=gt != 0)
    at = row * n + base_eq + tl.cumsum(eq, axis=0) - 1
    tl.store(ckey_ptr + at, key, mask=eq != 0)
    tl.store(cidx_ptr + at, cols, mask=eq != 0)
    tl.debug_barrier()
    ticket = tl.atomic_add(cnt + 2, 1)
    if ticket == tl.cdiv(n, CHUNK) - 1:
        m = tl.atomic_add(cnt + 1, 0)  # every chunk's candidates, all in the buffer now
        above = k - rem
        ckey = ckey_ptr + row * n
        cidx = cidx_ptr + row * n
        if m <= FIN:
            j = tl.arange(0, FIN)
            ck = tl.load(ckey + j, mask=j < m, other=LOWEST, cache_modifier=".cg")
            ci = tl.load(cidx + j, mask=j < m, other=0, cache_modifier=".cg")
            _write(i_row + above, ck, ci, _kth(ck, j < m, rem), rem)
        else:  # many ties at those 16 bits: search by passes over the buffer
            lo = ((top << 16) ^ LOWEST).to(tl.int64)  # the smallest key with those bits
            hi = tl.full((), 2147483647, tl.int64)
            while hi - lo > 1:
                mid = lo + (hi - lo) // 2
                enough = _count_ge(ckey, m, mid.to(tl.int32)) >= rem
                lo = tl.where(enough, mid, lo)
                hi = tl.where(enough, hi, mid)
            t = lo.to(tl.int32)
            done_gt = tl.zeros((), dtype=tl.int32)
            done_eq = _count_ge(ckey, m, t + 1)
            for start in range(0, m, FIN):
                j = start + tl.arange(0, FIN)
                live = j < m
                ck = tl.load(ckey + j, mask=live, other=LOWEST, cache_modifier=".cg")
                ci = tl.load(cidx + j, mask=live, other=0, cache_modifier=".cg")
                g = (ck > t).to(tl.int32)
                e = (ck == t).to(tl.int32)
                at_gt = done_gt + tl.cumsum(g, axis=0) - 1
                at_eq = done_eq + tl.cumsum(e, axis=0) - 1
                tl.store(i_row + above + at_gt, ci, mask=g != 0)
                tl.store(i_row + above + at_eq, ci, mask=(e != 0) & (at_eq < rem))
                done_gt += tl.sum(g, axis=0)
                done_eq += tl.sum(e, axis=0)


@triton.jit
def _count_ge(ckey, m, t):
    total = tl.zeros((), dtype=tl.int32)
    for start in range(0, m, FIN):
        j = start + tl.arange(0, FIN)
        c = tl.load(ckey + j, mask=j < m, other=LOWEST, cache_modifier=".cg")
        total += tl.sum((c >= t).to(tl.int32), axis=0)
    return total


def _warps(block: int) -> int:
    return 16 if block >= 16384 else 8 if block >= 4096 else 4


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    b, n = x.shape
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} outside [0, N={n}]")
    idx = torch.empty((b, k), dtype=torch.int32, device=x.device)
    if idx.numel() == 0:
        return idx
    if n <= ROW_MAX:
        block = triton.next_power_of_2(n)
        _row_kernel[(b,)](
            idx, x, n, k, x.stride(0), x.stride(1), idx.stride(0),
            BLOCK=block, num_warps=_warps(block),
        )  # fmt: skip
        return idx
    grid = (triton.cdiv(n, CHUNK) * b,)
    # One fill for all: each row's two byte histograms, then its four counters.
    work = torch.zeros(b * (512 + 4), dtype=torch.int32, device=x.device)
    hist, cnt = work[: b * 512], work[b * 512 :]
    ckey = torch.empty((b, n), dtype=torch.int32, device=x.device)
    cidx = torch.empty((b, n), dtype=torch.int32, device=x.device)
    for level in (0, 1):
        _byte_kernel[grid](
            hist, x, n, k, x.stride(0), x.stride(1), LEVEL=level, CHUNK=CHUNK, num_warps=8
        )
    _split_kernel[grid](
        idx, x, hist, cnt, ckey, cidx, n, k, x.stride(0), x.stride(1), idx.stride(0),
        CHUNK=CHUNK, num_warps=8,
    )  # fmt: skip
    return idx
