"""The benchmark, inside a sandboxed CUDA process: time contenders and peers, return records.

Two targets for `run_isolated`:
- `main`: BenchRequest in, BenchResult out. Per benchmark shape, every contender (the candidate,
  the seed, the current best...) and the peers (torch eager and torch.compile of the op as torch
  users call it, in the input dtype) are timed in the same interleaved rounds on the same rotated
  input sets, by the method the contenders' probes chose (timing.choose_method). Peers the
  request brings from the cache (bench.peers) for that shape and method are not compiled nor
  timed; those timed here come back in the result for the caller to store.
- `tune_main`: TuneRequest in, TuneResult out. Many variants of one candidate (one per config),
  no peers, the baseline (the current best, when the request names one) timed among them; a
  variant that fails to compile or runs out of resources fails alone. A variant that leaves the
  CUDA context broken stops the process, and the caller starts a fresh one for the others.

The requests and results are messages.py's (importable without torch, for the parent); loading a
contender, launching it as shipped and reading its compile facts are contender.py's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kernelgen import gpulock
from kernelgen.bench import roofline
from kernelgen.bench.ceilings import get_ceilings
from kernelgen.bench.contender import as_shipped, compile_facts, file_sha256, load_entry
from kernelgen.bench.messages import (
    PEERS,
    BenchRequest,
    BenchResult,
    Contender,
    Skip,
    TuneRequest,
    TuneResult,
    VariantShape,
    VariantTiming,
    select_shapes,
)
from kernelgen.bench.peers import PeerCache, PeerEntry, entry_key, peer_kind, reference_sha
from kernelgen.bench.timing import (
    PROTOCOL,
    Method,
    choose_method,
    describe_error,
    graph_pool,
    interleaved,
    rotating,
)
from kernelgen.records import BenchRecord, Environment, PeerTime, ShapeFailure, ShapeTiming
from kernelgen.spec import BenchShape, OpSpec, Tolerance, load_spec

# The targets, and what callers import from here: the messages (messages.py) and the contender's
# loading and compile facts (contender.py) that the targets use.
__all__ = [
    "BenchRequest",
    "BenchResult",
    "Contender",
    "Skip",
    "TuneRequest",
    "TuneResult",
    "VariantShape",
    "VariantTiming",
    "as_shipped",
    "compile_facts",
    "main",
    "recheck",
    "run_bench",
    "run_tune",
    "select_shapes",
    "tune_main",
]

SEED_LABEL = "seed"
GPU_MEMORY_FRACTION = 0.9
INPUT_SETS = 4
# Above this, two sets: rotation only has to defeat a 60 MB L2, and inputs are drawn on the CPU.
LARGE_SET_BYTES = 1 << 30


def _input_sets(spec: OpSpec, shape: BenchShape, seed: int) -> list[list[Any]]:
    """Several input sets from different seeds ("normal" values: never zeros)."""
    from kernelgen.spec.inputs import case_seed, make_inputs

    def make(i: int) -> list[Any]:
        s = case_seed(seed, f"bench/{shape.name}/{i}")
        return make_inputs(spec, shape, shape.dtype, "normal", s, "cuda")

    first = make(0)
    size = sum(a.nbytes for a in first if isinstance(a, torch.Tensor))
    n = INPUT_SETS if size < LARGE_SET_BYTES else 2
    return [first] + [make(i) for i in range(1, n)]


def _warm(call: Callable[[], Any]) -> str | None:
    """One call outside the timings (JIT compile, autotune, torch.compile); its error, if any."""
    try:
        call()
        torch.cuda.synchronize()
    except Exception as e:  # reported per implementation and shape, never fatal here
        return describe_error(e)
    return None


def _cuda_ok() -> bool:
    """False once an illegal access or a launch failure has broken this process's context."""
    try:
        torch.cuda.synchronize()
        return torch.ones(1, device="cuda").add_(1).item() == 2.0
    except Exception:  # any failure here means the context is gone
        return False


def _geomean(values: list[float | None]) -> float | None:
    return roofline.geomean(v for v in values if v is not None)


def recheck(
    spec: OpSpec, shape: BenchShape, fns: dict[str, Callable[..., Any]], sets: list[list[Any]]
) -> dict[str, str]:
    """Verify what was timed: after its timed calls, each contender must still give torch's
    answer on this shape (by `disagreement`'s rule), or its times measured something else (a
    kernel that stops working once it has been called often enough, say). Returns label -> why,
    for those that fail.

    The first input set and the last: contenders run as shipped (as_shipped) replay a launch
    plan made on their first call, and the two sets have the same key but other data and other
    addresses, so a launcher whose choices depend on more than the key (_plans.py) shows here."""
    bad: dict[str, str] = {}
    for args in [sets[0], *sets[1:][-1:]]:
        with torch.no_grad():
            expected = spec.eager(*args)
        for label, fn in fns.items():
            if label in bad:
                continue
            try:
                out = fn(*args)
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - it ran during timing; now it does not
                bad[label] = f"after timing: {describe_error(e)}"
                continue
            why = disagreement(spec, shape, out, expected, args)
            if why is not None:
                bad[label] = f"after timing, the output is not torch's: {why}"
    return bad


def disagreement(
    spec: OpSpec,
    shape: BenchShape,
    out: Any,
    expected: Any,
    args: list[Any] | None,
    loose: Tolerance | None = None,
) -> str | None:
    """Why `out` is not the answer `expected` (torch's, or a peer's own problem's) on a bench
    shape, None when it is. The operator's own rule (index sets in any order, quantized values
    a step apart, a GEMM's error against its operands' scale), given `args`, the reference's
    arguments that pose the problem; where there is no such rule or no such arguments (a peer
    that computes another problem in its own layout), per element within `loose`: by default
    twice the verifier's tolerance, since torch's answer here is itself rounded to the input
    dtype."""
    from kernelgen.verify import checks

    failure = checks.structure(out, expected)
    if failure is not None:
        return failure.reason
    if spec.compare is not None and args is not None:
        return spec.judge(out, expected, shape, args)
    if loose is None:
        tol = spec.tolerance(shape.dtype, shape.dims)
        loose = Tolerance(rtol=2 * tol.rtol, atol=2 * tol.atol)
    for o, r in zip(checks.leaves(out), checks.leaves(expected), strict=True):
        failure, _ = checks.values(o, r, loose)
        if failure is not None:
            return failure.reason
    return None


class _Peers:
    """The peers of one bench call: from the request's cache where it has the shape and method,
    else timed here and gathered for the caller to store."""

    def __init__(self, spec: OpSpec, req: BenchRequest, env: Environment):
        self.wanted = req.peers
        self.kind = peer_kind(spec)
        self.reference = reference_sha(spec) if req.peers else ""
        gpu = env.gpu or ""
        self.cache = next(
            (c for c in req.cached_peers or [] if c.same_stack(gpu, env.torch, env.triton)), None
        )
        self.fresh = PeerCache(op=spec.name, gpu=gpu, torch=env.torch, triton=env.triton)

    def cached(self, shape: BenchShape, method: Method) -> PeerEntry | None:
        if not self.wanted or self.cache is None:
            return None
        return self.cache.find(entry_key(shape, method, PROTOCOL, self.reference, self.kind))

    def measured(
        self, shape: BenchShape, method: Method, times: dict[str, PeerTime], errors: dict[str, str]
    ) -> None:
        """Keep what this run measured, unless the context is broken: then a peer's failure may
        be a contender's doing, and must not be cached as the peer's own."""
        if not _cuda_ok():
            return
        entry = PeerEntry(
            shape=shape.name,
            dtype=shape.dtype,
            dims=shape.dims,
            method=method,
            protocol=PROTOCOL,
            reference=self.reference,
            peers=self.kind,
            eager=times.get("eager"),
            compile=times.get("compile"),
            failed=[
                ShapeFailure(shape=shape.name, who=p, error=errors[p]) for p in PEERS if p in errors
            ],
        )
        self.fresh.entries.append(entry)


def _from_cache(entry: PeerEntry) -> tuple[dict[str, PeerTime], dict[str, str]]:
    """A cached entry's times, marked as cached, and its peers' failures."""
    times = {
        who: t.model_copy(update={"cached": True, "measured": entry.measured})
        for who, t in (("eager", entry.eager), ("compile", entry.compile))
        if t is not None
    }
    return times, {f.who: f.error for f in entry.failed}


def run_bench(req: BenchRequest) -> BenchResult:
    from kernelgen.env import environment

    spec = load_spec(req.op)
    shapes = select_shapes(spec, req.shapes)
    ceilings = get_ceilings()
    env = environment("cuda")
    peers = _Peers(spec, req, env)
    labels = [c.label for c in req.contenders]
    modules: dict[str, ModuleType | None] = {}
    fns: dict[str, Callable[..., Any]] = {}
    load_errors: dict[str, str] = {}
    launch: str = "as written"
    for i, c in enumerate(req.contenders):
        module, fn = load_entry(c.path, f"kernelgen_bench_{i}", spec.name)
        modules[c.label] = module
        if isinstance(fn, str):
            load_errors[c.label] = fn
            continue
        shipped = as_shipped(module, fn, spec.name) if module is not None else None
        if shipped is not None:
            fn, launch = shipped, "kernelgen_ops"
        fns[c.label] = fn
    rows: dict[str, list[ShapeTiming]] = {label: [] for label in labels}
    failed: dict[str, list[ShapeFailure]] = {label: [] for label in labels}

    for shape in shapes:
        # Each shape compiles its own static graph; a reset keeps dynamo's recompile limit and
        # automatic-dynamic shapes out of the peer's figures.
        torch.compiler.reset()
        # The GPU lock (kernelgen/gpulock.py): inputs and the contenders' first calls (their
        # kernels compiled ahead by the judge) beside other jobs' judges; the probe and the
        # rounds alone on the GPU.
        with gpulock.shared("bench inputs and first calls", spec.name):
            sets = _input_sets(spec, shape, req.seed)
            pool = graph_pool(sets)
            calls = {label: rotating(fn, sets) for label, fn in fns.items()}
            replays = {label: rotating(fn, pool) for label, fn in fns.items()}
            errors = dict(load_errors)
            errors.update((label, err) for label, call in calls.items() if (err := _warm(call)))
        # The contenders alone choose the method: with peers from the cache or timed here, the
        # shape is timed the same way.
        with gpulock.exclusive("bench method probe", spec.name):
            method, n_calls = choose_method({k: replays[k] for k in calls if k not in errors})
        entry = peers.cached(shape, method)
        timed_peers = req.peers and entry is None
        if timed_peers:
            impls = {"eager": spec.eager, "compile": torch.compile(spec.eager, dynamic=False)}
            for label, fn in impls.items():
                calls[label], replays[label] = rotating(fn, sets), rotating(fn, pool)
                # No lock: torch.compile's compile step, minutes of CPU at worst.
                if err := _warm(calls[label]):
                    errors[label] = err
        with gpulock.exclusive("bench rounds", spec.name):
            times, late = interleaved(
                {k: v for k, v in calls.items() if k not in errors},
                rounds=req.rounds,
                method=method,
                n_calls=n_calls,
                replay_calls=replays,
            )
            errors.update(late)
            fine = {k: f for k, f in fns.items() if k not in errors}
            errors.update(recheck(spec, shape, fine, sets))
        if timed_peers:
            peers.measured(shape, method, times, errors)
        elif entry is not None:
            cached_times, cached_errors = _from_cache(entry)
            times.update(cached_times)
            errors.update(cached_errors)
        cost = spec.cost(shape.dims, shape.dtype)
        seed_time = times.get(SEED_LABEL)
        for label in labels:
            if label not in times:
                why = errors.get(label, "no time")
                failed[label].append(ShapeFailure(shape=shape.name, who="candidate", error=why))
                continue
            is_seed = label == SEED_LABEL
            others = [*PEERS, *([] if is_seed else [SEED_LABEL])]
            failed[label] += [
                ShapeFailure(shape=shape.name, who=who, error=errors[who])  # type: ignore[arg-type]
                for who in others
                if who in errors
            ]
            rows[label].append(
                roofline.shape_timing(
                    shape.name,
                    shape.dtype,
                    cost.bytes,
                    cost.flops,
                    times[label],
                    ceilings,
                    eager=times.get("eager"),
                    compiled=times.get("compile"),
                    seed=None if is_seed else seed_time,
                    precision=cost.flops_at,
                )
            )
        del sets, pool, calls, replays
        torch.cuda.empty_cache()

    records = []
    for c in req.contenders:
        module = modules[c.label]
        shape_rows = rows[c.label]
        records.append(
            BenchRecord(
                op=spec.name,
                candidate=c.path,
                sha256=file_sha256(c.path),
                label=c.label,
                shapes=shape_rows,
                ceilings=ceilings,
                environment=env,
                geomean_eager=_geomean([r.speedup_eager for r in shape_rows]),
                geomean_compile=_geomean([r.speedup_compile for r in shape_rows]),
                geomean_seed=_geomean([r.speedup_seed for r in shape_rows]),
                failed=failed[c.label],
                compile=compile_facts(module) if module is not None else [],
                peers=peers.kind if req.peers else None,
                launch=launch,
            )
        )
    return BenchResult(records=records, peers=peers.fresh if peers.fresh.entries else None)


def _prepare(root: str, seed: int) -> None:
    os.chdir(root)
    # A runaway allocation fails as an OOM of its own instead of starving the card.
    torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)
    torch.manual_seed(seed)


def main(request: str) -> str:
    """Sandbox target: BenchRequest JSON in, BenchResult JSON out."""
    req = BenchRequest.model_validate_json(request)
    _prepare(req.root, req.seed)
    with torch.no_grad():
        return run_bench(req).model_dump_json()


def run_tune(req: TuneRequest) -> TuneResult:
    from kernelgen.env import environment

    spec = load_spec(req.op)
    shapes = select_shapes(spec, req.shapes)
    indices = req.numbers
    env = environment("cuda")
    results: dict[int, list[VariantShape]] = {i: [] for i in indices}
    modules: dict[int, ModuleType] = {}
    fns: dict[int, Callable[..., Any]] = {}
    load_errors: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="kernelgen-tune-") as tmp:
        for i, source in zip(indices, req.sources, strict=True):
            path = Path(tmp) / f"variant_{i}.py"
            path.write_text(source)
            # Triton reads a kernel's source from its file: it must exist while compiling.
            module, fn = load_entry(str(path), f"kernelgen_variant_{i}", spec.name)
            if module is not None:
                modules[i] = module
            if isinstance(fn, str):
                load_errors[i] = fn
            else:
                fns[i] = fn

        def result() -> TuneResult:
            return TuneResult(
                variants=[
                    VariantTiming(
                        index=i,
                        shapes=results[i],
                        compile=compile_facts(modules[i]) if i in modules else [],
                    )
                    for i in indices
                ],
                environment=env,
            )

        for shape in shapes:
            skipped = {k.index: k.reason for k in req.skip if k.shape == shape.name}
            run = {i: fn for i, fn in fns.items() if i not in skipped}
            errors = {**load_errors, **skipped}
            # The GPU lock (kernelgen/gpulock.py): inputs and first calls (the variants were
            # compiled ahead: a load and a call) beside other jobs' judges, the rounds alone.
            with gpulock.shared("tune inputs and first calls", spec.name):
                sets = _input_sets(spec, shape, req.seed)
                pool = graph_pool(sets)
                calls = {str(i): rotating(fn, sets) for i, fn in run.items()}
                replays = {str(i): rotating(fn, pool) for i, fn in run.items()}
                for key, call in calls.items():
                    err = _warm(call)
                    if err is None:
                        continue
                    errors[int(key)] = err
                    if not _cuda_ok():
                        results[int(key)].append(VariantShape(shape=shape.name, error=err))
                        out = result()
                        out.poisoned_by, out.poisoned_shape = int(key), shape.name
                        return out
            live = {k: c for k, c in calls.items() if int(k) not in errors}
            with gpulock.exclusive("tune rounds", spec.name):
                method, n_calls = choose_method({k: replays[k] for k in live})
                times, late = interleaved(
                    live,
                    rounds=req.rounds,
                    max_rounds=req.rounds,  # many variants: a fixed count keeps the search bounded
                    method=method,
                    n_calls=n_calls,
                    replay_calls=replays,
                    host=False,
                )
            errors.update({int(k): e for k, e in late.items()})
            base = times.get(str(req.baseline)) if req.baseline is not None else None
            for i in indices:
                t = times.get(str(i))
                against = base if i != req.baseline else None
                results[i].append(
                    VariantShape(
                        shape=shape.name,
                        median_us=t.median_us if t else None,
                        spread=t.spread if t else None,
                        method=t.method if t else None,
                        baseline_us=against.median_us if against else None,
                        baseline_spread=against.spread if against else None,
                        error=None if t else errors.get(i, "no time"),
                    )
                )
            del sets, pool, calls, replays, live
            torch.cuda.empty_cache()
        return result()


def tune_main(request: str) -> str:
    """Sandbox target: TuneRequest JSON in, TuneResult JSON out."""
    req = TuneRequest.model_validate_json(request)
    _prepare(req.root, req.seed)
    with torch.no_grad():
        return run_tune(req).model_dump_json()
