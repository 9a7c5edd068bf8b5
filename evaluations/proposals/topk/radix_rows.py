"""Top-k: the shipped kernel (evaluations/topk/20261205-033417-agent-5842, r01-c01) with its
chunked radix path taking every row past LONG_FROM = 16384 columns (the prefill rows of 32768
too, not only the decode row), no zero-fill launch before it, a small register tile for the
last program's ranking, and one-warp programs for rows of 256 columns or fewer.

What changed, and why (times are the shipped kernel's on the H200, graph-timed, L2 cold):
- 64x32768 k=2048 (117.2 us, 0.84x eager's 98.2) ran the row path: 64 programs on 132 SMs,
  each holding 32768 keys at 16 warps (254 spilled registers, so every one of the ~31 search
  counts reads local memory). Chunked, it is 512 programs of 4096 columns; x (8 MB) is read
  three times, once from DRAM (~2 us at 4.3 TB/s) and twice from L2 (8 MB fits its ~60 MB),
  with ~30 keys a row sharing the k-th key's top 16 bits (normal scores) for the row's last
  program to rank. Aim: under 40 us, launch- and latency-bound, not the 2 us byte floor.
- The four launches of a long row (a zero fill of the histograms and counters, two byte
  histograms, the split) are three: the top-byte histogram of each chunk is stored, not added,
  into a per-chunk slot (nothing to zero), and that launch's chunk 0 zeroes the row's second-
  byte histogram and counters for the launches after it. The second-byte pass sums the row's
  chunk histograms (32 x 256 int32, 32 KB from L2, at 1x131072) to find the top byte; its
  chunk 0 leaves that byte and the slots still to fill for the split, which then reads one
  256-bin histogram, not two. Aim at 1x131072 (34.5 us): one launch and its gap fewer, ~3 us.
- The row's last program ranks its candidates (~100 at 1x131072, ~30 at 64x32768) in a 512-
  lane tile when they fit, not always 4096: each of the 7 digit steps and the final prefix
  sums then work over 2 lanes a thread instead of 16. 4096 lanes, and the passes over the
  buffer past that (ties), are kept for more candidates.
- Rows of 256 columns or fewer (Qwen3-235B-A22B's router: 4096 rows of 128 experts, k=8)
  run one warp a program: each of the ~31 search counts is then a warp shuffle, not a shuffle
  and a shared-memory merge behind a barrier, and 4096 programs of one warp fit the SMs at
  once. The shipped kernel ran 4 warps there (1 key a thread) and was never timed at it.
- Kept: the row path (r03's binary search in registers) for rows up to LONG_FROM (128x8192
  k=512, 22.9 us, 2.89x eager, untouched), keys exact (fp32 bit order), the tie rule (all keys
  above the k-th, then those equal to it while slots remain), any order, int32 indices, any
  strides, int64 row offsets, the flat grid (chunk fastest) that runs 65600 rows.

Bytes a call must move (x once, indices once) and the flops counted (one compare a key):
1x131072 0.53 MB (0.12 us at 4.3 TB/s), 64x32768 8.9 MB (2.1 us), 128x8192 4.5 MB (1.0 us),
4096x128 2.2 MB (0.5 us); 0.13 to 2.1 Mflop, nothing. Every shape here is bound by launches and
the chain of dependent steps in a program (counts, atomics, the last program's ranking), not
bytes: the aim is fewer launches and shorter chains, not the byte floor.

Workspace per long row: the chunk histograms (chunks x 256 int32: 9 KB at 33000 columns,
605 MB for the limit case's 65600 rows, where the shipped fill was 135 MB), the second-byte
histogram and 8 counters, and the candidates' keys and columns (2 x N int32) as before.

Indices come in no fixed order: the answer is a set.
"""

import torch
import triton
import triton.language as tl

LONG_FROM = 16384  # longer rows are cut into chunks: 32 keys a thread at 16 warps is the most
FIN = tl.constexpr(4096)  # candidates the last program selects among in registers
CHUNK = 4096  # columns a program of a long row takes
SMALL = 512  # candidates the last program ranks in a small tile (~100 at 1x131072)
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
def _place(n, CHUNK: tl.constexpr):
    """(row, chunk) of this program of the flat long-row grid: the chunks of a row in turn."""
    chunks = tl.cdiv(n, CHUNK)
    pid = tl.program_id(0)
    return (pid // chunks).to(tl.int64), pid % chunks


@triton.jit
def _top_kernel(
    part_ptr,  # *int32 [B, chunks, 256]: each chunk's top-byte histogram, stored whole
    hist_ptr,  # *int32 [B, 256]: the row's second-byte histogram, zeroed here
    cnt_ptr,  # *int32 [B, 8]: the row's counters, zeroed here
    x_ptr,
    n,
    stride_xm,
    stride_xn,
    CHUNK: tl.constexpr,
):
    """Each chunk's histogram of the keys' top byte, in a slot of its own: no atomics, so no
    buffer to zero before this launch. Chunk 0 zeroes what the next two launches add into."""
    row, chunk = _place(n, CHUNK)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    u = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn) ^ LOWEST
    bins = tl.arange(0, 256)
    h = tl.histogram((u >> 24) & 255, 256, mask=ok)
    tl.store(part_ptr + (row * tl.cdiv(n, CHUNK) + chunk) * 256 + bins, h)
    if chunk == 0:
        tl.store(hist_ptr + row * 256 + bins, tl.zeros((256,), dtype=tl.int32))
        slots = tl.arange(0, 8)
        tl.store(cnt_ptr + row * 8 + slots, tl.zeros((8,), dtype=tl.int32))


@triton.jit
def _second_kernel(
    part_ptr,
    hist_ptr,
    cnt_ptr,
    x_ptr,
    n,
    k,
    stride_xm,
    stride_xn,
    CHUNK: tl.constexpr,
    PARTS: tl.constexpr,  # chunk histograms summed a step: a power of two, at most 32
):
    """The second byte's histogram of the keys whose top byte is the k-th largest key's, added
    into the row's. Each program sums the row's chunk histograms to find that byte; chunk 0
    leaves it (counter 3) and the slots still to fill among keys with it (counter 4)."""
    row, chunk = _place(n, CHUNK)
    chunks = tl.cdiv(n, CHUNK)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    u = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn) ^ LOWEST
    bins = tl.arange(0, 256)
    parts = tl.arange(0, PARTS)
    total = tl.zeros((256,), dtype=tl.int32)
    part_row = part_ptr + row * chunks * 256
    for start in range(0, chunks, PARTS):
        c = start + parts
        tile = tl.load(
            part_row + c[:, None] * 256 + bins[None, :], mask=c[:, None] < chunks, other=0
        )
        total += tl.sum(tile, axis=0)
    d0, rem = _pick(total, k)
    if chunk == 0:
        tl.store(cnt_ptr + row * 8 + 3, d0)
        tl.store(cnt_ptr + row * 8 + 4, rem)
    h = tl.histogram((u >> 16) & 255, 256, mask=ok & (((u >> 24) & 255) == d0))
    tl.atomic_add(hist_ptr + row * 256 + bins, h, mask=h > 0)


@triton.jit
def _rank(i_out, ckey, cidx, m, rem, LANES: tl.constexpr):
    """The rem largest of the m candidates (m <= LANES), ranked in registers, written at i_out."""
    j = tl.arange(0, LANES)
    live = j < m
    ck = tl.load(ckey + j, mask=live, other=LOWEST, cache_modifier=".cg")
    ci = tl.load(cidx + j, mask=live, other=0, cache_modifier=".cg")
    _write(i_out, ck, ci, _kth(ck, live, rem), rem)


@triton.jit
def _split_kernel(
    idx_ptr,  # *int32 [B, k]
    x_ptr,  # *fp32 [B, N], any strides
    hist_ptr,  # *int32 [B, 256]: the second-byte histograms, complete
    cnt_ptr,  # *int32 [B, 8]: slots taken above, candidates, programs done, top byte, rem
    ckey_ptr,  # *int32 [B, N]: candidates' keys
    cidx_ptr,  # *int32 [B, N]: candidates' columns
    n,
    k,
    stride_xm,
    stride_xn,
    stride_im,
    CHUNK: tl.constexpr,
    SMALL: tl.constexpr,  # candidates the last program ranks in its small tile
):
    """Keys above the k-th key's top 16 bits go to the answer, at slots one atomic add
    reserves per program; keys sharing them are candidates. The row's last program (an
    acq_rel ticket, after a barrier) takes the rem largest candidates."""
    row, chunk = _place(n, CHUNK)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    cnt = cnt_ptr + row * 8
    d1, rem = _pick(tl.load(hist_ptr + row * 256 + tl.arange(0, 256)), tl.load(cnt + 4))
    top = (tl.load(cnt + 3) << 8) | d1
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
        if m <= SMALL:
            _rank(i_row + above, ckey, cidx, m, rem, SMALL)
        elif m <= FIN:
            _rank(i_row + above, ckey, cidx, m, rem, FIN)
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
    # One warp up to 256 columns: the search's counts then merge by shuffles alone.
    return 16 if block >= 16384 else 8 if block >= 4096 else 4 if block > 256 else 1


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    b, n = x.shape
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} outside [0, N={n}]")
    idx = torch.empty((b, k), dtype=torch.int32, device=x.device)
    if idx.numel() == 0:
        return idx
    if n <= LONG_FROM:
        block = triton.next_power_of_2(n)
        _row_kernel[(b,)](
            idx, x, n, k, x.stride(0), x.stride(1), idx.stride(0),
            BLOCK=block, num_warps=_warps(block),
        )  # fmt: skip
        return idx
    chunks = triton.cdiv(n, CHUNK)
    grid = (chunks * b,)
    # One allocation, nothing to fill: the first launch writes or zeroes every word the later
    # ones read before writing (the candidates' buffers are read only where written).
    parts, rows = b * chunks * 256, b * (256 + 8)
    work = torch.empty(parts + rows + 2 * b * n, dtype=torch.int32, device=x.device)
    part, hist = work[:parts], work[parts : parts + b * 256]
    cnt = work[parts + b * 256 : parts + rows]
    ckey, cidx = work[parts + rows :].view(2, b * n)
    _top_kernel[grid](part, hist, cnt, x, n, x.stride(0), x.stride(1), CHUNK=CHUNK, num_warps=8)
    _second_kernel[grid](
        part, hist, cnt, x, n, k, x.stride(0), x.stride(1),
        CHUNK=CHUNK, PARTS=min(triton.next_power_of_2(chunks), 32), num_warps=8,
    )  # fmt: skip
    _split_kernel[grid](
        idx, x, hist, cnt, ckey, cidx, n, k, x.stride(0), x.stride(1), idx.stride(0),
        CHUNK=CHUNK, SMALL=SMALL, num_warps=8,
    )  # fmt: skip
    return idx
