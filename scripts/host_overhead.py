"""Host overhead of kernelgen_ops on decode-sized inputs (CUDA).

    python scripts/host_overhead.py [OUT.json] [--profile]

Per operator, the per-call cost of
- `kernelgen_ops.<op>(...)`, the public function, forced onto the kernel (set_dispatch("kernel")):
  as shipped (its check and dispatch answered once per key, _calls.py, and its launches replayed
  from the key's plan, _plans.py, after checking that a replay's output equals the launcher's bit
  for bit); with plans off (the lean launcher, _launch.py); with lean launches off too (every
  launch through JITFunction.run); and as dispatched by the measured table ("measured": torch's
  op where the kernel lost);
- the custom op `torch.ops.kernelgen_ops.<op>` (what torch.compile graphs call);
- bare launches: the kernel launches one call makes, recorded with their arguments and output
  and replayed as they are: `kernel[grid](...)` lean, the same through JITFunction.run, and
  CompiledKernel.run called directly (the floor for a Python caller);
- torch eager on the same input,
- the launcher alone (kernelgen_ops.<op>'s module function, no contract or dispatch), and the
  output's torch.empty alone;
- the public call as scripts/bench_library.py times it (timing.host_us over its rotating call),
  to reconcile the two scripts' figures,
each as the mean of many back-to-back calls with one synchronize at the end (the enqueue rate,
which is what a decode step pays when kernels are tiny), and a CUDA-graph replay of the bare
launches for the GPU time alone. The public call and torch eager, the comparison [H] is judged
on, are timed side by side: in alternating rounds, their medians and the median of the
per-round differences (public_minus_eager_us, with its range over the rounds), because this
host's slow spells last longer than one timing and would otherwise fall on one of the two.
Writes JSON to the path given (default: stdout only).
--profile adds, per operator, cProfile's top functions by own time over the public calls.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

# This script compares lean launches with Triton's path, so they must be on (the default);
# set before kernelgen_ops is imported, whatever the environment says.
os.environ["KERNELGEN_OPS_LEAN"] = "1"
import kernelgen_ops  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from kernelgen_ops import _launch, _plans  # noqa: E402
from kernelgen_ops._routing import routable  # noqa: E402

CALLS = 2000
ROUNDS = 9  # side_by_side's rounds per pair


def per_call_us(fn: Callable[[], Any]) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / CALLS * 1e6


def side_by_side(
    first: Callable[[], Any],
    second: Callable[[], Any],
    rounds: int = ROUNDS,
    around_first: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
) -> dict[str, float]:
    """per_call_us of two calls in alternating rounds (ab, ba, ab, ...), so that the host's
    slow spells fall on both: the median of each, and of the differences within a round.
    `around_first` is entered for each timing of the first (kernelgen_ops.use, for routing)."""
    from kernelgen.bench.timing import rotated

    calls = {"first": first, "second": second}
    got: dict[str, list[float]] = {"first": [], "second": []}
    for r in range(rounds):
        for name in rotated(list(calls), r):
            with around_first() if name == "first" else contextlib.nullcontext():
                got[name].append(per_call_us(calls[name]))
    diffs = sorted(x - y for x, y in zip(got["first"], got["second"], strict=True))
    return {
        "first": statistics.median(got["first"]),
        "second": statistics.median(got["second"]),
        "diff": statistics.median(diffs),
        "diff_low": diffs[0],
        "diff_high": diffs[-1],
    }


def graph_us(fn: Callable[[], Any]) -> float:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(100):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / 1000


Launch = tuple[Any, Any, tuple, dict[str, Any], Any]  # (kernel, grid, args, kwargs, compiled)


def raw_launcher(op: str) -> Callable[..., Any]:
    """kernelgen_ops.<op>'s module function itself (under plans' Planned wrapper)."""
    launcher = getattr(importlib.import_module(f"kernelgen_ops.{op}"), op)
    return launcher.__wrapped__ if isinstance(launcher, _plans.Planned) else launcher


def launches(op: str, args: tuple) -> list[Launch]:
    """The kernel launches one call of the launcher makes, with their arguments and outputs,
    kept: replayed, they are the bare launches."""
    module = importlib.import_module(f"kernelgen_ops.{op}")
    kernels = [v for v in vars(module).values() if isinstance(v, _launch.LeanKernel)]
    seen: list[Launch] = []
    for kernel in kernels:

        def record(grid, a, kw, kernel=kernel, launch=kernel._launch):
            compiled = launch(grid, a, kw)
            seen.append((kernel, grid, a, kw, compiled))
            return compiled

        kernel._launch = record  # an instance attribute over LeanKernel._launch
    try:
        raw_launcher(op)(*args)
    finally:
        for kernel in kernels:
            del kernel._launch
    return seen


def bare(recorded: list[Launch], triton_path: bool = False) -> Callable[[], None]:
    """The recorded launches again, `kernel[grid](...)` lean or through JITFunction.run."""

    def call() -> None:
        for kernel, grid, args, kwargs, _ in recorded:
            (kernel.jit if triton_path else kernel)[grid](*args, **kwargs)

    return call


def compiled_runs(recorded: list[Launch]) -> Callable[[], None]:
    """The recorded launches with everything pre-computed (grid, stream, handles, pointers as
    ints, every argument in signature order, no hooks), handed to Triton's C launch function
    where a replay hands it them (_plans._direct), else to CompiledKernel.run: what no Python
    launcher can beat."""
    stream = torch.cuda.current_stream().cuda_stream
    runs = []
    for kernel, grid, args, kwargs, compiled in recorded:
        signature = kernel.jit.signature
        params = {k: v for k, v in kwargs.items() if k in signature.parameters}
        bound = signature.bind(*args, **params)
        bound.apply_defaults()
        values = [
            v.data_ptr() if isinstance(v, torch.Tensor) else v for v in bound.arguments.values()
        ]
        head = [*(*grid, 1, 1)[:3], stream, compiled.function]
        direct = _plans._direct(compiled.run)
        if direct is None:
            runs.append(
                (compiled.run, (*head, compiled.packed_metadata, None, None, None, *values))
            )
        else:
            c_launch, cooperative, pdl = direct
            rest = (cooperative, pdl, None, None, compiled.packed_metadata, None, None, None)
            runs.append((c_launch, (*head, *rest, *values)))

    def call() -> None:
        for run, full in runs:
            run(*full)

    return call


def cases() -> Iterator[tuple[str, str, tuple, Callable[[], Any]]]:
    """(op, shape, arguments, torch eager on them) at decode shapes."""
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(1, 32000, device=dev, dtype=dt)
    yield "softmax", "1x32000", (x,), lambda: torch.softmax(x, -1)
    # The library bench's worst softmax decode shape for host time (2026-12-03: +2.78 us over
    # eager, paired by round; evaluations/library/bench-20261203T164653Z.json), where eager is
    # bound by its 13.5 us of device time.
    x16 = torch.randn(16, 32000, device=dev, dtype=dt)
    yield "softmax", "16x32000", (x16,), lambda: torch.softmax(x16, -1)
    h = torch.randn(1, 4096, device=dev, dtype=dt)
    w = torch.rand(4096, device=dev, dtype=dt) + 0.5
    eager_rms = lambda: torch.nn.functional.rms_norm(h, (4096,), w, 1e-6)  # noqa: E731
    yield "rms_norm", "1x4096", (h, w, 1e-6), eager_rms
    # The library bench's worst routed shape (2026-12-03: F.rms_norm under use() about 2 us
    # slower than without, paired by round).
    h16 = torch.randn(16, 4096, device=dev, dtype=dt)
    eager_rms16 = lambda: torch.nn.functional.rms_norm(h16, (4096,), w, 1e-6)  # noqa: E731
    yield "rms_norm", "16x4096", (h16, w, 1e-6), eager_rms16
    g = torch.randn(1, 2 * 14336, device=dev, dtype=dt)
    eager_silu = lambda: torch.nn.functional.silu(g[..., :14336]) * g[..., 14336:]  # noqa: E731
    yield "silu_and_mul", "1x14336", (g,), eager_silu


def measure(op: str, shape: str, args: tuple, eager: Callable[[], Any]) -> dict[str, Any]:
    public = getattr(kernelgen_ops, op)
    custom = getattr(torch.ops.kernelgen_ops, op)
    row: dict[str, Any] = {
        "op": op,
        "shape": shape,
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "lean_active": _launch.ACTIVE,
    }
    kernelgen_ops.set_dispatch("kernel")
    try:
        row.update(replayed(op, public, args))
        pair = side_by_side(lambda: public(*args), eager)
        row["public_us"], row["eager_us"] = pair["first"], pair["second"]
        row["public_minus_eager_us"] = pair["diff"]
        row["public_minus_eager_range_us"] = [
            round(pair["diff_low"], 2),
            round(pair["diff_high"], 2),
        ]
        row["custom_op_us"] = per_call_us(lambda: custom(*args))
        _plans.set_enabled(False)  # the public call's kept check and dispatch, the lean launcher
        try:
            row["public_unplanned_us"] = per_call_us(lambda: public(*args))
            _launch.set_enabled(False)
            try:
                row["public_triton_path_us"] = per_call_us(lambda: public(*args))
            finally:
                _launch.set_enabled(True)
        finally:
            _plans.set_enabled(True)
    finally:
        kernelgen_ops.set_dispatch("measured")
    row["public_measured_dispatch_us"] = per_call_us(lambda: public(*args))
    # The public call as shipped (the table's path, torch's op where the kernel lost) against
    # eager: [H]'s host rule.
    pair = side_by_side(lambda: public(*args), eager)
    row["measured_minus_eager_us"] = pair["diff"]
    row["measured_minus_eager_range_us"] = [round(pair["diff_low"], 2), round(pair["diff_high"], 2)]
    recorded = launches(op, args)
    row["launches_per_call"] = len(recorded)
    if recorded:  # lean launches are active: the kernels are LeanKernels
        row["bare_lean_us"] = per_call_us(bare(recorded))
        row["bare_triton_us"] = per_call_us(bare(recorded, triton_path=True))
        row["bare_compiled_run_us"] = per_call_us(compiled_runs(recorded))
        row["gpu_graph_us"] = graph_us(bare(recorded))
    launcher = raw_launcher(op)
    row["launcher_us"] = per_call_us(lambda: launcher(*args))
    out = public(*args)
    row["empty_us"] = per_call_us(lambda: torch.empty(out.shape, dtype=out.dtype, device="cuda"))
    from kernelgen.bench import timing

    kernelgen_ops.set_dispatch("kernel")
    try:
        call = timing.rotating(public, timing.graph_pool([list(args)]))
        row["public_bench_library_us"] = timing.host_us(call, 200)
    finally:
        kernelgen_ops.set_dispatch("measured")
    if op in routable():
        row.update(routed(op, args, eager))
    if PROFILE:
        row["profile"] = profile(lambda: public(*args))
    row = {k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()}
    row["lean_saves_us"] = round(row["public_triton_path_us"] - row["public_unplanned_us"], 2)
    row["plans_save_us"] = round(row["public_unplanned_us"] - row["public_us"], 2)
    return row


PROFILE = "--profile" in sys.argv


def routed(op: str, args: tuple, eager: Callable[[], Any]) -> dict[str, Any]:
    """The torch call under use() against without, side by side (routed_minus_plain_us, the
    library bench's `routed` rule: the same call, `eager`, routed and not), and what the
    route's path to torch's op costs: the route alone (torch's function swapped for one that
    does nothing, called as `call` calls it, whose own cost nothing_us is) and each step of
    its lookup."""
    from kernelgen_ops import _routing, _runtime

    x = args[0]
    if op == "softmax":
        plain, call = torch.softmax, (lambda f: f(x, -1))
    else:
        plain, call = torch.nn.functional.rms_norm, (lambda f: f(x, (x.shape[-1],), *args[1:]))
    with kernelgen_ops.use(include=[op]):
        route = torch.softmax if op == "softmax" else torch.nn.functional.rms_norm
        eager()  # the shape's answer kept
    assert route is not plain and route.__wrapped__ is plain
    pair = side_by_side(eager, eager, around_first=lambda: kernelgen_ops.use(include=[op]))
    kept, shape = _runtime.ROUTED_KEPT[op], x.shape
    to_torch = kept.get(_runtime.routed_key(shape))
    row: dict[str, Any] = {
        "route_answer": "torch" if to_torch else "kernel",
        "routed_minus_plain_us": pair["diff"],
        "routed_minus_plain_range_us": [round(pair["diff_low"], 2), round(pair["diff_high"], 2)],
    }
    # The route's path to the kernel (set_dispatch("kernel")), against the plain call: what a
    # routed call costs where the table sends it to the kernel.
    pair = side_by_side(eager, eager, around_first=lambda: _routed_to_kernel(op))
    row["routed_kernel_minus_plain_us"] = pair["diff"]
    if op == "softmax":  # F.softmax (nn.Softmax's call) too: its route skips F's own body
        functional = lambda: torch.nn.functional.softmax(x, -1)  # noqa: E731
        pair = side_by_side(
            functional, functional, around_first=lambda: kernelgen_ops.use(include=[op])
        )
        row["functional_routed_minus_plain_us"] = pair["diff"]
    if not to_torch:
        return row  # the steps below are those of the path to torch's op
    nothing = lambda *a, **k: None  # noqa: E731
    # The route of `plain`'s entry point, passing every call on to `nothing` (no shortcut past
    # it to torch's op): its cost alone.
    entry = next(e for e in _routing.entries(op) if getattr(e.owner, e.attr) is plain)
    bare = _routing._route(op, entry, nothing, shortcut=False)
    return row | {
        "route_alone_us": per_call_us(lambda: call(bare)),
        "nothing_us": per_call_us(lambda: call(nothing)),
        "step_shape_us": per_call_us(lambda: x.shape),
        "step_device_index_us": per_call_us(_runtime._device_index),
        "step_lookup_us": per_call_us(lambda: kept.get(_runtime.routed_key(shape))),
        "step_dynamo_us": per_call_us(torch.compiler.is_dynamo_compiling),
    }


@contextlib.contextmanager
def _routed_to_kernel(op: str) -> Iterator[None]:
    with kernelgen_ops.use(include=[op]):
        kernelgen_ops.set_dispatch("kernel")
        try:
            yield
        finally:
            kernelgen_ops.set_dispatch("measured")


def replayed(op: str, public: Callable[..., Any], args: tuple) -> dict[str, Any]:
    """Whether the public call (forced onto the kernel by the caller) keeps a launch plan for
    these arguments, and whether its replay's output equals the launcher's bit for bit."""
    call = getattr(kernelgen_ops, f"_{op}_call")
    call.forget()
    public(*args)  # the first call of the key, watched: the one answer kept
    (kept,) = call._answers.values()
    fresh = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    same = torch.equal(public(*fresh), raw_launcher(op)(*fresh))
    plan = kept[3] if isinstance(kept[3], _plans._Plan) else None
    row_source = {"call_source": getattr(call.fast, "source", None)}
    if not same:
        raise SystemExit(f"host_overhead.py: {op}: a replay's output differs from the launcher's")
    row: dict[str, Any] = {"planned": "replayed" if plan else "no plan", "planned_equal": same}
    row |= row_source
    if plan is not None:
        row["plan_source"] = plan.source  # what every repeat call of this key runs
    return row


def profile(fn: Callable[[], Any], top: int = 14) -> list[str]:
    """cProfile's top functions by own time over CALLS calls (forced onto the kernel)."""
    import cProfile
    import pstats

    kernelgen_ops.set_dispatch("kernel")
    try:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(CALLS):
            fn()
        prof.disable()
        torch.cuda.synchronize()
    finally:
        kernelgen_ops.set_dispatch("measured")
    stats = pstats.Stats(prof).sort_stats("tottime")
    lines = []
    for (path, line, name), (_, calls, own, cum, _) in list(stats.stats.items()):
        where = f"{calls // CALLS:3d}x {path.split('/')[-1]}:{line} {name}"
        lines.append((own, f"{own / CALLS * 1e6:7.2f} us own {cum / CALLS * 1e6:7.2f} cum {where}"))
    return [text for _, text in sorted(lines, reverse=True)[:top]]


def main() -> None:
    sys.argv = [a for a in sys.argv if a != "--profile"]
    rows = []
    for case in cases():
        rows.append(measure(*case))
        print(json.dumps(rows[-1]))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
