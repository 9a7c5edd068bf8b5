"""Top-k by a one-digit radix select spread over the row: several programs per row.

The seed runs one program per row and reads it 34 times: a 1-row decode call uses one SM. Here a
row is cut into chunks, one program each, in two launches:

1. `_hist_kernel`: each chunk's histogram of the top 12 bits of the order-preserving fp32 key
   (4096 digits), added into the row's histogram (atomics only for the digits it holds).
2. `_split_kernel`: each program finds, from the finished histogram, the digit d at which the
   count of keys >= d first reaches k. Its keys above d are in the answer whatever the rest
   is: their indices go straight to the output, at slots reserved by one atomic add per
   program. Its keys equal to d are candidates: appended to the row's candidate buffer the
   same way. The row's last program to finish (an atomic ticket) ranks the candidates: a
   binary search over the key's 20 low bits, in registers when they fit one block (normal
   data: about 2% of the row), else by passes over the buffer; it writes the candidates
   above the k-th key and as many equal to it as slots remain.

The ticket's atomic add is acquire-release, after a barrier of its program: every program's
stores into the buffer happen before the last one reads them, which reads them past L1 (.cg).
Outputs come in no fixed order (the slots go to the programs as they arrive): the answer is a
set.
"""

import torch
import triton
import triton.language as tl

N_DIGITS = 4096
DIGITS = tl.constexpr(N_DIGITS)  # the top 12 bits of a key
LOW_BITS = tl.constexpr(20)  # the bits a digit leaves
SPAN = tl.constexpr(1 << 20)  # the keys of one digit
FIN = tl.constexpr(4096)  # candidates ranked in registers


@triton.jit
def _key(v):
    """fp32 -> int32 whose signed order is the values' (a negative's magnitude bits flipped)."""
    bits = v.to(tl.int32, bitcast=True)
    return bits ^ ((bits >> 31) & 0x7FFFFFFF)


@triton.jit
def _digit(key):
    return (key >> LOW_BITS) + DIGITS // 2  # [-2048, 2047] -> [0, 4095]


@triton.jit
def _threshold(hist_row, n, k):
    """The digit d at which the count of keys with digit >= d first reaches k, and the count
    of keys with digit above d."""
    d = tl.arange(0, DIGITS)
    h = tl.load(hist_row + d, cache_modifier=".cg")
    ge = n - (tl.cumsum(h, axis=0) - h)  # keys with digit >= d
    top = tl.max(tl.where(ge >= k, d, 0), axis=0)
    above = tl.sum(tl.where(d > top, h, 0), axis=0)
    return top, above


@triton.jit
def _hist_kernel(x_ptr, hist_ptr, n, stride_xm, stride_xn, CHUNK: tl.constexpr):
    row = tl.program_id(1).to(tl.int64)
    cols = tl.program_id(0) * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    v = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
    h = tl.histogram(_digit(_key(v)), DIGITS, mask=ok)
    d = tl.arange(0, DIGITS)
    tl.atomic_add(hist_ptr + row * DIGITS + d, h, mask=h > 0)


@triton.jit
def _split_kernel(
    idx_ptr,  # *int32 [B, k]: the answer
    x_ptr,  # *fp32 [B, N], any strides
    hist_ptr,  # *int32 [B, DIGITS], complete
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
    row = tl.program_id(1).to(tl.int64)
    hist_row = hist_ptr + row * DIGITS
    cnt = cnt_ptr + row * 4
    top, above = _threshold(hist_row, n, k)
    cols = tl.program_id(0) * CHUNK + tl.arange(0, CHUNK)
    ok = cols < n
    v = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
    key = _key(v)
    dig = _digit(key)
    gt = ((dig > top) & ok).to(tl.int32)
    eq = ((dig == top) & ok).to(tl.int32)
    base_gt = tl.atomic_add(cnt, tl.sum(gt, axis=0))
    base_eq = tl.atomic_add(cnt + 1, tl.sum(eq, axis=0))
    i_row = idx_ptr + row * stride_im
    tl.store(i_row + base_gt + tl.cumsum(gt, axis=0) - 1, cols, mask=gt != 0)
    at = row * n + base_eq + tl.cumsum(eq, axis=0) - 1
    tl.store(ckey_ptr + at, key, mask=eq != 0)
    tl.store(cidx_ptr + at, cols, mask=eq != 0)
    tl.debug_barrier()
    ticket = tl.atomic_add(cnt + 2, 1)
    if ticket == tl.num_programs(0) - 1:
        m = tl.load(hist_row + top, cache_modifier=".cg")  # the candidates, all in the buffer
        _rank(i_row, ckey_ptr + row * n, cidx_ptr + row * n, m, k - above, above, top)


@triton.jit
def _count_ge(ckey, m, t):
    total = tl.zeros((), dtype=tl.int32)
    for start in range(0, m, FIN):
        j = start + tl.arange(0, FIN)
        c = tl.load(ckey + j, mask=j < m, other=-2147483648, cache_modifier=".cg")
        total += tl.sum((c >= t).to(tl.int32), axis=0)
    return total


@triton.jit
def _rank(i_row, ckey, cidx, m, r, above, top):
    """Writes the r largest of the m candidate keys' columns at slots above..above + r."""
    # Invariant: >= r keys are >= lo, < r are >= hi. All keys share the digit, so they lie in
    # [lo, hi) at the start and 20 halvings leave hi = lo + 1: lo is the r-th largest key.
    lo = ((top - DIGITS // 2) << LOW_BITS).to(tl.int64)
    hi = lo + SPAN
    j = tl.arange(0, FIN)
    if m <= FIN:
        c = tl.load(ckey + j, mask=j < m, other=-2147483648, cache_modifier=".cg")
        for _ in range(LOW_BITS):
            mid = lo + (hi - lo) // 2
            enough = tl.sum((c >= mid).to(tl.int32), axis=0) >= r
            lo = tl.where(enough, mid, lo)
            hi = tl.where(enough, hi, mid)
    else:
        for _ in range(LOW_BITS):
            mid = lo + (hi - lo) // 2
            enough = _count_ge(ckey, m, mid.to(tl.int32)) >= r
            lo = tl.where(enough, mid, lo)
            hi = tl.where(enough, hi, mid)
    t = lo.to(tl.int32)
    # Fewer than r keys are above t: all of them, then the first equal ones while slots last.
    done_gt = above
    done_eq = above + _count_ge(ckey, m, t + 1)
    for start in range(0, m, FIN):
        jj = start + j
        live = jj < m
        c = tl.load(ckey + jj, mask=live, other=-2147483648, cache_modifier=".cg")
        col = tl.load(cidx + jj, mask=live, other=0, cache_modifier=".cg")
        gt = ((c > t) & live).to(tl.int32)
        eq = ((c == t) & live).to(tl.int32)
        at_gt = done_gt + tl.cumsum(gt, axis=0) - 1
        at_eq = done_eq + tl.cumsum(eq, axis=0) - 1
        tl.store(i_row + at_gt, col, mask=gt != 0)
        tl.store(i_row + at_eq, col, mask=(eq != 0) & (at_eq < above + r))
        done_gt += tl.sum(gt, axis=0)
        done_eq += tl.sum(eq, axis=0)


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    b, n = x.shape
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} outside [0, N={n}]")
    idx = torch.empty((b, k), dtype=torch.int32, device=x.device)
    if idx.numel() == 0:
        return idx
    # About 512 programs over the whole call, each chunk 1024 to 8192 columns.
    chunk = min(max(triton.next_power_of_2(max(b * n // 512, 1)), 1024), 8192)
    chunk = min(chunk, triton.next_power_of_2(n))
    grid = (triton.cdiv(n, chunk), b)
    # One fill for both: each row's histogram, then each row's four counters.
    digits = N_DIGITS
    work = torch.zeros(b * (digits + 4), dtype=torch.int32, device=x.device)
    hist, cnt = work[: b * digits], work[b * digits :]
    ckey = torch.empty((b, n), dtype=torch.int32, device=x.device)
    cidx = torch.empty((b, n), dtype=torch.int32, device=x.device)
    _hist_kernel[grid](x, hist, n, x.stride(0), x.stride(1), CHUNK=chunk, num_warps=8)
    _split_kernel[grid](
        idx, x, hist, cnt, ckey, cidx, n, k, x.stride(0), x.stride(1), idx.stride(0),
        CHUNK=chunk, num_warps=8,
    )  # fmt: skip
    return idx
