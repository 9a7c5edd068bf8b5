"""Naive top-k: a threshold select, one program per row.

The row's k-th largest value t is found by a binary search over fp32 bit patterns, which sort as
their values once a negative number's magnitude bits are flipped (an order-preserving int32 key):
32 halvings of the keys between -inf and +inf, each a pass over the row counting x >= value(key).
Then one pass counts the values above t, and a last one writes their indices, followed by as many
of the indices of values equal to t as slots remain, in column order (prefix sums within a block,
running counts across blocks): no atomics, the same answer on every call. Values are compared as
fp32 after the load, so no two distinct scores can look equal.

The row is read 34 times (L2 catches the repeats for rows up to a few MB), one program per row:
a 1-row decode call runs on one SM.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

# The tuner searches TUNE_SPACE per shape bucket and writes its picks into TUNED, keyed
# "<B>x<N>x<k>" rounded up to powers of two; shapes between buckets take the nearest one.
TUNE_SPACE = {"BLOCK": [512, 1024, 2048, 4096], "num_warps": [4, 8, 16]}
DEFAULT_CONFIG = {"BLOCK": 1024, "num_warps": 4}
TUNED: dict[str, dict[str, int]] = {}

# The keys of -inf (0xFF800000, its magnitude bits flipped) and +inf (0x7F800000): every key
# strictly between them is a finite value or -0.0, so the search never meets a NaN.
# (Instances, not annotations: compiled for a GPU, a kernel may read only constexpr globals.)
NEG_INF_KEY = tl.constexpr(-2139095041)
POS_INF_KEY = tl.constexpr(2139095040)


@triton.jit
def _value(key, DTYPE: tl.constexpr):
    """The float whose order-preserving key is `key` (the map is its own inverse)."""
    key = key.to(tl.int32)
    return (key ^ ((key >> 31) & 0x7FFFFFFF)).to(DTYPE, bitcast=True)


@triton.jit
def _count(x_row, n, stride_xn, t, ABOVE: tl.constexpr, BLOCK: tl.constexpr):
    """How many of the row's values are >= t (> t with ABOVE)."""
    total = tl.zeros((), dtype=tl.int32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < n
        v = tl.load(x_row + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
        hit = (v > t) if ABOVE else (v >= t)
        total += tl.sum((hit & ok).to(tl.int32), axis=0)
    return total


@triton.jit
def _topk_kernel(
    idx_ptr,  # *int32, [B, k], contiguous: the chosen indices, in column order
    x_ptr,  # *fp32, [B, N], any strides
    n,  # N, values per row
    k,  # indices per row, 1 <= k <= N
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_im,  # elements between rows of idx
    BLOCK: tl.constexpr,  # columns per step
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    i_row = idx_ptr + row * stride_im
    dtype = x_ptr.dtype.element_ty
    # Invariant: at least k values are >= value(lo), fewer than k are >= value(hi). The keys
    # span 2^32 - 2^24, so 32 halvings leave hi = lo + 1, and value(lo) is the k-th largest.
    lo = tl.full((), NEG_INF_KEY, tl.int64)
    hi = tl.full((), POS_INF_KEY, tl.int64)
    for _ in range(32):
        mid = lo + (hi - lo) // 2
        enough = _count(x_row, n, stride_xn, _value(mid, dtype), False, BLOCK) >= k
        lo = tl.where(enough, mid, lo)
        hi = tl.where(enough, hi, mid)
    t = _value(lo, dtype)
    # Fewer than k values are above t, at least k are >= t: all of the first, and the first
    # (k - above) of those equal to t.
    above = _count(x_row, n, stride_xn, t, True, BLOCK)
    done_gt = tl.zeros((), dtype=tl.int32)
    done_eq = tl.zeros((), dtype=tl.int32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        ok = cols < n
        v = tl.load(x_row + cols * stride_xn, mask=ok, other=0.0).to(tl.float32)
        gt = ((v > t) & ok).to(tl.int32)
        eq = ((v == t) & ok).to(tl.int32)
        at_gt = done_gt + tl.cumsum(gt, axis=0) - 1
        at_eq = above + done_eq + tl.cumsum(eq, axis=0) - 1
        tl.store(i_row + at_gt, cols, mask=gt != 0)
        tl.store(i_row + at_eq, cols, mask=(eq != 0) & (at_eq < k))
        done_gt += tl.sum(gt, axis=0)
        done_eq += tl.sum(eq, axis=0)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    b, n = x.shape
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} outside [0, N={n}]")
    idx = torch.empty((b, k), dtype=torch.int32, device=x.device)
    if idx.numel() > 0:
        cfg = _config(b, n, k)
        # A row shorter than the block is read in one step of its own width, not padded to it.
        block = min(cfg["BLOCK"], triton.next_power_of_2(n))
        _topk_kernel[(b,)](
            idx, x, n, k, x.stride(0), x.stride(1), idx.stride(0),
            BLOCK=block, num_warps=cfg["num_warps"],
        )  # fmt: skip
    return idx
