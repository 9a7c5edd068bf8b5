"""The device's measured ceilings, measured once per device and software stack, cached as JSON.

- copy bandwidth: a device-to-device copy of 2 GiB, counting bytes read plus bytes written (the
  buffers are far larger than L2, so this is DRAM);
- bf16 rate: an 8192^3 matmul on random data (zeros run faster and would flatter every kernel);
- launch latency: an empty Triton kernel, launch to completion as CUDA events see it.

Datasheet numbers are leads; these are what kernels on this card, with this torch and Triton, can
actually reach, so every timing is put against them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import triton

from kernelgen import gpulock
from kernelgen.records import Ceilings, now

COPY_BYTES = 2 * 1024**3
MATMUL_N = 8192


@triton.jit
def _empty_kernel(x_ptr):  # x_ptr: unused; a kernel needs no body to be launched and timed
    pass


def cache_dir() -> Path:
    return Path(os.environ.get("KERNELGEN_CACHE") or Path.home() / ".cache" / "kernelgen")


def clean_name(s: str) -> str:
    """A device name or version as a file-name part: "NVIDIA H200 NVL" -> "NVIDIA_H200_NVL"."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_")


def stack_name(gpu: str, torch_version: str, triton_version: str) -> str:
    return f"{clean_name(gpu)}-torch{clean_name(torch_version)}-triton{clean_name(triton_version)}"


def cache_path(gpu: str, torch_version: str, triton_version: str) -> Path:
    """One file per device name and software stack: a new driver stack may move the ceilings."""
    return cache_dir() / f"ceilings-{stack_name(gpu, torch_version, triton_version)}.json"


def load_cached(path: Path) -> Ceilings | None:
    """The cached ceilings, or None when missing or unreadable (then they are measured again)."""
    try:
        return Ceilings.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _median_ms(fn: Callable[[], object]) -> float:
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))


def _copy_gbps() -> float:
    import torch

    src = torch.randint(0, 256, (COPY_BYTES,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return 2 * COPY_BYTES / (_median_ms(lambda: dst.copy_(src)) * 1e-3) / 1e9


def _bf16_tflops() -> float:
    import torch

    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    return 2 * MATMUL_N**3 / (_median_ms(lambda: torch.mm(a, b, out=c)) * 1e-3) / 1e12


def _launch_us() -> float:
    import torch

    x = torch.empty(1, device="cuda")
    return _median_ms(lambda: _empty_kernel[(1,)](x)) * 1e3


def measure() -> Ceilings:
    """Measure the three ceilings on the current CUDA device (a few seconds)."""
    import torch

    # Each helper's buffers are freed when it returns, before the next one allocates.
    copy_gbps, bf16_tflops, launch_us = _copy_gbps(), _bf16_tflops(), _launch_us()
    torch.cuda.empty_cache()
    return Ceilings(
        gpu=torch.cuda.get_device_name(),
        copy_gbps=copy_gbps,
        bf16_tflops=bf16_tflops,
        launch_us=launch_us,
        measured=now(),
        torch=torch.__version__,
        triton=triton.__version__,
    )


def get_ceilings(refresh: bool = False) -> Ceilings:
    """The current device's ceilings: from the cache, or measured now and cached."""
    import torch

    from kernelgen.store import write_atomic

    path = cache_path(torch.cuda.get_device_name(), torch.__version__, triton.__version__)
    if not refresh:
        cached = load_cached(path)
        if cached is not None:
            return cached
    with gpulock.exclusive("device ceilings"):  # timed, so alone on the GPU (gpulock.py)
        ceilings = measure()
    write_atomic(path, ceilings.model_dump_json(indent=2))
    return ceilings
