"""Top-k as a threshold search over a row held in registers; a long row by chunks first.

The seed reads its row from memory 34 times, one program per row. Here the row's keys (fp32 bit
patterns whose signed order is the values', a negative's magnitude bits flipped) are loaded once
into registers, and the k-th largest key is found there by a radix select (7 histograms of 5
bits), then one pass writes the indices above the k-th key and as many equal to it as slots
remain (prefix sums give each its slot).

A row up to ROW_MAX columns is one program. A longer one (the decode row, 131072) goes in two
launches over chunks of ROW_MAX:

1. `_chunk_kernel`: each chunk finds its own k-th largest key t_c by the same search (the
   lowest key if the chunk is shorter than k).
2. `_gather_kernel`: the row's k-th largest key is at least max_c t_c (that chunk alone has k
   keys at or above it), so only keys >= T = max_c t_c can be in the answer: each chunk
   appends those to the row's candidate buffer (one atomic add reserves its slots), and the
   row's last program to finish (an acq_rel ticket, after a barrier) selects among them:
   in registers when they fit FIN (normal data: ~6% of the row), else by passes over the
   buffer. Its loads bypass L1 (.cg): the buffer was written by other SMs.

Indices come in no fixed order: the answer is a set.
"""

import torch
import triton
import triton.language as tl

ROW_MAX = 32768  # columns a program holds in registers: 64 a thread at 16 warps
FIN = tl.constexpr(16384)  # candidates the last program selects among in registers
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
    """The k-th largest of the valid keys (at least k of them), by radix select: 5 bits a step
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
def _row_kernel(idx_ptr, x_ptr, n, k, stride_xm, stride_xn, stride_im, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    t = _kth(key, cols < n, k)
    _write(idx_ptr + row * stride_im, key, cols, t, k)


@triton.jit
def _chunk_kernel(thr_ptr, x_ptr, n, k, stride_xm, stride_xn, CHUNK: tl.constexpr):
    row = tl.program_id(1).to(tl.int64)
    c = tl.program_id(0)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    live = tl.minimum(n - c * CHUNK, CHUNK)
    if live < k:  # the whole chunk may be in the answer
        t = tl.full((), LOWEST, tl.int32)
    else:
        t = _kth(key, cols < n, k)
    tl.store(thr_ptr + row * tl.num_programs(0) + c, t)


@triton.jit
def _count_ge(ckey, m, t):
    total = tl.zeros((), dtype=tl.int32)
    for start in range(0, m, FIN):
        j = start + tl.arange(0, FIN)
        c = tl.load(ckey + j, mask=j < m, other=LOWEST, cache_modifier=".cg")
        total += tl.sum((c >= t).to(tl.int32), axis=0)
    return total


@triton.jit
def _gather_kernel(
    idx_ptr,  # *int32 [B, k]
    x_ptr,  # *fp32 [B, N], any strides
    thr_ptr,  # *int32 [B, chunks]: each chunk's k-th key
    cnt_ptr,  # *int32 [B, 2], zeroed: candidates appended, programs done
    ckey_ptr,  # *int32 [B, N]: candidates' keys
    cidx_ptr,  # *int32 [B, N]: candidates' columns
    n,
    k,
    stride_xm,
    stride_xn,
    stride_im,
    CHUNK: tl.constexpr,
    CHUNKS: tl.constexpr,  # a power of two >= the chunk count
):
    row = tl.program_id(1).to(tl.int64)
    c = tl.program_id(0)
    n_chunks = tl.num_programs(0)
    cs = tl.arange(0, CHUNKS)
    thr = tl.load(thr_ptr + row * n_chunks + cs, mask=cs < n_chunks, other=LOWEST)
    floor = tl.max(thr, axis=0)
    cols = c * CHUNK + tl.arange(0, CHUNK)
    key = _load_keys(x_ptr, row, cols, n, stride_xm, stride_xn)
    hit = ((key >= floor) & (cols < n)).to(tl.int32)
    cnt = cnt_ptr + row * 2
    base = tl.atomic_add(cnt, tl.sum(hit, axis=0))
    at = row * n + base + tl.cumsum(hit, axis=0) - 1
    tl.store(ckey_ptr + at, key, mask=hit != 0)
    tl.store(cidx_ptr + at, cols, mask=hit != 0)
    tl.debug_barrier()
    ticket = tl.atomic_add(cnt + 1, 1)
    if ticket == n_chunks - 1:
        m = tl.atomic_add(cnt, 0)  # every chunk's candidates, all in the buffer now
        ckey = ckey_ptr + row * n
        cidx = cidx_ptr + row * n
        i_row = idx_ptr + row * stride_im
        if m <= FIN:
            j = tl.arange(0, FIN)
            ck = tl.load(ckey + j, mask=j < m, other=LOWEST, cache_modifier=".cg")
            ci = tl.load(cidx + j, mask=j < m, other=0, cache_modifier=".cg")
            _write(i_row, ck, ci, _kth(ck, j < m, k), k)
        else:  # many ties at the floor: search by passes over the buffer
            lo = floor.to(tl.int64)
            hi = tl.full((), 2147483647, tl.int64)
            while hi - lo > 1:
                mid = lo + (hi - lo) // 2
                enough = _count_ge(ckey, m, mid.to(tl.int32)) >= k
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
                gt = (ck > t).to(tl.int32)
                eq = (ck == t).to(tl.int32)
                at_gt = done_gt + tl.cumsum(gt, axis=0) - 1
                at_eq = done_eq + tl.cumsum(eq, axis=0) - 1
                tl.store(i_row + at_gt, ci, mask=gt != 0)
                tl.store(i_row + at_eq, ci, mask=(eq != 0) & (at_eq < k))
                done_gt += tl.sum(gt, axis=0)
                done_eq += tl.sum(eq, axis=0)


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
    chunks = triton.cdiv(n, ROW_MAX)
    thr = torch.empty((b, chunks), dtype=torch.int32, device=x.device)
    cnt = torch.zeros((b, 2), dtype=torch.int32, device=x.device)
    ckey = torch.empty((b, n), dtype=torch.int32, device=x.device)
    cidx = torch.empty((b, n), dtype=torch.int32, device=x.device)
    grid = (chunks, b)
    _chunk_kernel[grid](thr, x, n, k, x.stride(0), x.stride(1), CHUNK=ROW_MAX, num_warps=16)
    _gather_kernel[grid](
        idx, x, thr, cnt, ckey, cidx, n, k, x.stride(0), x.stride(1), idx.stride(0),
        CHUNK=ROW_MAX, CHUNKS=triton.next_power_of_2(chunks), num_warps=16,
    )  # fmt: skip
    return idx
