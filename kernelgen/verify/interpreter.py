"""Make Triton's CPU interpreter judge honest kernels written for a GPU, without lowering the bar.

Two things an honest candidate may do that the interpreter cannot:
- `@triton.autotune` with several configs benchmarks them with do_bench, which needs a driver.
  Here each call runs the next config in turn instead, so the case grid covers every config (a
  kernel that is right for one block size only is caught, not hidden by the tuner's pick).
- ask `torch.cuda.get_device_properties(...)` for the SM count to size a persistent grid. Here it
  answers with the H200's figures, the device the kernels are written for.
Installed in the sandboxed process only, and only under TRITON_INTERPRET=1.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

H200 = SimpleNamespace(
    name="NVIDIA H200 (interpreter stand-in)",
    major=9,
    minor=0,
    multi_processor_count=132,
    total_memory=143_771 * 2**20,
    L2_cache_size=60 * 2**20,
    max_threads_per_multi_processor=2048,
    max_threads_per_block=1024,
    warp_size=32,
    shared_memory_per_block=48 * 1024,
    shared_memory_per_block_optin=227 * 1024,
    shared_memory_per_multiprocessor=228 * 1024,
    regs_per_multiprocessor=65536,
)


def active() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def _rotating(run: Any) -> Any:
    def rotating_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        configs = self.configs
        if len(configs) <= 1:
            return run(self, *args, **kwargs)
        turn = getattr(self, "_kernelgen_turn", 0)
        self._kernelgen_turn = turn + 1
        self.configs = [configs[turn % len(configs)]]
        try:
            return run(self, *args, **kwargs)
        finally:
            self.configs = configs

    return rotating_run


def install() -> None:
    if not active():
        return
    import torch
    from triton.runtime import autotuner

    autotuner.Autotuner.run = _rotating(autotuner.Autotuner.run)  # type: ignore[method-assign]
    torch.cuda.get_device_properties = lambda device=None: H200  # type: ignore[assignment]
    torch.cuda.get_device_capability = lambda device=None: (9, 0)  # type: ignore[assignment]
    torch.cuda.get_device_name = lambda device=None: H200.name  # type: ignore[assignment]
