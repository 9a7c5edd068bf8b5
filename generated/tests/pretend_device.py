"""A pretend H200 for the library's tests of device-dependent lookups (tuned configs, dispatch):
no kernel can launch on it. A module of its own, not conftest: the whole suite holds several
conftest modules, and `from conftest import` could find another."""

import json
import sys
from pathlib import Path

import pytest
import torch

from kernelgen_ops import _launch, _runtime

H200 = "NVIDIA H200"


def clear_lookups() -> None:
    """Every cached answer that depends on configs/ or on the device."""
    _runtime.load_configs.cache_clear()
    _runtime._cuda.cache_clear()
    _runtime._won_at.cache_clear()
    _runtime._table.cache_clear()
    _runtime.config_lookup.cache_clear()
    _runtime._dispatch.cache_clear()
    _runtime.kernel_won.cache_clear()
    _runtime.forget_routed()
    _runtime.one_table.cache_clear()
    for name, module in list(sys.modules.items()):
        config = getattr(module, "_config", None) if name.startswith("kernelgen_ops.") else None
        if config is not None:  # a seed-style candidate's own lookup, cached over TUNED
            config.cache_clear()


def pretend_h200(monkeypatch: pytest.MonkeyPatch, folder: Path, configs: dict[str, dict]) -> None:
    """The library reads configs/<op>.json from `folder` (`configs` maps op -> its JSON) and
    believes it runs on an H200 under Triton 3.6.0 (no kernel can launch: the GPU is pretend)."""
    (folder / "configs").mkdir()
    for op, data in configs.items():
        (folder / "configs" / f"{op}.json").write_text(json.dumps(data))
    # The shipped manifest too: routing reads it (once per process, so whether a test gets it
    # from here or from the package folder depends on what ran before it).
    (folder / "MANIFEST.json").write_text((_runtime._HERE / "MANIFEST.json").read_text())
    monkeypatch.setattr(_runtime, "_HERE", folder)
    monkeypatch.setattr(_runtime, "INTERPRET", False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(_launch, "_current_device", lambda: 0)  # what _runtime asks
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=None: H200)
    monkeypatch.setattr(_runtime.triton, "__version__", "3.6.0")
    clear_lookups()
