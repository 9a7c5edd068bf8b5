"""InstanceNorm2d (no affine, no running stats): y = (x - mean) / sqrt(var + eps) per (n, c)
plane, mean and biased var over its H x W, as nn.InstanceNorm2d's defaults.

One program per plane (112 x 64 = 7168 planes of 1 MiB at the problem's size, 7 GiB in all):
pass 1 streams the plane once with a Welford mean/M2 per lane (exact, no sum-of-squares
cancellation), merged across lanes with Chan's formula; pass 2 streams it again, backwards, and
writes (x - mean) * rstd. Backwards because the plane's last chunks, read just before, are the
likeliest still in L2 (50 MB shared by the planes in flight), so part of the re-read costs no
DRAM traffic. DRAM: <= 2 reads + 1 write = 22.5 GiB, no partials, one launch; torch runs it as a
batch norm over N*C channels (statistics pass, then a separate normalising pass).
NaN/inf in a plane make its mean or M2 NaN, so the plane comes out NaN, as torch's.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

TUNE_SPACE = {"BLOCK": [2048, 4096, 8192], "num_warps": [4, 8, 16]}
DEFAULT_CONFIG = {"BLOCK": 4096, "num_warps": 8}
TUNED: dict[str, dict[str, int]] = {}

_EPS = 1e-5  # nn.InstanceNorm2d's default


@triton.jit
def _instance_norm_kernel(
    y_ptr,  # *fp32, [N * C, HW], contiguous
    x_ptr,  # *fp32, [N * C, HW], contiguous
    hw,  # elements per plane
    eps,  # added to the variance
    BLOCK: tl.constexpr,  # elements per step
):
    plane = tl.program_id(0).to(tl.int64)
    x_plane = x_ptr + plane * hw
    y_plane = y_ptr + plane * hw
    offs = tl.arange(0, BLOCK)
    mean = tl.zeros([BLOCK], dtype=tl.float32)
    m2 = tl.zeros([BLOCK], dtype=tl.float32)
    n_steps = tl.cdiv(hw, BLOCK)
    for i in range(0, n_steps):
        idx = i * BLOCK + offs
        mask = idx < hw
        x = tl.load(x_plane + idx, mask=mask, other=0.0)
        # Every lane live in step i was live in all earlier steps: its count is i + 1.
        delta = tl.where(mask, x - mean, 0.0)
        mean += delta * (1.0 / (i + 1))
        m2 += delta * (x - mean)
    # Lane j saw ceil((hw - j) / BLOCK) elements; merge the lanes (Chan).
    cnt = tl.maximum((hw - offs + BLOCK - 1) // BLOCK, 0).to(tl.float32)
    total = hw.to(tl.float32)
    # Shifted by lane 0's mean (lane 0 always has data): a constant chunk's deviations are all
    # 0, so its mean comes out exact and x - mean exactly 0, as in the float64 truth.
    ref = tl.sum(tl.where(offs == 0, mean, 0.0), axis=0)
    mu = ref + tl.sum(cnt * (mean - ref), axis=0) / total
    dev = mean - mu
    q = tl.sum(m2, axis=0) + tl.sum(tl.where(cnt > 0, cnt * dev * dev, 0.0), axis=0)
    rstd = 1.0 / tl.sqrt_rn(q / total + eps)
    for i in range(0, n_steps):
        idx = (n_steps - 1 - i) * BLOCK + offs
        mask = idx < hw
        x = tl.load(x_plane + idx, mask=mask, other=0.0)
        tl.store(y_plane + idx, (x - mu) * rstd, mask=mask)


@functools.lru_cache(maxsize=256)
def _config(*dims: int) -> dict[str, int]:
    return TUNED[nearest_bucket(TUNED, dims)] if TUNED else DEFAULT_CONFIG


def kb1_34_instancenorm(x):
    x = x.contiguous()
    planes = x.shape[0] * x.shape[1]
    hw = x.numel() // max(1, planes)
    y = torch.empty_like(x)
    if y.numel() == 0:
        return y
    cfg = _config(planes, hw)
    block = min(cfg["BLOCK"], triton.next_power_of_2(hw))
    warps = max(1, min(cfg["num_warps"], block // 256))
    _instance_norm_kernel[(planes,)](y, x, hw, _EPS, BLOCK=block, num_warps=warps)
    return y
