"""The library's tests run against this source tree, on CUDA when there is one and through
Triton's interpreter on CPU otherwise."""

import os
import sys
from pathlib import Path

import pytest

GENERATED = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(GENERATED))

# Each kernel chooses between compiling and interpreting when it is decorated (when kernelgen_ops
# is imported), and Triton reads the variable again at launch: on a machine without CUDA it is
# set for the whole session, before torch (which imports triton) and before the library.
if "TRITON_INTERPRET" not in os.environ:
    import subprocess

    def _has_cuda() -> bool:
        try:
            done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0

    if not _has_cuda():
        os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

import kernelgen_ops  # noqa: E402
from kernelgen_ops import _runtime  # noqa: E402

INTERPRET = _runtime.INTERPRET
HAS_CUDA = torch.cuda.is_available() and not INTERPRET
# Where the kernels run in these tests; bf16 only where it is computed faithfully.
DEVICE = "cuda" if HAS_CUDA else "cpu"
DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if HAS_CUDA else [])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="needs CUDA (and TRITON_INTERPRET unset)")
    for item in items:
        if not item.path.is_relative_to(GENERATED):
            continue
        if "gpu" in item.keywords and not HAS_CUDA:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_routing_leaks():
    """Every test starts and ends with torch's own functions in place."""
    kernelgen_ops.disable()
    yield
    kernelgen_ops.disable()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every test taking `dtype` runs for each dtype this device computes faithfully.
    if "dtype" in metafunc.fixturenames:
        metafunc.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))


@pytest.fixture
def device() -> str:
    return DEVICE


@pytest.fixture
def pretend(monkeypatch: pytest.MonkeyPatch):
    """test_launch's pretend GPU as Triton's active driver and _launch's device and stream."""
    from test_launch import Pretend
    from triton.runtime.driver import driver

    from kernelgen_ops import _launch

    fake = Pretend()
    monkeypatch.setattr(driver, "_active", fake)
    monkeypatch.setattr(_launch, "_current_device", lambda: fake.device)
    monkeypatch.setattr(_launch, "_current_stream", fake.get_current_stream)
    return fake
