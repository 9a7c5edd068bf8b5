"""LayerNorm over the last three dims of [B, F, D1, D2]: per row (one sample, R = F*D1*D2
elements) y = (x - mean) / sqrt(var + eps) * w + b, biased var, eps = 1e-5, w and b [F, D1, D2].

At the problem's size there are only 16 rows of 4M elements (16 MiB each): one program per row,
as torch's layer-norm kernel runs, would leave 116 of the 132 SMs idle. So each row is split:
1. partial statistics: each program takes a 16K-element chunk of one row and keeps a Welford
   mean/M2 per lane (exact, no sum-of-squares cancellation), merged across lanes with Chan's
   formula (4096 programs at the problem's size);
2. per row, its partials merged by Chan's formula: mean and rstd (sqrt correctly rounded);
3. normalise: ((x - mean) * rstd) * w + b.
Passes 1 and 3 number their programs chunk-major (the rows of one chunk adjacent), so in pass 3
the B rows that share a chunk of w and b run together and w, b come from DRAM about once
(32 MiB), not once per row; pass 3 also runs in the reverse order of pass 1, so the chunks pass 1
read last (all rows' tails, up to L2's 50 MB) are re-read first. DRAM: x twice, y once, w and b
once: ~800 MB at the problem's size.
NaN/inf in a row make its mean or M2 NaN, so the row comes out NaN, as torch's.
"""

import torch
import triton
import triton.language as tl

_EPS = 1e-5  # nn.LayerNorm's default
_BLOCK = 4096  # elements per step (16 per thread at 8 warps)
_STEPS = 4  # steps per program: CHUNK = 16384 elements
_BLOCK_P = 1024  # partials merged per step


@triton.jit
def _chunk_stats_kernel(
    part_ptr,  # *fp32, [rows, n_split, 3]: mean, M2, count of each chunk
    x_ptr,  # *fp32, [rows, R], contiguous
    n_rows,  # rows
    row_len,  # R
    n_split,  # chunks per row
    CHUNK: tl.constexpr,  # elements per program
    BLOCK: tl.constexpr,  # elements per step
):
    pid = tl.program_id(0)
    row = pid % n_rows  # chunk-major: the rows of one chunk are adjacent programs
    split = pid // n_rows
    start = split * CHUNK
    length = tl.minimum(CHUNK, row_len - start)
    base = x_ptr + row.to(tl.int64) * row_len + start
    offs = tl.arange(0, BLOCK)
    mean = tl.zeros([BLOCK], dtype=tl.float32)
    m2 = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, tl.cdiv(length, BLOCK)):
        idx = i * BLOCK + offs
        mask = idx < length
        x = tl.load(base + idx, mask=mask, other=0.0)
        # Every lane live in step i was live in all earlier steps: its count is i + 1.
        delta = tl.where(mask, x - mean, 0.0)
        mean += delta * (1.0 / (i + 1))
        m2 += delta * (x - mean)
    # Lane j saw ceil((length - j) / BLOCK) elements; merge the lanes (Chan).
    cnt = tl.maximum((length - offs + BLOCK - 1) // BLOCK, 0).to(tl.float32)
    total = length.to(tl.float32)
    # Shifted by lane 0's mean (lane 0 always has data): a constant chunk's deviations are all
    # 0, so its mean comes out exact and x - mean exactly 0, as in the float64 truth.
    ref = tl.sum(tl.where(offs == 0, mean, 0.0), axis=0)
    mu = ref + tl.sum(cnt * (mean - ref), axis=0) / total
    dev = mean - mu
    q = tl.sum(m2, axis=0) + tl.sum(tl.where(cnt > 0, cnt * dev * dev, 0.0), axis=0)
    at = part_ptr + (row.to(tl.int64) * n_split + split) * 3
    tl.store(at, mu)
    tl.store(at + 1, q)
    tl.store(at + 2, total)


@triton.jit
def _row_stats_kernel(
    stats_ptr,  # *fp32, [rows, 2]: mean, rstd
    part_ptr,  # *fp32, [rows, n_split, 3] from _chunk_stats_kernel
    n_split,  # chunks per row
    eps,  # added to the variance
    BLOCK_P: tl.constexpr,  # partials per step
):
    row = tl.program_id(0)
    first = row.to(tl.int64) * n_split
    k = tl.arange(0, BLOCK_P)
    acc = tl.zeros([BLOCK_P], dtype=tl.float32)
    acc_n = tl.zeros([BLOCK_P], dtype=tl.float32)
    ref = tl.load(part_ptr + first * 3)  # shift, as in the lanes' merge
    for s in range(0, n_split, BLOCK_P):
        idx = s + k
        mask = idx < n_split
        p = first + idx
        mu = tl.load(part_ptr + p * 3, mask=mask, other=0.0)
        cnt = tl.load(part_ptr + p * 3 + 2, mask=mask, other=0.0)
        acc += tl.where(mask, cnt * (mu - ref), 0.0)
        acc_n += cnt
    count = tl.sum(acc_n, axis=0)
    mean = ref + tl.sum(acc, axis=0) / count
    acc = tl.zeros([BLOCK_P], dtype=tl.float32)
    for s in range(0, n_split, BLOCK_P):
        idx = s + k
        mask = idx < n_split
        p = first + idx
        mu = tl.load(part_ptr + p * 3, mask=mask, other=0.0)
        q = tl.load(part_ptr + p * 3 + 1, mask=mask, other=0.0)
        cnt = tl.load(part_ptr + p * 3 + 2, mask=mask, other=0.0)
        dev = mu - mean
        acc += tl.where(mask, q + cnt * dev * dev, 0.0)
    var = tl.sum(acc, axis=0) / count
    tl.store(stats_ptr + row * 2, mean)
    tl.store(stats_ptr + row * 2 + 1, 1.0 / tl.sqrt_rn(var + eps))


@triton.jit
def _normalize_kernel(
    y_ptr,  # *fp32, [rows, R], contiguous
    x_ptr,  # *fp32, [rows, R], contiguous
    stats_ptr,  # *fp32, [rows, 2] from _row_stats_kernel
    w_ptr,  # *fp32, [R], contiguous
    b_ptr,  # *fp32, [R], contiguous
    n_rows,  # rows
    row_len,  # R
    CHUNK: tl.constexpr,  # elements per program
    BLOCK: tl.constexpr,  # elements per step
):
    # Reverse of pass 1's order, chunk-major as it is.
    pid = tl.num_programs(0) - 1 - tl.program_id(0)
    row = pid % n_rows
    start = (pid // n_rows) * CHUNK
    length = tl.minimum(CHUNK, row_len - start)
    at = row.to(tl.int64) * row_len + start
    mean = tl.load(stats_ptr + row * 2)
    rstd = tl.load(stats_ptr + row * 2 + 1)
    offs = tl.arange(0, BLOCK)
    for i in range(0, tl.cdiv(length, BLOCK)):
        idx = i * BLOCK + offs
        mask = idx < length
        x = tl.load(x_ptr + at + idx, mask=mask, other=0.0)
        w = tl.load(w_ptr + start + idx, mask=mask, other=0.0)
        b = tl.load(b_ptr + start + idx, mask=mask, other=0.0)
        tl.store(y_ptr + at + idx, ((x - mean) * rstd) * w + b, mask=mask)


def kb1_40_layernorm(x, ln_weight, ln_bias):
    x = x.contiguous()
    w = ln_weight.contiguous()
    b = ln_bias.contiguous()
    row_len = w.numel()
    n_rows = x.numel() // max(1, row_len)
    y = torch.empty_like(x)
    if y.numel() == 0:
        return y
    block = min(_BLOCK, triton.next_power_of_2(row_len))
    chunk = block * _STEPS
    n_split = triton.cdiv(row_len, chunk)
    n_prog = n_rows * n_split
    warps = max(1, min(8, block // 512))
    part = torch.empty((n_prog, 3), dtype=torch.float32, device=x.device)
    stats = torch.empty((n_rows, 2), dtype=torch.float32, device=x.device)
    _chunk_stats_kernel[(n_prog,)](
        part, x, n_rows, row_len, n_split, CHUNK=chunk, BLOCK=block, num_warps=warps
    )
    _row_stats_kernel[(n_rows,)](
        stats, part, n_split, _EPS,
        BLOCK_P=min(_BLOCK_P, triton.next_power_of_2(n_split)), num_warps=4,
    )  # fmt: skip
    _normalize_kernel[(n_prog,)](
        y, x, stats, w, b, n_rows, row_len, CHUNK=chunk, BLOCK=block, num_warps=warps
    )
    return y
