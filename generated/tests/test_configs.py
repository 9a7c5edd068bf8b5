"""Tuned configs: the JSON shipped per operator, the device table chosen, the nearest bucket,
and that all of it is looked up once, not per call.

The lookups are tried on OP, a shipped operator whose kernel reads TUNED through its own
`_config` (the seeds' style); kernels without tunables have no table to look up."""

import json
import sys
from pathlib import Path

import pytest
import torch
from pretend_device import H200, clear_lookups, pretend_h200

import kernelgen_ops
from kernelgen_ops import _runtime

OPS = ("softmax", "rms_norm", "silu_and_mul")
TUNABLE = [op for op in OPS if hasattr(sys.modules[f"kernelgen_ops.{op}"], "_config")]
OP = TUNABLE[0] if TUNABLE else None
needs_tunable = pytest.mark.skipif(OP is None, reason="no shipped kernel reads a TUNED table")

TABLE = {
    "1x4096": {"num_warps": 1},
    "4096x4096": {"num_warps": 8},
    "32768x1024": {"num_warps": 4},
}
CONFIGS = {
    "op": OP,
    "default": {"num_warps": 2},
    "devices": {
        f"{H200}|triton-3.6.0": TABLE,
        f"{H200}|triton-3.2.0": {"1x1": {"num_warps": 32}},
        f"{H200}|triton-3.10.0": {"1x1": {"num_warps": 16}},
        "NVIDIA A100-SXM4-80GB|triton-3.6.0": {"1x1": {"num_warps": 2}},
    },
}


@pytest.fixture
def on_h200(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A library whose configs/ holds CONFIGS for OP, running on a pretend H200."""
    pretend_h200(monkeypatch, tmp_path, {OP: CONFIGS})
    yield tmp_path
    clear_lookups()


def test_select_table_prefers_the_exact_triton_version() -> None:
    devices = CONFIGS["devices"]
    assert _runtime.select_table(devices, H200, "3.6.0") == TABLE
    # Another Triton: the same device's newest table (3.10 > 3.6 > 3.2, numerically).
    assert _runtime.select_table(devices, H200, "3.7.0") == {"1x1": {"num_warps": 16}}
    # A device nobody tuned on: no table, so the defaults.
    assert _runtime.select_table(devices, "NVIDIA H100 80GB HBM3", "3.6.0") == {}
    assert _runtime.select_table({}, H200, "3.6.0") == {}


@pytest.mark.parametrize(
    ("dims", "bucket"),
    [
        ((4096, 4096), "4096x4096"),
        ((3000, 4001), "4096x4096"),  # rounded up to 4096x8192: nearest is 4096x4096
        ((1, 4096), "1x4096"),
        ((2, 3000), "1x4096"),
        ((20000, 1000), "32768x1024"),
        ((65536, 512), "32768x1024"),
        ((0, 0), "1x4096"),  # degenerate sizes still find a bucket
    ],
)
def test_nearest_bucket(dims: tuple[int, int], bucket: str) -> None:
    assert _runtime.nearest_bucket(TABLE, dims) == bucket


@needs_tunable
def test_the_operator_uses_the_device_table(on_h200: Path) -> None:
    config = sys.modules[f"kernelgen_ops.{OP}"]._config
    assert config(4096, 4096) == {"num_warps": 8}
    assert config(20000, 1000) == {"num_warps": 4}
    assert _runtime.config_lookup(OP)(1, 5000) == {"num_warps": 1}
    assert _runtime.default_config(OP) == {"num_warps": 2}


@needs_tunable
def test_an_untuned_device_gets_the_defaults(
    on_h200: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: "NVIDIA L4")
    assert len(_runtime.tuned(OP)) == 0
    assert _runtime.config_lookup(OP)(4096, 4096) == {"num_warps": 2}


@needs_tunable
def test_lookups_are_cached(on_h200: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads, names = [], []
    read, name = _runtime._read_json, torch.cuda.get_device_name
    monkeypatch.setattr(_runtime, "_read_json", lambda p: reads.append(p) or read(p))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=None: names.append(i) or name(i))
    lookup = _runtime.config_lookup(OP)
    for _ in range(3):
        assert lookup(4096, 4096) == {"num_warps": 8}
        assert _runtime.config_lookup(OP) is lookup
        assert dict(_runtime.tuned(OP)) == TABLE
        assert _runtime.default_config(OP) == {"num_warps": 2}
    assert len(reads) == 1 and len(names) == 1


@needs_tunable
def test_the_interpreter_uses_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_runtime, "INTERPRET", True)
    clear_lookups()
    try:
        assert len(_runtime.tuned(OP)) == 0
        assert sys.modules[f"kernelgen_ops.{OP}"]._config(64, 64) == (_runtime.default_config(OP))
    finally:
        clear_lookups()


@pytest.mark.parametrize("op", OPS)
def test_shipped_configs(op: str) -> None:
    data = json.loads((Path(_runtime.__file__).parent / "configs" / f"{op}.json").read_text())
    assert data["op"] == op
    assert data["sha256"] == kernelgen_ops.available()[op]["sha256"]
    assert isinstance(data["default"], dict)  # {} for a kernel without tunables
    for key, table in data["devices"].items():
        device, _, version = key.partition("|triton-")
        assert device and version, key
        for bucket, config in table.items():
            assert all(int(d) > 0 and int(d) & (int(d) - 1) == 0 for d in bucket.split("x"))
            assert isinstance(config, dict)
    assert sorted(data["devices"]) == kernelgen_ops.available()[op]["tuned_on"]


def test_missing_configs_name_the_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_runtime, "_HERE", tmp_path)
    _runtime.load_configs.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="configs/softmax.json is missing"):
            _runtime.load_configs("softmax")
    finally:
        _runtime.load_configs.cache_clear()
