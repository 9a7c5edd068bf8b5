"""Compiling a candidate's kernels for a GPU this machine does not have.

Triton's interpreter runs a kernel's Python body, not its compiler: a kernel it accepts may not
compile for the GPU at all. Two that did so here, each found only on the H200: module globals
annotated `X: tl.constexpr = 1` (a kernel may read only `X = tl.constexpr(1)` instances), and a
constexpr local assigned in each step of a static_range (constexprs cannot be reassigned). Both
are errors of Triton's frontend, which needs no GPU; nor do its later stages (the bundled
ptxas included). So a CPU verdict also compiles the candidate for the target it will run on.

`install(name)` makes a compile-only driver Triton's active one: it reports the target and a
device 0, and nothing else, so a launch can compile (as a warmup does) but never load or run.
Only a compile-only runner installs it (runner.py), with TRITON_INTERPRET unset.
"""

from __future__ import annotations

from typing import Any

# Name -> Triton's (backend, arch, warp size). The H200 is compute capability 9.0.
TARGETS = {"sm_90": ("cuda", 90, 32)}
DEFAULT = "sm_90"


class _CompileOnly:
    def __init__(self, target: Any):
        self.target = target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_current_target(self) -> Any:
        return self.target

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device("cpu")

    def __getattr__(self, name: str) -> Any:
        # Loading, launching or timing a kernel would need the GPU: say so, not a bare
        # AttributeError from inside Triton.
        raise RuntimeError(f"compiling for a GPU that is not here: the driver has no {name!r}")


def install(name: str) -> None:
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    if name not in TARGETS:
        raise ValueError(f"unknown GPU target {name!r}; known: {', '.join(TARGETS)}")
    driver.set_active(_CompileOnly(GPUTarget(*TARGETS[name])))
