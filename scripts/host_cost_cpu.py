"""Host cost of kernelgen_ops calls without a GPU: the Python a call runs, the launch stubbed.

    python scripts/host_cost_cpu.py [--calls 20000]

Imports the library with real JITFunctions (TRITON_INTERPRET must be unset) and gives Triton a
pretend CUDA device: a driver that answers device 0 and stream 0, and a compile step that makes a
stand-in CompiledKernel whose launch does nothing. Triton's own JITFunction.run then runs for real
(binding, specialization, cache key, hooks) and so does the lean path (_launch.py), on CPU tensors;
only compiling and the driver's launch are left out, the same for both. The contract checks take
their CPU branch (slower than on CUDA tensors, where the first test accepts), and the dispatch
lookup finds no device (no table), so the figures are the Python of a call, not a GPU host's.

Per operator, at decode shapes: the public call as shipped (checked and dispatched once per key,
_calls.py, then replayed from its launch plan, _plans.py); with plans off, with lean launches and
with Triton's path (_launch.set_enabled(False)); the launcher alone both ways; and the contract
check and dispatch lookup alone. Exits 1 when a call after the first still went
through JITFunction.run (the lean path is not taken), when the lean path launched another kernel
than Triton would (_launch.CHECK on for the first calls), or when no plan was made.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import timeit
from typing import Any

if os.environ.get("TRITON_INTERPRET") == "1":
    sys.exit(
        "host_cost_cpu.py: unset TRITON_INTERPRET (it needs JITFunctions, not the interpreter)"
    )

# Lean launches are what this measures, against Triton's path: on (the default, unless the
# environment switched them off), before kernelgen_ops is imported.
os.environ["KERNELGEN_OPS_LEAN"] = "1"

import kernelgen_ops  # noqa: E402
import torch  # noqa: E402
from kernelgen_ops import _contracts, _launch, _plans, _runtime  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler.compiler import CompiledKernel  # noqa: E402
from triton.runtime.driver import driver  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402


class PretendDriver:
    """What JITFunction.run asks of the driver."""

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int) -> int:
        return 0

    def get_current_target(self) -> GPUTarget:
        return GPUTarget("cuda", 90, 32)


class StandIn(CompiledKernel):
    """A compiled kernel whose launch does nothing (CompiledKernel.run is `_run` once loaded)."""

    def __init__(self) -> None:
        self.function, self.packed_metadata, self.module, self.name = 1, (), object(), "stand-in"
        self._run = lambda *args: None

    def launch_metadata(self, grid: Any, stream: int, *args: Any) -> None:
        return None


def pretend_gpu() -> dict[str, int]:
    """Install the pretend driver and compile step; the returned counts grow per Triton run."""
    counts = {"triton_runs": 0}
    driver.set_active(PretendDriver())
    triton_run = JITFunction.run

    def compile_stand_in(self, key, signature, device, constexprs, options, attrs, warmup):
        kernel = StandIn()
        self.device_caches[device][0][key] = kernel
        return kernel

    def counted_run(self, *args, **kwargs):
        counts["triton_runs"] += 1
        return triton_run(self, *args, **kwargs)

    JITFunction._do_compile = compile_stand_in  # type: ignore[method-assign]
    # Counting without replacing JITFunction.run (a replaced run turns lean launches off): each
    # LeanKernel's own JITFunction gets the counting run as an instance attribute.
    for op in kernelgen_ops.__all__:
        module = importlib.import_module(f"kernelgen_ops.{op}")
        for value in vars(module).values():
            if isinstance(value, _launch.LeanKernel):
                value.jit.run = counted_run.__get__(value.jit)
    _launch._current_device = lambda: 0
    _launch._current_stream = lambda device: 0
    _runtime.INTERPRET = True  # the contracts accept CPU tensors
    return counts


def calls() -> dict[str, tuple[Any, Any, tuple]]:
    """op -> (public function, launcher, arguments) at a decode shape."""
    x = torch.randn(1, 32000)
    h, w = torch.randn(1, 4096), torch.rand(4096) + 0.5
    g = torch.randn(1, 2 * 14336)
    out = {}
    for op, args in (("softmax", (x,)), ("rms_norm", (h, w, 1e-6)), ("silu_and_mul", (g,))):
        module = importlib.import_module(f"kernelgen_ops.{op}")
        launcher = getattr(module, op)  # the function itself, under plans' Planned wrapper
        out[op] = (getattr(kernelgen_ops, op), getattr(launcher, "__wrapped__", launcher), args)
    return out


def per_call_us(fn: Any, n: int) -> float:
    fn()
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def measure(op: str, public: Any, launcher: Any, args: tuple, n: int, counts: dict) -> list[str]:
    """Print one operator's figures; return what went wrong."""
    failed = []
    call = getattr(kernelgen_ops, f"_{op}_call")
    _launch.CHECK = True  # the first calls: each lean launch must pick Triton's kernel
    for _ in range(3):
        public(*args)
    _launch.CHECK = False
    before = counts["triton_runs"]
    shipped = per_call_us(lambda: public(*args), n)  # plans on: the public call replays
    if not any(isinstance(kept[3], _plans._Plan) for kept in call._answers.values()):
        failed.append(f"{op}: no launch plan was made")
    if counts["triton_runs"] != before:
        failed.append(f"{op}: {counts['triton_runs'] - before} launches took Triton's path")
    _plans.set_enabled(False)  # the kept check and dispatch, then the lean launcher
    try:
        lean = [per_call_us(lambda: public(*args), n), per_call_us(lambda: launcher(*args), n)]
        _launch.set_enabled(False)
        try:
            triton = [
                per_call_us(lambda: public(*args), n),
                per_call_us(lambda: launcher(*args), n),
            ]
        finally:
            _launch.set_enabled(True)
    finally:
        _plans.set_enabled(True)
    check = getattr(_contracts, f"check_{op}")
    dims = getattr(_contracts, f"dims_{op}")
    parts = [
        per_call_us(lambda: check(*args), n),
        per_call_us(lambda: _runtime.use_torch(op, dims(*args), False), n),
    ]
    figures = [shipped, lean[0], triton[0], lean[1], triton[1], *parts]
    widths = (9, 12, 9, 15, 9, 8, 10)
    print(f"{op:14s}" + "".join(f"{f:>{w}.2f}" for f, w in zip(figures, widths, strict=True)))
    return failed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    n = parser.parse_args().calls
    counts = pretend_gpu()
    torch.set_grad_enabled(False)
    header = f"{'op':14s}{'shipped':>9s}{'public lean':>12s}{'triton':>9s}"
    header += f"{'launcher lean':>15s}{'triton':>9s}"
    print(header + f"{'check':>8s}{'dispatch':>10s}   (us per call, CPU)")
    failed = []
    for op, (public, launcher, args) in calls().items():
        failed += measure(op, public, launcher, args, n, counts)
    for line in failed:
        print(f"error: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
