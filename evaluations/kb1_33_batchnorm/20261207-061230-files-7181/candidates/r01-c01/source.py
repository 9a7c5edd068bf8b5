"""BatchNorm2d in training mode: y = (x - mean_c) / sqrt(var_c + eps) * w_c + b_c, where mean_c
and the biased var_c are the batch statistics of channel c over N, H and W (as nn.BatchNorm2d
normalises in training mode; the running buffers it updates are not part of the output).

At the problem's size (64 x 64 x 512 x 512 fp32, 4 GiB) the work is memory-bound and the batch
statistics need all of a channel before any output, so x is read twice and y written once
(12 GiB), in three launches:
1. partial statistics: each program takes a CHUNK of one (n, c) plane and keeps a Welford
   mean/M2 per lane (exact, no sum-of-squares cancellation), merged across lanes with Chan's
   formula: 64K programs of 64 KiB each fill the GPU evenly;
2. per channel, the partials merged by Chan's formula (counts carried), giving mean and
   scale = w * rsqrt(var + eps) (sqrt correctly rounded);
3. normalise: (x - mean) * scale + b per element, the programs in the reverse order of pass 1
   so the tail pass 1 left in L2 is read first.
torch reads x twice too; its native CUDA statistics kernel gives each channel one block (64
blocks on 132 SMs), which this split avoids. NaN/inf anywhere in a channel make the
channel's mean or M2 NaN, so the channel comes out NaN, as torch's.
"""

import torch
import triton
import triton.language as tl

_EPS = 1e-5  # nn.BatchNorm2d's default
_BLOCK = 4096  # elements per step (16 per thread at 8 warps)
_STEPS = 4  # steps per program: CHUNK = 16384 elements
_BLOCK_P = 1024  # partials merged per step


@triton.jit
def _plane_stats_kernel(
    part_ptr,  # *fp32, [planes * n_split, 3]: mean, M2, count of each chunk
    x_ptr,  # *fp32, [N, C, HW], contiguous
    hw,  # elements per (n, c) plane
    n_split,  # chunks per plane
    CHUNK: tl.constexpr,  # elements per program
    BLOCK: tl.constexpr,  # elements per step
):
    pid = tl.program_id(0)
    plane = pid // n_split
    start = (pid % n_split) * CHUNK
    length = tl.minimum(CHUNK, hw - start)
    base = x_ptr + plane.to(tl.int64) * hw + start
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
    tl.store(part_ptr + pid * 3, mu)
    tl.store(part_ptr + pid * 3 + 1, q)
    tl.store(part_ptr + pid * 3 + 2, total)


@triton.jit
def _channel_stats_kernel(
    stats_ptr,  # *fp32, [C, 2]: mean, w * rstd
    part_ptr,  # *fp32, [N * C * n_split, 3] from _plane_stats_kernel
    w_ptr,  # *fp32, [C]
    n_chan,  # C
    n_parts,  # N * n_split: the partials of one channel
    n_split,  # chunks per plane
    eps,  # added to the variance
    BLOCK_P: tl.constexpr,  # partials per step
):
    c = tl.program_id(0)
    k = tl.arange(0, BLOCK_P)
    acc = tl.zeros([BLOCK_P], dtype=tl.float32)
    acc_n = tl.zeros([BLOCK_P], dtype=tl.float32)
    ref = tl.load(part_ptr + c.to(tl.int64) * n_split * 3)  # shift, as in the lanes' merge
    for s in range(0, n_parts, BLOCK_P):
        idx = s + k
        mask = idx < n_parts
        p = ((idx // n_split) * n_chan + c).to(tl.int64) * n_split + idx % n_split
        mu = tl.load(part_ptr + p * 3, mask=mask, other=0.0)
        cnt = tl.load(part_ptr + p * 3 + 2, mask=mask, other=0.0)
        acc += tl.where(mask, cnt * (mu - ref), 0.0)
        acc_n += cnt
    count = tl.sum(acc_n, axis=0)
    mean = ref + tl.sum(acc, axis=0) / count
    acc = tl.zeros([BLOCK_P], dtype=tl.float32)
    for s in range(0, n_parts, BLOCK_P):
        idx = s + k
        mask = idx < n_parts
        p = ((idx // n_split) * n_chan + c).to(tl.int64) * n_split + idx % n_split
        mu = tl.load(part_ptr + p * 3, mask=mask, other=0.0)
        q = tl.load(part_ptr + p * 3 + 1, mask=mask, other=0.0)
        cnt = tl.load(part_ptr + p * 3 + 2, mask=mask, other=0.0)
        dev = mu - mean
        acc += tl.where(mask, q + cnt * dev * dev, 0.0)
    var = tl.sum(acc, axis=0) / count
    scale = tl.load(w_ptr + c) / tl.sqrt_rn(var + eps)
    tl.store(stats_ptr + c * 2, mean)
    tl.store(stats_ptr + c * 2 + 1, scale)


@triton.jit
def _normalize_kernel(
    y_ptr,  # *fp32, [N, C, HW], contiguous
    x_ptr,  # *fp32, [N, C, HW], contiguous
    stats_ptr,  # *fp32, [C, 2] from _channel_stats_kernel
    b_ptr,  # *fp32, [C]
    n_chan,  # C
    hw,  # elements per plane
    n_split,  # chunks per plane
    CHUNK: tl.constexpr,  # elements per program
    BLOCK: tl.constexpr,  # elements per step
):
    # Last chunk first: pass 1 finished there, so its data is the likeliest still in L2.
    pid = tl.num_programs(0) - 1 - tl.program_id(0)
    plane = pid // n_split
    c = plane % n_chan
    start = (pid % n_split) * CHUNK
    length = tl.minimum(CHUNK, hw - start)
    at = plane.to(tl.int64) * hw + start
    mean = tl.load(stats_ptr + c * 2)
    scale = tl.load(stats_ptr + c * 2 + 1)
    bias = tl.load(b_ptr + c)
    offs = tl.arange(0, BLOCK)
    for i in range(0, tl.cdiv(length, BLOCK)):
        idx = i * BLOCK + offs
        mask = idx < length
        x = tl.load(x_ptr + at + idx, mask=mask, other=0.0)
        tl.store(y_ptr + at + idx, (x - mean) * scale + bias, mask=mask)


def kb1_33_batchnorm(x, bn_weight, bn_bias):
    x = x.contiguous()
    n_batch, n_chan = x.shape[0], x.shape[1]
    hw = x.numel() // max(1, n_batch * n_chan)
    y = torch.empty_like(x)
    if y.numel() == 0:
        return y
    block = min(_BLOCK, triton.next_power_of_2(hw))
    chunk = block * _STEPS
    n_split = triton.cdiv(hw, chunk)
    n_prog = n_batch * n_chan * n_split
    warps = max(1, min(8, block // 512))
    part = torch.empty((n_prog, 3), dtype=torch.float32, device=x.device)
    stats = torch.empty((n_chan, 2), dtype=torch.float32, device=x.device)
    _plane_stats_kernel[(n_prog,)](part, x, hw, n_split, CHUNK=chunk, BLOCK=block, num_warps=warps)
    n_parts = n_batch * n_split
    _channel_stats_kernel[(n_chan,)](
        stats, part, bn_weight, n_chan, n_parts, n_split, _EPS,
        BLOCK_P=min(_BLOCK_P, triton.next_power_of_2(n_parts)), num_warps=4,
    )  # fmt: skip
    _normalize_kernel[(n_prog,)](
        y, x, stats, bn_bias, n_chan, hw, n_split, CHUNK=chunk, BLOCK=block, num_warps=warps
    )
    return y
