"""The run's judge: runs in kernelgen's own process and judges the candidates of one run (one
operator, one device, one seed). It holds what they share: the ground truth, the warm runners,
the compile runners and the compile-ahead index, the per-case deadlines, the verdicts already
given. Each candidate is judged by a sandboxed runner of its own (verdict.py); the judged never
shares a process with the judge.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from kernelgen import gpulock
from kernelgen.paths import triton_cache
from kernelgen.records import Phases, Verdict
from kernelgen.spec import Case, OpSpec, load_spec
from kernelgen.spec.draw import drawn_cases
from kernelgen.verify import ahead, limits, sanitizer
from kernelgen.verify.checks import Failure, Rejected, classify
from kernelgen.verify.sandbox import DEFAULT_MEMORY_MB, sandbox_env
from kernelgen.verify.session import Pool
from kernelgen.verify.truth import Truths
from kernelgen.verify.verdict import Judging

# A hanging call is found by its deadline: the seed's own time on that case times SLACK, plus an
# allowance (a compile the ahead-of-time pass missed), never past the cap. Without the seed's
# times, the cap. A cold verdict spends about 20 s on CUDA before its first call (runners,
# compiles, truths) and 15 s on calls, so a hang at its last case must be cut at 15 s to keep
# the verdict within a minute. In every committed CUDA verdict an honest call took at most
# 7.8 s (a first call that compiled), 2.6 s in KernelBench's runs, 0.5 s at a limit case.
DEADLINE_CAP_S = {"cpu": 50.0, "cuda": 15.0}
ALLOWANCE_S = {"cpu": 8.0, "cuda": 10.0}
SLACK = 20.0
# Compile runners for a source compiled ahead before, which has only a few new specializations.
FEW_COMPILERS = 2
# New specializations the judging runner compiles itself, at its first call of each, when no
# compile runner is warm: on the H200 a fresh judge of a cached rms_norm seed spent 7.0 s on a
# compile runner (its process and torch import) for one 0.9 s compile.
LONE_COMPILES = 2
# Compile-only runners of a CPU verdict's compile for the GPU: the distinct kernels of a case
# grid are few (Triton compiles a specialization once a process), each a second or two.
TARGET_COMPILERS = 4
# One layout's compile for the GPU on CPU: the interpreter's cases are small, their kernels
# compile in seconds; a compile past this is a hang.
TARGET_COMPILE_S = 120.0


class Evaluator:
    """Judges the candidates of one run: one operator, one device, one seed. Ground truth, the
    warm runners and the compile cache are the run's; each candidate gets runners of its own."""

    def __init__(
        self,
        op: str,
        device: str,
        *,
        seed: int | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        deadline_s: float | None = None,
        compile_workers: int | None = None,
        sanitize: bool = False,
        warm: int = 1,
        keep_warm: bool = True,
        gpu_target: str | None = None,
        draws: int | None = None,
    ):
        self.spec: OpSpec = load_spec(op)
        # CPU: the GPU to compile an accepted candidate for (verify/target.py); None skips it.
        self.gpu_target = gpu_target if device == "cpu" else None
        self.op, self.device = op, device
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.rng = random.Random(self.seed)
        # The fixed cases, then `draws` more from SPEC.domain (by default the domain's number
        # for this device): the same seed draws the same ones, so a failure there is reproduced.
        # Then the limit cases (SPEC.limits), last since they cost most: run on CUDA only, and
        # listed on CPU as not run there, as the other GPU-only cases are.
        self.grid: list[Case] = (
            self.spec.cases
            + drawn_cases(self.spec, self.seed, device, draws)
            + limits.limit_cases(self.spec)
        )
        self.memory_mb = memory_mb
        self.cap_s = deadline_s or DEADLINE_CAP_S[device]
        self.sanitize = sanitize
        self.folder = Path(tempfile.mkdtemp(prefix="kernelgen-judge-", dir=_scratch()))
        self.truths = Truths(self.spec, self.seed, _judge_device(device), self.folder / "truth")
        self.case_seconds: dict[str, float] = {}
        self.judged: dict[str, Verdict] = {}
        self._bench_layouts: list[tuple[str, ahead.Layout]] | None = None
        self._ahead: _Ahead | None = None  # a candidate's compiles ahead, while judged
        # A limit case's truth is drawn when a candidate reaches it (verdict.py), not ahead with
        # the others; its layout, from its makers on fake tensors (limits.layout) or once drawn,
        # goes to compile-ahead.
        self.limit_layouts: dict[str, ahead.Layout] = {}
        extra = {"KERNELGEN_CASTS_ALLOWED": "1"} if self.spec.data.launcher_casts else {}
        # On CUDA the compile-ahead runners write Triton's cache (paths.triton_cache()), the
        # judging runner and the benchmark only load from it.
        self.env = sandbox_env(device, extra)
        # keep_warm: replace each runner as it is taken, for the next candidate of the run; a
        # judge made for one candidate starts no replacements.
        self.pool = Pool(device, self.env, memory_mb, warm, self.folder / "runners", keep_warm)
        self.keep_warm = keep_warm
        # Started when first needed (see compile_pool): a candidate whose specializations are
        # all compiled already needs none.
        self.compilers: Pool | None = None
        self._compile_workers = 0
        if device == "cuda":
            self._compile_workers = (
                compile_workers if compile_workers is not None else ahead.workers()
            )

    # ---- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def compile_pool(self, size: int | None = None) -> Pool:
        """The compile runners, started the first time a candidate has something new to
        compile (`size` of them, all by default) or, in a run kept warm, once its first
        candidate's runner is ready (all, for the candidates after it)."""
        size = min(size or self._compile_workers, self._compile_workers)
        if self.compilers is None:
            self.compilers = ahead.compile_pool(
                self.memory_mb,
                size,
                self.folder / "compilers",
                self.env,
                self.keep_warm,
                self.device,
            )
        else:
            self.compilers.grow(size)
        return self.compilers

    def warm_compilers(self) -> None:
        """In a run kept warm, start the compile runners for the candidates after this one;
        called once a candidate's runner is ready, so their imports did not hold it back."""
        if self.keep_warm and self._compile_workers > 0:
            self.compile_pool(self._compile_workers)

    def close(self) -> None:
        self.pool.close()
        if self.compilers is not None:
            self.compilers.close()
        self.truths.release()
        shutil.rmtree(self.folder, ignore_errors=True)

    def calibrate(self, verdict: Verdict) -> None:
        """Per-case deadlines from an accepted verdict (the seed's): a hang is found in a small
        multiple of the time an honest kernel needs there, not at a cap sized for the slowest."""
        if verdict.accepted:
            self.case_seconds = {c.name: c.seconds for c in verdict.cases if c.seconds}

    def deadline(self, case: str, calls: int = 1) -> float:
        base = self.case_seconds.get(case)
        if base is None:
            return self.cap_s
        return min(self.cap_s, ALLOWANCE_S[self.device] + SLACK * base * calls)

    # ---- one candidate -----------------------------------------------------------------------

    def verify(self, path: Path, source: str, digest: str) -> Verdict:
        if digest in self.judged:
            earlier = self.judged[digest]
            return earlier.model_copy(
                update={"candidate": str(path), "duplicate_of": earlier.candidate}
            )
        verdict = Judging(self, path, digest).run()
        self.truths.trim()
        self.judged[digest] = verdict
        return verdict

    def sanitize_only(self, path: Path) -> tuple[Failure | None, list[str]]:
        """The small cases of an already accepted candidate under compute-sanitizer: the check
        made before promotion. Returns the failure (None when clean) and the tools run clean."""
        cases = [c for c in self.cases() if c.interpreter] or self.cases()[:1]
        on_gpu = self.device == "cuda"
        try:
            with gpulock.shared("compute-sanitizer", self.op) if on_gpu else nullcontext():
                return None, sanitizer.check(self, path.resolve(), cases)
        except Rejected as r:
            failure = r.failure
            if r.case:
                failure = Failure(failure.category, f"case {r.case}: {failure.reason}")
            return failure, []

    def cases(self) -> list[Case]:
        return [c for c in self.grid if self.device == "cuda" or c.interpreter]

    def drawn_ahead(self) -> list[Case]:
        """The cases whose truths are drawn before the candidate runs: all but the limit cases
        and those too large to keep (Truths.oversized), whose GBs are drawn and judged one judge
        of the host at a time (gpulock.limit_case)."""
        return [c for c in self.cases() if c.limit is None and not self.truths.oversized(c)]

    def compile_for_target(
        self, path: Path, cases: list[Case], phases: Phases
    ) -> tuple[Failure | None, str | None]:
        """The candidate's launcher run on each case's layout with every launch a compile for
        `gpu_target`, in compile-only runners without the interpreter. Returns the first
        compile failure and where; one of another kind (the launcher raising for a layout it
        never saw) is not the compiler's word, and the cases already judged the launcher."""
        assert self.gpu_target is not None
        mark = time.monotonic()
        env = {k: v for k, v in self.env.items() if k != "TRITON_INTERPRET"}
        env["KERNELGEN_COMPILE_TARGET"] = self.gpu_target
        env.setdefault("TRITON_CACHE_DIR", str(triton_cache()))
        # The interpreter's cases only: a bench shape's whole-row block can take a minute to
        # compile on this CPU (softmax's 262144 columns: 48 s), and the H200 compiles it anyway.
        layouts = [(c.name, self.truths.get(c).layout) for c in cases]
        seen: set[str] = set()
        jobs: list[ahead.Job] = []
        for name, layout in layouts:
            key = ahead.specialization(layout)
            if key not in seen:
                seen.add(key)
                jobs.append(ahead.Job(path, layout, name))
        size = min(len(jobs), ahead.workers(), TARGET_COMPILERS)
        pool = ahead.compile_pool(self.memory_mb, size, self.folder / "target", env, False, "cpu")
        try:
            _, misses = ahead.compile_ahead(self.spec, pool, jobs, deadline_s=TARGET_COMPILE_S)
        finally:
            pool.close()
            phases.gpu_compile = round(time.monotonic() - mark, 3)
        for miss in misses:
            if miss.dead is not None:  # a compile that hangs or kills its process is no pass
                failure: Failure | None = Failure(miss.dead.category, miss.dead.reason)
            else:
                failure = _compile_failure(miss)
            if failure is not None:
                why = f"compiled for the GPU ({self.gpu_target}) on CPU: {failure.reason}"
                return Failure(failure.category, why), miss.job.name
        return None, None

    def prepare(self, path: Path, digest: str, phases: Phases) -> None:
        """Ground truth (computed once per run) and every specialization the case grid and the
        bench shapes need that this source was not compiled for before (ahead.Compiled),
        compiled in parallel into Triton's cache, side by side: each case's layout goes to the
        compile runners as soon as its truth is drawn, the limit cases' last, the bench shapes'
        after all of them (the reference runs on the judge's device, the compiles in other
        processes; one after the other they cost a fresh judge 10 s on the H200). Returns once
        the truths are drawn, the compiles going on beside the judging (ahead.Background):
        `compiled_for` waits for a case's, `end_compiles` for the rest."""
        mark = time.monotonic()
        self._ahead = None
        if self._compile_workers <= 0:
            self.truths.prepare(self.drawn_ahead())
            phases.truth = round(time.monotonic() - mark, 3)
            return
        if self._bench_layouts is None:  # drawn once per run (an input maker draws on the CPU)
            self._bench_layouts = [
                (shape.name, ahead.bench_layout(self.spec, shape, self.truths.device))
                for shape in self.spec.data.bench
            ]
        compiled = ahead.Compiled(Path(self.env.get("TRITON_CACHE_DIR", triton_cache())), digest)
        seen: dict[str, ahead.Job | None] = {}  # specialization -> its job (None: compiled)
        by_case: dict[str, ahead.Job] = {}
        jobs: list[ahead.Job] = []
        feed = ahead.Feed()

        def add(name: str, layout: ahead.Layout, later: bool = False) -> None:
            key = ahead.specialization(layout)
            if key not in seen:  # layouts that differ only in values or padding share one
                new = ahead.Job(path, layout, name, later=later)
                seen[key] = new if compiled.new(new) else None
                if seen[key] is not None:
                    jobs.append(new)
                    feed.put(new)
            job = seen[key]
            if job is not None:
                by_case[name] = job
                if job.later and not later:  # a case waits on it: not after the bench's
                    feed.promote(job)

        for name, layout in self._bench_layouts:
            add(f"bench {name}", layout, later=True)
        for name, layout in self.limit_layouts.items():
            add(name, layout)

        def draw() -> None:
            try:
                self.truths.prepare(self.drawn_ahead(), done=lambda c, t: add(c.name, t.layout))
                # The limit cases last, as they are judged: a row of each drawn on the CPU.
                for case in self.cases():
                    if case.limit is not None and case.name not in self.limit_layouts:
                        known = limits.layout(self.spec, case)
                        if known is not None:  # the draw's own replaces it (verdict.py)
                            self.limit_layouts[case.name] = known
                            add(case.name, known)
            finally:
                phases.truth = round(time.monotonic() - mark, 3)
                feed.close()

        background: ahead.Background | None = None
        if jobs or self.compilers is not None:
            # A source new to this cache, or runners warm already: each case's layout goes to
            # them as soon as its truth is drawn. A cached source's new specializations are the
            # few that this run's drawn padding changes (softmax on the H200: 2 of 51, for which
            # 12 compile runners started and held the judging runner back): two runners then.
            runners = self._compile_workers if jobs else FEW_COMPILERS
            with ThreadPoolExecutor(1) as ex:
                drawing = ex.submit(draw)
                if feed.wait():  # something new to compile (else no compile runner starts)
                    pool = self.compile_pool(runners)
                    background = ahead.Background(self.spec, pool, feed, runners)
                try:
                    drawing.result()  # a reference that raised is kernelgen's error, no verdict
                except BaseException:
                    if background is not None:
                        background.stop()
                    raise
        else:
            # A cached source and no compile runner warm: how many are new is known only once
            # every truth is drawn (a few seconds, while the judging runner starts anyway).
            draw()
            if len(jobs) <= LONE_COMPILES:
                phases.compiled_by_runner = len(jobs)
                jobs.clear()  # not compiled ahead, so not added to the index either
                by_case.clear()
            else:
                pool = self.compile_pool(FEW_COMPILERS)
                background = ahead.Background(self.spec, pool, feed, FEW_COMPILERS)
        self._ahead = _Ahead(background, compiled, jobs, by_case)

    def compiling(self, case: Case) -> bool:
        """Whether the case's compile ahead is still going (waiting for it would block)."""
        state = self._ahead
        job = state.by_case.get(case.name) if state is not None else None
        return (
            job is not None
            and state is not None
            and state.background is not None
            and (not job.done.is_set() and state.background.running())
        )

    def compiled_for(self, case: Case) -> Failure | None:
        """Wait for the case's compile ahead, if it has one in flight: its compile failure, or
        None (compiled, or left to the judging runner)."""
        job = self._ahead.by_case.get(case.name) if self._ahead is not None else None
        if job is None or self._ahead is None or self._ahead.background is None:
            return None
        miss = self._ahead.background.wait(job)
        return _compile_failure(miss) if miss is not None else None

    def end_compiles(self, phases: Phases, stop: bool) -> tuple[Failure | None, str | None]:
        """The compiles ahead ended: waited for (the bench shapes' too, which the timing needs)
        or, with `stop` (the candidate rejected), stopped. `phases` gets their time, their count
        and the slowest (a floor no parallelism lowers). Returns a compile failure and where."""
        state, self._ahead = self._ahead, None
        if state is None:
            return None, None
        if state.background is not None:
            if stop:
                state.background.stop()
            else:
                state.background.finish()
            phases.compile = round(state.background.seconds, 3)
        misses = state.background.misses if state.background is not None else []
        missed = {id(m.job) for m in misses}
        state.compiled.add([j for j in state.jobs if j.done.is_set() and id(j) not in missed])
        phases.compiles = len(state.jobs)
        timed = [j for j in state.jobs if j.seconds is not None]
        if timed:
            slowest = max(timed, key=lambda j: j.seconds or 0.0)
            phases.slowest_compile = slowest.name
            phases.slowest_compile_s = round(slowest.seconds or 0.0, 3)
        for miss in misses:
            failure = _compile_failure(miss)
            if failure is not None:
                return failure, miss.job.name
        return None, None


def _compile_failure(miss: ahead.Miss) -> Failure | None:
    """A compile ahead's miss as the compiler's word on the candidate, or None: a failure of
    another kind (the launcher raising at a layout, a runner gone) is the judging runner's to
    meet with the case in hand."""
    failure = classify(miss.error) if miss.error is not None else None
    return failure if failure is not None and failure.category == "compile" else None


@dataclass
class _Ahead:
    """One candidate's compiles ahead, from prepare to end_compiles."""

    background: ahead.Background | None
    compiled: ahead.Compiled
    jobs: list[ahead.Job]
    by_case: dict[str, ahead.Job]


def _judge_device(device: str) -> str:
    return "cuda" if device == "cuda" else "cpu"


def _scratch() -> str | None:
    """RAM-backed scratch where there is one: inputs and outputs cross it on every call."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
