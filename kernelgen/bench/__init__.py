"""Benchmarking on the GPU: time candidates against their peers, and decide what wins.

All timing runs in a fresh sandboxed process (`kernelgen.bench.worker`): candidate code is
untrusted, and a CUDA error poisons the process it happens in. This module validates the request,
starts the worker, and judges the records it returns; it prints nothing.
"""

from __future__ import annotations

import random
import re
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import ValidationError

from kernelgen import paths, store
from kernelgen.bench import roofline
from kernelgen.bench.roofline import geomean
from kernelgen.errors import KernelgenError, NoDeviceError, UsageError, first_error
from kernelgen.records import BenchRecord, CompileFacts, Environment, ShapeTiming
from kernelgen.spec import OpSpec, load_spec

if TYPE_CHECKING:
    from kernelgen.bench.worker import Skip, TuneResult, VariantShape

__all__ = ["accepts", "bench_files", "save_bench", "tune_variants"]

DEFAULT_TIMEOUT_S = 600.0
# The tuner's budget for one variant's compile on one shape. A verify waits minutes for a huge
# whole-row block (it must judge the kernel as written); a search need not: softmax's 262144-wide
# block took 50-60 s per num_warps on the H200, so its two vocab buckets alone outran the 90 s
# target of a whole tune. A variant past the budget is not timed on that shape, so it cannot win
# that bucket, which keeps the baseline's config.
TUNE_COMPILE_S = 30.0
# Host memory cap of the worker: inputs are drawn in float64 on the CPU before they move, and
# torch.compile keeps its graphs in this process.
BENCH_MEMORY_MB = 32768

# The acceptance rule (DESIGN.md, Timing): a candidate wins when its geometric-mean speedup over
# the best beats 1 + max(MIN_GAIN, NOISE_FACTOR * noise) and no shape regresses by more than
# MAX_REGRESSION; or when it wins one shape by more than a shape may regress and loses none by
# more than a geomean must gain (a dominant candidate, which the geomean alone dilutes).
MIN_GAIN = 0.02
NOISE_FACTOR = 3.0
MAX_REGRESSION = 0.05


def _require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        raise NoDeviceError("no CUDA device: kernelgen bench needs a GPU")


def _new_seed(seed: int | None) -> int:
    return seed if seed is not None else random.SystemRandom().randrange(2**31)


# Inductor compiles the torch.compile peer in a pool of worker processes that can still be busy
# while the next contender is timed; decode-sized shapes are host-bound, so that steals their time
# (a suspected cause of the 30% round-to-round spread seen on the H200 machine, not yet confirmed).
QUIET_HOST = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}


def _run_worker(target: str, request: str, timeout_s: float) -> str | tuple[str, str]:
    """The worker's result text, or (category, reason) when it died or timed out."""
    from kernelgen.verify.sandbox import run_isolated

    outcome = run_isolated(
        target,
        request,
        timeout_s=timeout_s,
        memory_mb=BENCH_MEMORY_MB,
        device="cuda",
        env=QUIET_HOST,
    )
    if outcome.result is None:
        return outcome.category or "crash", outcome.reason or "no result"
    return outcome.result


def bench_files(
    op: str,
    contenders: list[tuple[str, Path]],
    peers: bool | Literal["cached"] = True,
    shapes: list[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    seed: int | None = None,
) -> list[BenchRecord]:
    """Time each (label, file) on the operator's bench shapes, interleaved with each other and,
    with `peers`, with torch eager and torch.compile of the reference. One record per contender,
    in the order given. A label "seed" makes the others' records carry speedups over it.

    peers=True times the peers on every shape and refreshes the peer cache
    (evaluations/peers/); peers="cached" takes them from the cache where it has the shape (then
    only the contenders are compiled and timed, and the records mark the peer times cached) and
    times and stores the rest; peers=False leaves them out.

    Raises UsageError for a bad request, NoDeviceError without CUDA, StoreError for a corrupt
    peer cache, KernelgenError when the worker crashes or times out. A contender that fails on a
    shape is recorded, not raised."""
    from kernelgen.bench import peers as peer_cache
    from kernelgen.bench.worker import BenchRequest, BenchResult, Contender, select_shapes

    if peers not in (True, False, "cached"):
        raise UsageError(f"bench {op}: peers must be True, False or 'cached', not {peers!r}")
    spec = load_spec(op)
    select_shapes(spec, shapes)
    for _, path in contenders:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
    try:
        request = BenchRequest(
            op=op,
            root=str(paths.root()),
            contenders=[Contender(label=lbl, path=str(Path(p).resolve())) for lbl, p in contenders],
            peers=bool(peers),
            shapes=shapes,
            seed=_new_seed(seed),
        )
    except ValidationError as e:
        raise UsageError(f"bench {op}: {first_error(e)}") from None
    _require_cuda()
    # Read whenever peers are timed: a corrupt file fails now, not after the minutes the run
    # takes, when its results would be stored beside it.
    caches = peer_cache.load_stack(op, *_stack()) if peers else []
    if peers == "cached":
        request = request.model_copy(update={"cached_peers": caches})
    result = _run_worker("kernelgen.bench.worker:main", request.model_dump_json(), timeout_s)
    if isinstance(result, tuple):
        category, reason = result
        raise KernelgenError(f"bench {op}: the benchmark process failed ({category}): {reason}")
    res = BenchResult.model_validate_json(result)
    if res.peers is not None and res.peers.entries:
        peer_cache.store(res.peers)
    return res.records


def _stack() -> tuple[str, str]:
    """torch and Triton versions, as the worker (same interpreter) will report them."""
    import torch
    import triton

    return torch.__version__, triton.__version__


def tune_variants(
    op: str,
    sources: list[str],
    shapes: list[str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    seed: int | None = None,
    baseline: int | None = None,
    compile_budget_s: float = TUNE_COMPILE_S,
) -> TuneResult:
    """Time each variant source on each shape (no peers): per variant, per shape, the median us
    or why there is none. A variant that fails to compile or runs out of resources fails alone;
    one that breaks the CUDA context or crashes the process is isolated in fresh processes, so
    the others still get times. Only a timeout fails every variant it caught.

    `baseline` is the index of the source the others must beat (the current best as it is): it
    is timed in every worker the variants run in, and each variant's rows carry its time from
    the same process and rounds (baseline_us), so the comparison is interleaved however the
    variants were split. A variant whose compile on a shape runs past `compile_budget_s` is
    not timed there (its row says so)."""
    from kernelgen.bench.worker import select_shapes

    spec = load_spec(op)
    names = [s.name for s in select_shapes(spec, shapes)]
    if not sources:
        raise UsageError(f"tune {op}: no variants to time")
    if baseline is not None and not 0 <= baseline < len(sources):
        raise UsageError(f"tune {op}: baseline {baseline} is not one of {len(sources)} sources")
    _require_cuda()
    compiled, over = compile_variants(spec, sources, names, compile_budget_s)
    start = time.monotonic()
    tuning = _Tuning(op, sources, timeout_s, _new_seed(seed), baseline, over)
    tuning.run(list(range(len(sources))), names)
    result = tuning.result(names)
    result.compile_seconds = round(compiled, 3)
    result.seconds = round(time.monotonic() - start, 3)
    return result


def compile_variants(
    spec: OpSpec, sources: list[str], shapes: list[str], budget_s: float = TUNE_COMPILE_S
) -> tuple[float, list[Skip]]:
    """The whole space compiled for every bench shape, in parallel, before the timing worker
    starts: the worker then loads each binary from Triton's cache instead of compiling one
    variant after another while the GPU waits. Failures are left to the worker, where a
    variant that does not compile fails alone; a compile past `budget_s` is stopped and
    returned as a skip, which the worker must not compile again. Returns the seconds it took
    and the skips."""
    import tempfile

    from kernelgen.bench.worker import Skip
    from kernelgen.verify import DEFAULT_MEMORY_MB, ahead

    by_name = {s.name: s for s in spec.data.bench}
    layouts = [(n, ahead.bench_layout(spec, by_name[n], "cuda")) for n in shapes]
    with tempfile.TemporaryDirectory(prefix="kernelgen-tune-ahead-") as tmp:
        jobs, of = [], {}
        for i, source in enumerate(sources):
            path = Path(tmp) / f"variant_{i}.py"
            path.write_text(source)
            for n, layout in layouts:
                job = ahead.Job(path, layout, f"variant {i} on {n}")
                jobs.append(job)
                of[id(job)] = (i, n)
        pool = ahead.compile_pool(DEFAULT_MEMORY_MB, ahead.workers(), Path(tmp) / "runners")
        try:
            seconds, misses = ahead.compile_ahead(
                spec, pool, jobs, deadline_s=budget_s, replace_dead=True
            )
        finally:
            pool.close()
    reason = f"not timed: its compile ran past the tuner's {budget_s:.0f} s budget"
    skips = [
        Skip(index=of[id(m.job)][0], shape=of[id(m.job)][1], reason=reason)
        for m in misses
        if m.dead is not None and m.dead.category == "timeout"
    ]
    return seconds, skips


class _Tuning:
    """The results of one tune_variants call, gathered over as many workers as it takes."""

    def __init__(
        self,
        op: str,
        sources: list[str],
        timeout_s: float,
        seed: int,
        baseline: int | None,
        skips: list[Skip] | None = None,
    ):
        self.op, self.sources, self.timeout_s, self.seed = op, sources, timeout_s, seed
        self.baseline = baseline
        self.skips = skips or []
        self.found: dict[int, dict[str, VariantShape]] = {i: {} for i in range(len(sources))}
        self.compile: dict[int, list[CompileFacts]] = {}
        self.environment: Environment | None = None

    def _fill(self, indices: list[int], shapes: list[str], error: str) -> None:
        from kernelgen.bench.worker import VariantShape

        for i in indices:
            for n in shapes:
                self.found[i].setdefault(n, VariantShape(shape=n, error=error))

    def _halves(self, indices: list[int]) -> list[list[int]]:
        """A crashed group split in two, the baseline in both halves while it has company (each
        half still shrinks, so the search ends); a baseline with one variant is split off too,
        in case the crash was the baseline's."""
        b = self.baseline
        others = [i for i in indices if i != b]
        if b not in indices or len(others) < 2:
            half = len(indices) // 2
            return [indices[:half], indices[half:]]
        half = len(others) // 2
        return [[b, *others[:half]], [b, *others[half:]]]

    def run(self, indices: list[int], shapes: list[str]) -> None:
        """Time `indices` on `shapes` in one worker; after a broken context go on without the
        culprit, after a crash split the group to find it, each time in fresh workers."""
        from kernelgen.bench.worker import TuneRequest, TuneResult

        request = TuneRequest(
            op=self.op,
            root=str(paths.root()),
            sources=[self.sources[i] for i in indices],
            indices=indices,
            shapes=shapes,
            seed=self.seed,
            baseline=self.baseline if self.baseline in indices else None,
            skip=[k for k in self.skips if k.index in indices and k.shape in shapes],
        )
        result = _run_worker(
            "kernelgen.bench.worker:tune_main", request.model_dump_json(), self.timeout_s
        )
        if isinstance(result, tuple):
            category, reason = result
            if category == "crash" and len(indices) > 1:
                for part in self._halves(indices):
                    self.run(part, shapes)
            else:
                self._fill(indices, shapes, f"{category}: {reason}")
            return
        res = TuneResult.model_validate_json(result)
        self.environment = self.environment or res.environment
        for v in res.variants:
            self.found[v.index].update((s.shape, s) for s in v.shapes)
            if v.compile:
                self.compile[v.index] = v.compile
        bad = res.poisoned_by
        if bad is None:
            return
        self._fill([bad], shapes, "not run: this variant broke the CUDA context")
        rest = [i for i in indices if i != bad]
        if rest and res.poisoned_shape in shapes:
            self.run(rest, shapes[shapes.index(res.poisoned_shape) :])

    def result(self, shapes: list[str]) -> TuneResult:
        from kernelgen.bench.worker import TuneResult, VariantTiming

        self._fill(list(self.found), shapes, "not run: the process stopped first")
        variants = [
            VariantTiming(
                index=i,
                shapes=[self.found[i][n] for n in shapes],
                compile=self.compile.get(i, []),
            )
            for i in range(len(self.sources))
        ]
        return TuneResult(variants=variants, environment=self.environment)


def _ratios(
    new: BenchRecord, best: BenchRecord
) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Per shape timed for both: best time / new time and the noise of that comparison, from
    figures measured the same way (roofline.comparable); apart, the shapes whose figures share
    no method, each with the two methods."""
    ours = {s.shape: s for s in new.shapes}
    ratios: dict[str, float] = {}
    noises: dict[str, float] = {}
    apart: dict[str, str] = {}
    for theirs in best.shapes:
        mine = ours.get(theirs.shape)
        if mine is None:
            continue
        pair = roofline.comparable(theirs.candidate, mine.candidate)
        if pair is None:
            apart[theirs.shape] = f"{mine.candidate.method} here, {theirs.candidate.method} there"
            continue
        t_best, t_new, noise = pair
        ratios[theirs.shape] = t_best / t_new
        noises[theirs.shape] = noise
    return ratios, noises, apart


def speedup(new: BenchRecord, best: BenchRecord) -> float | None:
    """Geometric mean over shapes of best time / new time, as the acceptance rule counts it."""
    ratios, _, _ = _ratios(new, best)
    return geomean(ratios.values())


def _jittery(a: ShapeTiming, b: ShapeTiming) -> bool:
    """A launch-bound shape compared on do_bench times: one launch timed alone measures the
    host's launch gap (162% round to round on the H200 machine) more than the kernel."""
    both_do_bench = a.candidate.method == b.candidate.method == "do_bench"
    return both_do_bench and "launch" in (a.bound, b.bound)


def accepts(new: BenchRecord, best: BenchRecord) -> tuple[bool, str]:
    """The acceptance rule: does `new` beat `best` (both timed in the same interleaved run)?

    Each shape is compared on figures of one method: the headline (graph time for kernels under
    ~50 us, do_bench above), which the contenders of one run share. The geometric-mean speedup
    must beat 1 + max(2%, 3 x noise), where the noise is the median over shapes of the larger of
    the two spreads, taken over the shapes that are not launch-bound do_bench comparisons when
    there are any (those are jitter, not signal). No shape may regress by more than max(5%,
    3 x its own noise).

    A candidate that dominates wins too: one shape faster by more than max(5%, 3 x its noise),
    none slower by more than max(2%, 3 x its noise), and a geomean above 1. Without it a 12%
    win on one shape of six, with the rest unchanged, reads as x1.019 and falls under the bar;
    with it, no shape pays for the win by more than the rule can tell apart from no change."""
    lost = [f for f in new.failed if f.who == "candidate"]
    if lost:
        return False, f"failed on {lost[0].shape}: {lost[0].error}"
    suspect = next((s for s in new.shapes if s.suspect), None)
    if suspect is not None:
        return False, f"{suspect.shape}: {suspect.suspect}; re-check it in a fresh process"
    ours = {s.shape: s for s in new.shapes}
    theirs = {s.shape: s for s in best.shapes}
    missing = [n for n in theirs if n not in ours]
    if missing:
        return False, f"no time on {', '.join(missing)}"
    ratios, noises, apart = _ratios(new, best)
    if apart:
        n, how = next(iter(apart.items()))
        return False, f"{n}: no figure measured the same way for both ({how})"
    common = list(ratios)
    if not common:
        # The kernel to beat failed at every shape this one ran: the library's kernel at dims a
        # changed spec brought (sparse_attn's 576/512, past its shared memory on sm_90). The
        # kernel that runs wins; where both ran somewhere, the rule below holds there.
        outright = {
            f.shape: f.error for f in best.failed if f.who == "candidate" and f.shape in ours
        }
        if outright:
            shape, error = next(iter(outright.items()))
            return True, (
                f"the kernel to beat ran at none of the {len(outright)} shapes this one ran "
                f"({shape}: {error})"
            )
        return False, "no shape was timed for both"
    gain = geomean(ratios.values()) or 0.0
    steady = [n for n in common if not _jittery(ours[n], theirs[n])]
    noise = statistics.median(noises[n] for n in (steady or common))
    need = 1.0 + max(MIN_GAIN, NOISE_FACTOR * noise)
    for n in sorted(common, key=ratios.__getitem__):
        allowed = max(MAX_REGRESSION, NOISE_FACTOR * noises[n])
        if ratios[n] < 1.0 / (1.0 + allowed):
            return False, (
                f"{n} regresses by {1.0 / ratios[n] - 1.0:.1%} (more than {allowed:.0%}); "
                f"geomean x{gain:.3f}"
            )
    if gain < need:
        won = _dominates(ratios, noises)
        if won is not None and gain > 1.0:
            return True, (
                f"{won} x{ratios[won]:.3f}, no shape slower than the noise allows; "
                f"geomean x{gain:.3f}"
            )
        return False, (
            f"geomean x{gain:.3f} over the best does not beat x{need:.3f} "
            f"(1 + max({MIN_GAIN:.0%}, {NOISE_FACTOR:g} x noise {noise:.1%}))"
        )
    worst = min(ratios, key=ratios.__getitem__)
    return True, f"geomean x{gain:.3f} beats x{need:.3f}; worst shape {worst} x{ratios[worst]:.3f}"


def _dominates(ratios: dict[str, float], noises: dict[str, float]) -> str | None:
    """The shape a dominant candidate wins most on, or None where it does not dominate."""
    for n, r in ratios.items():
        if r < 1.0 / (1.0 + max(MIN_GAIN, NOISE_FACTOR * noises[n])):
            return None
    best = max(ratios, key=ratios.__getitem__)
    won = ratios[best] > 1.0 + max(MAX_REGRESSION, NOISE_FACTOR * noises[best])
    return best if won else None


def save_bench(record: BenchRecord, op: str | None = None) -> Path:
    """Write a record to evaluations/<op>/bench-<label>-<UTC time>.json, atomically."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", record.label)
    folder = store.op_dir(op or record.op)
    path = folder / f"bench-{label}-{stamp}.json"
    n = 2
    while path.exists():  # two records of one label within a second
        path = folder / f"bench-{label}-{stamp}-{n}.json"
        n += 1
    store.write_atomic(path, record.model_dump_json(indent=2))
    return path
