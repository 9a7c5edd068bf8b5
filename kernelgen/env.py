"""The environment a figure was measured in: GPU, driver, CUDA, torch, Triton."""

from __future__ import annotations

import os
import platform
import socket
import subprocess

from kernelgen.records import Environment


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _driver() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip().splitlines()[0] or None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def gpu_name(device: str) -> str | None:
    """The GPU a run on `device` records (Environment.gpu): None on the CPU."""
    import torch

    return torch.cuda.get_device_name() if device == "cuda" else None


def environment(device: str) -> Environment:
    import torch
    import triton

    cuda = device == "cuda"
    return Environment(
        device="cuda" if cuda else "cpu",
        gpu=gpu_name(device),
        driver=_driver() if cuda else None,
        cuda=torch.version.cuda if cuda else None,
        torch=torch.__version__,
        triton=triton.__version__,
        python=platform.python_version(),
        host=socket.gethostname(),
        # The judge itself runs plain Python; its candidates run interpreted on CPU.
        interpreter=os.environ.get("TRITON_INTERPRET") == "1" or not cuda,
    )
