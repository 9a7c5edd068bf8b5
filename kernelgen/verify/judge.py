"""The judge: runs in kernelgen's own process, drives a sandboxed runner holding the candidate, and
makes the verdict from what comes back. The judged never shares a process with the judge.

Per case (stopping at the first failure, like a staged evaluation), four calls, each one a full
check of values, structure, provenance where the guard is on, inputs untouched and no aliasing:
1. A under the guard, new allocations and freed device memory NaN-poisoned;
2. B (other values): also a new buffer, and A's result unchanged (no caching, no shared output);
3. A again on fresh copies, allocations filled with random finite values: agrees with the first
   (a kernel that writes only where its output still reads NaN is caught here);
4. A once more with the guard off (nothing in the process looks different from a plain call),
   freed device memory random: agrees too.
Then, once per candidate: every config of an autotuned kernel on one case, a call after a random
number of calls, and on CUDA one call under the profiler (every kernel that ran is the candidate's
or a layout copy) and, when asked, the small cases under compute-sanitizer.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from kernelgen.paths import triton_cache
from kernelgen.records import CallCosts, CaseResult, Phases, Verdict
from kernelgen.spec import Case, OpSpec, load_spec
from kernelgen.verify import DEFAULT_MEMORY_MB, ahead, checks, sanitizer
from kernelgen.verify.checks import Failure
from kernelgen.verify.protocol import Call, Failed, Load, Reply
from kernelgen.verify.sandbox import sandbox_env
from kernelgen.verify.session import Dead, Pool, Runner
from kernelgen.verify.tensors import borrow, overlaps, storage_digest
from kernelgen.verify.truth import CaseTruth, Inputs, Truths

# A hanging call is found by its deadline: the seed's own time on that case times SLACK, plus an
# allowance (a compile the ahead-of-time pass missed), never past the cap. Without the seed's
# times, the cap. The caps keep a hang under the targets: 60 s on CPU, 30 s on CUDA.
DEADLINE_CAP_S = {"cpu": 50.0, "cuda": 25.0}
ALLOWANCE_S = {"cpu": 8.0, "cuda": 10.0}
SLACK = 20.0
MANY_CALLS = {"cpu": (4, 12), "cuda": (8, 40)}
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
# Requests sent ahead of the answer being checked: enough to keep the runner busy while the
# judge compares; more would only leave more output files waiting in the scratch folder.
WINDOW = 3


class Rejected(Exception):
    def __init__(self, failure: Failure, case: str | None = None):
        super().__init__(failure.reason)
        self.failure = failure
        self.case = case


def classify(error: Failed) -> Failure:
    """A category for what the candidate's call raised."""
    name, text = error.type, error.message or error.type
    where = f" (line {error.line})" if error.line else ""
    if name == "ContractError":
        return Failure("contract", text)
    if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources") or (
        error.frontend
    ):
        return Failure("compile", f"{name}: {text}{where}")
    if name in ("OutOfMemoryError", "MemoryError") or "can't allocate memory" in text:
        return Failure("oom", text)
    if "illegal memory access" in text or "CUDA error" in text:
        return Failure("crash", text)
    return Failure("crash", f"{name}: {text}{where}")


def _layout_kernel(name: str) -> bool:
    low = name.lower()
    return "copy" in low or "fill" in low


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
    ):
        self.spec: OpSpec = load_spec(op)
        # CPU: the GPU to compile an accepted candidate for (verify/target.py); None skips it.
        self.gpu_target = gpu_target if device == "cpu" else None
        self.op, self.device = op, device
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.rng = random.Random(self.seed)
        self.memory_mb = memory_mb
        self.cap_s = deadline_s or DEADLINE_CAP_S[device]
        self.sanitize = sanitize
        self.folder = Path(tempfile.mkdtemp(prefix="kernelgen-judge-", dir=_scratch()))
        self.truths = Truths(self.spec, self.seed, _judge_device(device), self.folder / "truth")
        self.case_seconds: dict[str, float] = {}
        self.judged: dict[str, Verdict] = {}
        self._bench_layouts: list[tuple[str, ahead.Layout]] | None = None
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
        verdict = _Judging(self, path, digest).run()
        self.judged[digest] = verdict
        return verdict

    def sanitize_only(self, path: Path) -> tuple[Failure | None, list[str]]:
        """The small cases of an already accepted candidate under compute-sanitizer: the check
        made before promotion. Returns the failure (None when clean) and the tools run clean."""
        cases = [c for c in self.cases() if c.interpreter] or self.cases()[:1]
        try:
            return None, sanitizer.check(self, path.resolve(), cases)
        except Rejected as r:
            failure = r.failure
            if r.case:
                failure = Failure(failure.category, f"case {r.case}: {failure.reason}")
            return failure, []

    def cases(self) -> list[Case]:
        return [c for c in self.spec.cases if self.device == "cuda" or c.interpreter]

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
                failure = classify(miss.error) if miss.error is not None else None
                if failure is not None and failure.category != "compile":
                    continue
            if failure is not None:
                why = f"compiled for the GPU ({self.gpu_target}) on CPU: {failure.reason}"
                return Failure(failure.category, why), miss.job.name
        return None, None

    def prepare(self, path: Path, digest: str, phases: Phases) -> tuple[Failure | None, str | None]:
        """Ground truth (computed once per run) and every specialization the case grid and the
        bench shapes need that this source was not compiled for before (ahead.Compiled),
        compiled in parallel into Triton's cache, side by side: the bench layouts go to the
        compile runners first, each case's layout as soon as its truth is drawn (the reference
        runs on the judge's device, the compiles in other processes; one after the other they
        cost a fresh judge 10 s on the H200). Returns a compile failure and where it happened;
        a failure of another kind is left for the judging runner to meet with the case in hand.
        `phases` gets both times, the count compiled and the slowest compile (a floor no
        parallelism lowers)."""
        mark = time.monotonic()
        if self._compile_workers <= 0:
            self.truths.prepare(self.cases())
            phases.truth = round(time.monotonic() - mark, 3)
            return None, None
        if self._bench_layouts is None:  # drawn once per run (an input maker draws on the CPU)
            self._bench_layouts = [
                (shape.name, ahead.bench_layout(self.spec, shape, self.truths.device))
                for shape in self.spec.data.bench
            ]
        compiled = ahead.Compiled(Path(self.env.get("TRITON_CACHE_DIR", triton_cache())), digest)
        seen: set[str] = set()
        jobs: list[ahead.Job] = []
        feed = ahead.Feed()

        def add(name: str, layout: ahead.Layout) -> None:
            key = ahead.specialization(layout)
            if key not in seen:  # layouts that differ only in values or padding share one
                seen.add(key)
                job = ahead.Job(path, layout, name)
                if compiled.new(job):
                    jobs.append(job)
                    feed.put(job)

        for name, layout in self._bench_layouts:
            add(f"bench {name}", layout)

        def draw() -> None:
            try:
                self.truths.prepare(self.cases(), done=lambda c, t: add(c.name, t.layout))
            finally:
                phases.truth = round(time.monotonic() - mark, 3)
                feed.close()

        misses: list[ahead.Miss] = []
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
                    seconds, misses = ahead.compile_ahead(self.spec, pool, feed, runners)
                    phases.compile = round(seconds, 3)
                drawing.result()  # a reference that raised is kernelgen's error, not a verdict
        else:
            # A cached source and no compile runner warm: how many are new is known only once
            # every truth is drawn (a few seconds, while the judging runner starts anyway).
            draw()
            if len(jobs) <= LONE_COMPILES:
                phases.compiled_by_runner = len(jobs)
                jobs.clear()  # not compiled ahead, so not added to the index either
            else:
                pool = self.compile_pool(FEW_COMPILERS)
                seconds, misses = ahead.compile_ahead(self.spec, pool, feed, FEW_COMPILERS)
                phases.compile = round(seconds, 3)
        missed = {id(m.job) for m in misses}
        compiled.add([j for j in jobs if j.seconds is not None and id(j) not in missed])
        phases.compiles = len(jobs)
        timed = [j for j in jobs if j.seconds is not None]
        if timed:
            slowest = max(timed, key=lambda j: j.seconds or 0.0)
            phases.slowest_compile = f"{slowest.name}: {slowest.seconds:.1f} s"
        for miss in misses:
            failure = classify(miss.error) if miss.error is not None else None
            if failure is not None and failure.category == "compile":
                return failure, miss.job.name
        return None, None


Then = Callable[[Reply, Any, CaseResult], None]


@dataclass
class _Step:
    case: Case
    truth: CaseTruth
    variant: str
    request: Call
    then: Then | None = None  # checks beyond the full one every call gets
    context: str = ""  # what the call was for, before a failure's reason


class _Judging:
    """One candidate's judging: its runner, its calls, its verdict."""

    def __init__(self, ev: Evaluator, path: Path, digest: str):
        self.ev, self.spec, self.device = ev, ev.spec, ev.device
        self.path = path.resolve()
        self.digest = digest
        self.kernels: set[str] = set()
        self.runner: Runner | None = None
        self.calls = 0
        self.costs = CallCosts()

    def run(self) -> Verdict:
        ev = self.ev
        start = time.monotonic()
        results: list[CaseResult] = []
        failure: Failure | None = None
        phases = Phases()
        sanitized: list[str] = []
        try:
            mark = time.monotonic()
            failure, where = ev.prepare(self.path, self.digest, phases)
            mark = time.monotonic()
            if failure is not None:
                raise Rejected(failure, where)
            self.runner = ev.pool.take()
            self.runner.ready()
            phases.start, mark = _lap(mark)
            ev.warm_compilers()
            self.load()
            run: list[tuple[Case, CaseTruth]] = []
            runnable = {c.name for c in ev.cases()}
            grid: list[_Step] = []
            for case in self.spec.cases:
                if case.name not in runnable:
                    results.append(
                        CaseResult(name=case.name, status="not_run", note=_why_not(case))
                    )
                    continue
                truth = ev.truths.get(case)
                grid += self.case_steps(case, truth, results)
                run.append((case, truth))
            self.drive(grid)
            phases.cases, mark = _lap(mark)
            if run:
                self.drive(self.extra_steps(run))
            if ev.gpu_target is not None and run:
                failure, where = ev.compile_for_target(self.path, [c for c, _ in run], phases)
                if failure is not None:
                    raise Rejected(failure, where)
            if ev.sanitize and self.device == "cuda" and run:
                sanitized = self.sanitize([c for c, _ in run if c.interpreter] or [run[0][0]])
            phases.checks, mark = _lap(mark)
        except Rejected as r:
            failure = r.failure
            if r.case:
                failure = Failure(failure.category, f"case {r.case}: {failure.reason}")
                if r.case in {c.name for c in self.spec.cases}:
                    results = [c for c in results if c.name != r.case]
                    results.append(CaseResult(name=r.case, status="failed", note=failure.reason))
        finally:
            if self.runner is not None:
                self.runner.close()
            phases.calls = self.costs if self.costs.calls else None
        done = {c.name for c in results}
        for case in self.spec.cases:
            if case.name not in done:
                results.append(
                    CaseResult(
                        name=case.name,
                        status="not_run",
                        note="not run: stopped at the first failure",
                    )
                )
        order = {c.name: i for i, c in enumerate(self.spec.cases)}
        results.sort(key=lambda c: order.get(c.name, len(order)))
        accepted = failure is None
        partial = accepted and any(c.status == "not_run" for c in results)
        return Verdict(
            op=self.spec.name,
            candidate=str(self.path),
            sha256=self.digest,
            accepted=accepted,
            outcome=("accepted-partial" if partial else "accepted") if accepted else "rejected",
            category=failure.category if failure else None,
            reason=failure.reason if failure else None,
            device=self.device,  # type: ignore[arg-type]
            seed=ev.seed,
            cases=results,
            kernels=sorted(self.kernels),
            seconds=round(time.monotonic() - start, 3),
            phases=phases,
            sanitized=sanitized,
        )

    # ---- talking to the runner ---------------------------------------------------------------

    def ask(self, request: Load | Call, deadline: float, case: str | None, what: str) -> Reply:
        assert self.runner is not None
        reply = self.runner.ask(request, deadline, what)
        if isinstance(reply, Dead):
            raise Rejected(Failure(reply.category, reply.reason), case)
        if not reply.ok:
            raise Rejected(classify(reply.error or Failed(type="Error", message="")), case)
        return reply

    def load(self) -> None:
        reply = self.ask(
            Load(path=str(self.path), entry=self.spec.name, arg_names=self.spec.arg_names),
            self.ev.cap_s,
            None,
            "loading the candidate",
        )
        self.configs = reply.configs

    def step(
        self,
        case: Case,
        truth: CaseTruth,
        variant: str,
        *,
        fill: str = "nan",
        guard: bool = True,
        keep: str | None = None,
        report: tuple[str, ...] = (),
        repeat: int = 1,
        profile: bool = False,
        then: Then | None = None,
        context: str = "",
    ) -> _Step:
        """One call to make, and what to check of its answer beyond the full check against
        the truth that every call gets."""
        self.calls += 1
        lends = self.device == "cuda"  # the inputs are lent as the call is sent (`drive`)
        request = Call(
            inputs=None if lends else str(truth.variants[variant].file),
            shared=[] if lends else None,
            share_outputs=lends,
            outputs=str(self.ev.folder / f"out-{self.calls}.pt"),
            guard=guard,
            fill=fill,  # type: ignore[arg-type]
            keep=keep,
            report=list(report),
            repeat=repeat,
            profile=profile,
        )
        return _Step(case, truth, variant, request, then, context)

    def drive(self, steps: list[_Step]) -> None:
        """Make the calls in order, checking each answer in order, with up to WINDOW requests
        ahead of the one being checked: the runner computes the next call while the judge
        compares the last one. The first failure ends it (the runner is killed with whatever
        it was still doing). A call's deadline counts from when the judge starts waiting for
        its answer, which is never before the runner could have started on it."""
        assert self.runner is not None
        queue = iter(steps)
        pending: deque[_Step] = deque()

        def post() -> None:
            step = next(queue, None)
            if step is not None:
                assert self.runner is not None
                request = step.request
                if request.shared is not None:  # a fresh loan for every call
                    shared = step.truth.variants[step.variant].lend()
                    request = request.model_copy(update={"shared": shared})
                self.runner.send(request)
                pending.append(step)

        for _ in range(WINDOW):
            post()
        costs = self.costs
        while pending:
            step = pending.popleft()
            name = step.case.name
            mark = time.monotonic()
            reply = self.runner.receive(self.ev.deadline(name, step.request.repeat), f"case {name}")
            costs.add("judge_wait", time.monotonic() - mark)
            post()
            out_file = Path(step.request.outputs)
            try:
                if isinstance(reply, Dead):
                    raise Rejected(Failure(reply.category, reply.reason))
                if not reply.ok:
                    raise Rejected(classify(reply.error or Failed(type="Error", message="")))
                _count(costs, reply)
                mark, read = time.monotonic(), costs.judge_read
                self.check_log(reply, step.request.guard or step.request.profile)
                out, result = self.check_output(
                    reply, out_file, step.truth, step.variant, step.case
                )
                if step.then is not None:
                    step.then(reply, out, result)
                # The checks' time, less the reading of the outputs (judge_read, counted apart).
                costs.add("judge_check", time.monotonic() - mark - (costs.judge_read - read))
            except Rejected as r:
                failure = r.failure
                if step.context:
                    failure = Failure(failure.category, f"{step.context}: {failure.reason}")
                raise Rejected(failure, r.case or name) from None
            finally:
                out_file.unlink(missing_ok=True)

    # ---- checks ------------------------------------------------------------------------------

    def check_log(self, reply: Reply, guarded: bool) -> None:
        log = reply.log
        if not guarded:
            return
        if log is None:
            raise Rejected(Failure("provenance", "the guarded call came back without its record"))
        self.kernels.update(log.launches)
        if log.threads:
            raise Rejected(Failure("provenance", f"started threads {log.threads}"))
        if log.forbidden:
            ops = ", ".join(sorted(set(log.forbidden)))
            raise Rejected(Failure("provenance", f"torch computed in the launcher: aten {ops}"))
        if not log.launches:
            other = f" (launched only {sorted(set(log.foreign))})" if log.foreign else ""
            raise Rejected(
                Failure("provenance", f"no Triton kernel of the candidate launched{other}")
            )

    def check_output(
        self, reply: Reply, out_file: Path, truth: CaseTruth, variant: str, case: Case
    ) -> tuple[Any, CaseResult]:
        inputs = truth.variants[variant]
        fail = _structure(reply, inputs.native, self.device)
        if fail:
            raise Rejected(fail)
        mark = time.monotonic()
        try:
            if reply.shared is not None:  # lent by the runner: copied here, the loan ended
                loaded = [borrow(x) if x is not None else None for x in reply.shared]
            else:
                loaded = torch.load(
                    out_file, map_location=_judge_device(self.device), weights_only=True
                )
            out = tuple(loaded) if reply.tuple_out else loaded[0]
        except Exception as e:  # the file or handle is the candidate process's: anything goes
            raise Rejected(Failure("crash", f"its outputs could not be read back: {e}")) from None
        self.costs.add("judge_read", time.monotonic() - mark)
        result = self.judge_values(out, inputs, case)
        if reply.input_digests != inputs.digests:
            raise Rejected(Failure("mutation", "an input changed during the call"))
        for leaf in reply.leaves:
            if leaf.span is not None and any(overlaps(leaf.span, s) for s in reply.inputs):
                raise Rejected(Failure("aliasing", "the output shares memory with an input"))
        return out, result

    def judge_values(self, out: Any, inputs: Inputs, case: Case) -> CaseResult:
        ref64 = inputs.ref
        if self.spec.compare is not None:
            msg = self.spec.judge(out, ref64, case, inputs.args)
            if msg:
                raise Rejected(Failure("incorrect", msg))
            return CaseResult(name=case.name, status="passed")
        tol = self.spec.tolerance(case.dtype, case.dims)
        worst, cand_err, torch_err = 0.0, 0.0, 0.0
        if inputs.native_errs is None:  # the same for every candidate of the run
            inputs.native_errs = [
                checks.rel_err(n, r)
                for n, r in zip(checks.leaves(inputs.native), checks.leaves(ref64), strict=True)
            ]
        for o, r, n_err in zip(
            checks.leaves(out), checks.leaves(ref64), inputs.native_errs, strict=True
        ):
            fail, max_err, rel = checks.measure(o, r, tol)
            if fail:
                raise Rejected(fail)
            worst = max(worst, max_err)
            cand_err = max(cand_err, rel)
            torch_err = max(torch_err, n_err)
            fail = checks.precision(cand_err, torch_err, o.dtype, self.spec.data.error_ratio)
            if fail:
                raise Rejected(fail)
        return CaseResult(
            name=case.name,
            status="passed",
            max_abs_err=worst,
            rel_err=cand_err,
            torch_rel_err=torch_err,
        )

    def agree(self, first: Any, again: Any, case: Case, what: str, inputs: Inputs) -> None:
        if self.spec.compare is not None:
            # The operator's own rule, the first answer standing for the truth: two honest
            # calls of a top-k may list the same set in another order.
            msg = self.spec.judge(again, first, case, inputs.args)
            if msg:
                raise Rejected(Failure("stale", f"{what} disagrees with the first: {msg}"))
            return
        tol = self.spec.tolerance(case.dtype, case.dims)
        for o1, o2 in zip(checks.leaves(first), checks.leaves(again), strict=True):
            fail, _ = checks.values(o2, o1.double(), tol)
            if fail:
                raise Rejected(Failure("stale", f"{what} disagrees with the first: {fail.reason}"))

    # ---- the case grid -----------------------------------------------------------------------

    def case_steps(self, case: Case, truth: CaseTruth, results: list[CaseResult]) -> list[_Step]:
        """The four calls of a case; the last one's check adds the case's result."""
        seen: dict[str, Any] = {}

        def first(reply: Reply, out: Any, result: CaseResult) -> None:
            seen.update(out=out, result=result, slowest=reply.seconds)
            seen["digests"] = [storage_digest(t) for t in checks.leaves(out)]

        def second(reply: Reply, out: Any, result: CaseResult) -> None:
            seen["slowest"] = max(seen["slowest"], reply.seconds)
            spans_a = reply.kept_spans.get("a", [])
            for leaf in reply.leaves:
                if leaf.span is not None and any(overlaps(leaf.span, s) for s in spans_a):
                    raise Rejected(
                        Failure(
                            "aliasing",
                            "the second call returned the first call's buffer "
                            "(cached or shared output)",
                        )
                    )
            if reply.kept.get("a") != seen["digests"]:
                raise Rejected(
                    Failure("stale", "the first result changed when the candidate was called again")
                )

        def agrees(what: str, last: bool = False) -> Then:
            def check(reply: Reply, out: Any, result: CaseResult) -> None:
                self.agree(seen["out"], out, case, what, truth.variants["a"])
                seen["slowest"] = max(seen["slowest"], reply.seconds)
                if last:
                    results.append(
                        seen["result"].model_copy(update={"seconds": round(seen["slowest"], 4)})
                    )

            return check

        return [
            self.step(case, truth, "a", keep="a", then=first),
            self.step(case, truth, "b", keep="b", report=("a",), then=second),
            # Fresh copies of A, into buffers that hold random finite values: nothing tells
            # them apart from memory the kernel wrote.
            self.step(
                case, truth, "a", fill="random", then=agrees("a call into randomly filled buffers")
            ),
            self.step(
                case,
                truth,
                "a",
                fill="random",
                guard=False,
                then=agrees("a call without the guard", last=True),
            ),
        ]

    def extra_steps(self, run: list[tuple[Case, CaseTruth]]) -> list[_Step]:
        ev = self.ev
        steps: list[_Step] = []
        smallest = min(run, key=lambda ct: _numel(ct[0]))
        largest = max(run, key=lambda ct: _numel(ct[0]))
        # Every config of an autotuned kernel on the longest reduction and on the most elements
        # (where a config right only for short rows, or for few blocks, breaks): each launch
        # takes the next config.
        if self.configs > 1:
            red = self.spec.data.reduction

            def length(ct: tuple[Case, CaseTruth]) -> tuple[int, int]:
                return (ct[0].dims.get(red, 0) if red else 0, _numel(ct[0]))

            longest = max(run, key=length)
            for case, truth in [longest] + (
                [largest] if largest[0].name != longest[0].name else []
            ):
                steps += [
                    self.step(
                        case,
                        truth,
                        "a" if i % 2 else "b",
                        context=f"config sweep, call {i + 1} of {self.configs}",
                    )
                    for i in range(self.configs)
                ]
        # A call after many calls: a kernel that counts its calls and changes after N.
        lo, hi = MANY_CALLS[self.device]
        n = ev.rng.randint(lo, hi)
        steps.append(self.step(*smallest, "b", repeat=n, context=f"after {n} calls in a row"))
        if self.device == "cuda":
            # Every CUDA kernel of one call (the largest case, where a size-triggered fallback
            # would show) must be one of the candidate's Triton kernels, or a layout copy or
            # fill. Checked after every guarded call before it has named the candidate's own.
            steps.append(self.step(*largest, "a", profile=True, then=self.profiled))
        return steps

    def profiled(self, reply: Reply, out: Any, result: CaseResult) -> None:
        names = set(reply.cuda_kernels or [])
        # Triton names a CUDA kernel exactly after its function: match names whole, so a kernel
        # called `_k` cannot vouch for every torch kernel with "_k" in its name.
        foreign = sorted(n for n in names if n not in self.kernels and not _layout_kernel(n))
        if foreign:
            raise Rejected(
                Failure(
                    "provenance",
                    f"CUDA kernels that are not the candidate's ran: {', '.join(foreign)[:200]}",
                )
            )
        if not names:
            raise Rejected(Failure("provenance", "the profiler saw no kernel run"))

    def sanitize(self, cases: list[Case]) -> list[str]:
        return sanitizer.check(self.ev, self.path, cases)


def _structure(reply: Reply, expected: Any, device: str) -> Failure | None:
    """Exact type, dtype, shape and device, leaf by leaf, from what the runner saw."""
    want = checks.leaves(expected)
    got = reply.leaves
    if len(got) != len(want) or reply.tuple_out != isinstance(expected, tuple):
        kind = "tuple" if reply.tuple_out else "a single value"
        return Failure(
            "incorrect",
            f"returned {kind} of {len(got)}, expected {type(expected).__name__} of {len(want)}",
        )
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        label = f"output {i}" if len(want) > 1 else "output"
        if g.type != "Tensor":
            return Failure("contract", f"{label} is {g.type}, not a plain torch.Tensor")
        wdtype = str(w.dtype).removeprefix("torch.")
        if g.dtype != wdtype:
            return Failure("incorrect", f"{label} dtype torch.{g.dtype}, expected {w.dtype}")
        if list(g.shape) != list(w.shape):
            return Failure(
                "incorrect", f"{label} shape {tuple(g.shape)}, expected {tuple(w.shape)}"
            )
        if g.device is None or torch.device(g.device).type != device:
            return Failure("incorrect", f"{label} on {g.device}, expected {device}")
    return None


def _count(costs: CallCosts, reply: Reply) -> None:
    costs.calls += 1
    if reply.costs is not None:
        for part in ("load", "flood", "call", "save", "digest"):
            costs.add(f"runner_{part}", getattr(reply.costs, part))


def _lap(mark: float) -> tuple[float, float]:
    now = time.monotonic()
    return round(now - mark, 3), now


def _numel(case: Case) -> int:
    n = 1
    for v in case.dims.values():
        n *= v
    return n


def _why_not(case: Case) -> str:
    why = (
        "bf16 arithmetic is wrong in the interpreter"
        if "bfloat16" in (case.dtype, *case.fixed_dtypes)
        else "too large for the interpreter"
    )
    return f"not run on CPU: {why}"


def _judge_device(device: str) -> str:
    return "cuda" if device == "cuda" else "cpu"


def _scratch() -> str | None:
    """RAM-backed scratch where there is one: inputs and outputs cross it on every call."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
