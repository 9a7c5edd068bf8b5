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

Persistent variant of a_plane.py: CTAS programs per SM take planes in turn, so only
132 * CTAS planes of 1 MiB are in flight (132 MB at CTAS = 1, against ~400 MB with one program
per plane at ~3 per SM): a larger share of each plane's tail is still in L2 when pass 2 reads
it back. The risk is bandwidth with one 16-warp program per SM; TUNE_SPACE tries 1 and 2.
"""

import functools

import torch
import triton
import triton.language as tl
from kernelgen_ops._runtime import nearest_bucket

TUNE_SPACE = {"BLOCK": [4096, 8192], "num_warps": [8, 16], "CTAS": [1, 2]}
DEFAULT_CONFIG = {"BLOCK": 8192, "num_warps": 16, "CTAS": 1}
TUNED: dict[str, dict[str, int]] = {}

_EPS = 1e-5  # nn.InstanceNorm2d's default


@triton.jit
def _instance_norm_kernel(
    y_ptr,  # *fp32, [N * C, HW], contiguous
    x_ptr,  # *fp32, [N * C, HW], contiguous
    n_planes,  # N * C
    hw,  # elements per plane
    eps,  # added to the variance
    BLOCK: tl.constexpr,  # elements per step
):
    pid = tl.program_id(0)
    n_prog = tl.num_programs(0)
    # Plane pointers carried through the loop (int64): planes pid, pid + n_prog, ...
    x_plane = x_ptr + pid.to(tl.int64) * hw
    y_plane = y_ptr + pid.to(tl.int64) * hw
    step = n_prog.to(tl.int64) * hw
    offs = tl.arange(0, BLOCK)
    n_steps = tl.cdiv(hw, BLOCK)
    # Lane j sees ceil((hw - j) / BLOCK) elements of every plane.
    cnt = tl.maximum((hw - offs + BLOCK - 1) // BLOCK, 0).to(tl.float32)
    total = hw.to(tl.float32)
    for _ in range(pid, n_planes, n_prog):
        mean = tl.zeros([BLOCK], dtype=tl.float32)
        m2 = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, n_steps):
            idx = i * BLOCK + offs
            mask = idx < hw
            x = tl.load(x_plane + idx, mask=mask, other=0.0)
            # Every lane live in step i was live in all earlier steps: its count is i + 1.
            delta = tl.where(mask, x - mean, 0.0)
            mean += delta * (1.0 / (i + 1))
            m2 += delta * (x - mean)
        # Lanes merged (Chan), shifted by lane 0's mean (lane 0 always has data): a constant
        # plane's deviations are all 0, so its mean is exact and x - mean exactly 0.
        ref = tl.sum(tl.where(offs == 0, mean, 0.0), axis=0)
        mu = ref + tl.sum(cnt * (mean - ref), axis=0) / total
        dev = mean - mu
        q = tl.sum(m2, axis=0) + tl.sum(tl.where(cnt > 0, cnt * dev * dev, 0.0), axis=0)
        rstd = 1.0 / tl.sqrt_rn(q / total + eps)
        for i in range(0, n_steps):
            # Backwards: the chunks read last are the likeliest still in L2.
            idx = (n_steps - 1 - i) * BLOCK + offs
            mask = idx < hw
            x = tl.load(x_plane + idx, mask=mask, other=0.0)
            tl.store(y_plane + idx, (x - mu) * rstd, mask=mask)
        x_plane += step
        y_plane += step


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
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    grid = (min(planes, sms * cfg["CTAS"]),)
    _instance_norm_kernel[grid](y, x, planes, hw, _EPS, BLOCK=block, num_warps=warps)
    return y
