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

A kernel that compiles may still not load: Triton checks its shared memory and threads against
the device when it loads the binary, which a compile-only driver never does. `check_fits` makes
that check against the named target's figures, so a kernel that would raise OutOfResources on the
GPU (sparse_attn's at a 576-wide head: 655616 bytes of shared memory, found only on the H200)
raises it here too.
"""

from __future__ import annotations

from typing import Any

# Name -> Triton's (backend, arch, warp size). The H200 is compute capability 9.0.
TARGETS = {"sm_90": ("cuda", 90, 32)}
DEFAULT = "sm_90"
# Name -> what one program may hold when it loads: shared memory in bytes (the opt-in maximum per
# block, cudaDevAttrMaxSharedMemoryPerBlockOptin, which Triton compares against: 227 KiB on
# sm_90) and threads.
LIMITS = {"sm_90": {"shared": 232448, "threads": 1024}}
_installed: str | None = None


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

    global _installed
    if name not in TARGETS:
        raise ValueError(f"unknown GPU target {name!r}; known: {', '.join(TARGETS)}")
    driver.set_active(_CompileOnly(GPUTarget(*TARGETS[name])))
    _installed = name


def check_fits(kernel: Any) -> None:
    """Raise Triton's OutOfResources, as loading the compiled `kernel` on the installed target
    would, where it needs more shared memory or threads than that target has. Nothing when no
    target is installed (a compile-ahead runner on the GPU itself: loading checks there)."""
    if _installed is None or kernel is None:
        return
    from triton.runtime.errors import OutOfResources

    limits, meta = LIMITS[_installed], kernel.metadata
    if meta.shared > limits["shared"]:
        raise OutOfResources(meta.shared, limits["shared"], "shared memory")
    threads = meta.num_warps * TARGETS[_installed][2]
    if threads > limits["threads"]:
        raise OutOfResources(threads, limits["threads"], "threads")
