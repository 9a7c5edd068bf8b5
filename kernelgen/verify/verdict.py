"""One candidate's judging: its runner, its calls, its verdict. The run's judge (judge.Evaluator)
holds what the run's candidates share; the checks of each answer are answers.py's.

Per case (stopping at the first failure, like a staged evaluation), four calls, each one a full
check of values, structure, provenance where the guard is on, inputs untouched and no aliasing:
1. A under the guard, new allocations and freed device memory poisoned (NaN, an infinity, a
   large finite value or random bits, drawn per call: fills.py);
2. B (other values): also a new buffer, and A's result unchanged (no caching, no shared output);
3. A again on fresh copies, allocations filled with finite values of a drawn distribution, or
   zeros: agrees with the first (a kernel that writes only where its output looks poisoned is
   caught here);
4. A once more with the guard off (nothing in the process looks different from a plain call),
   freed device memory random: agrees too.
These run a base config of each autotuned kernel (the next in turn from case to case); then each
other config of each autotuned kernel alone, one call each (sweep.py). The limit cases come
last, each drawn when reached (GBs: the host's judges hold one at a time) and given fewer calls
(limit_steps). Then, once per candidate: a call after a random number of calls, and on CUDA one
call under the profiler on the largest case (every kernel that ran is the candidate's or a
layout copy) and, when asked, the small cases under compute-sanitizer.
"""

from __future__ import annotations

import ast
import contextlib
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kernelgen import gpulock
from kernelgen.records import CaseResult, Phases, Verdict
from kernelgen.verify import checks, fills, libdevice, sanitizer, sweep
from kernelgen.verify.answers import Answers
from kernelgen.verify.checks import Failure, Rejected, classify
from kernelgen.verify.protocol import Call, Failed, Load, Reply, Space
from kernelgen.verify.session import Dead, Runner
from kernelgen.verify.tensors import overlaps, storage_digest

if TYPE_CHECKING:
    from kernelgen.records import CallCosts
    from kernelgen.spec import Case
    from kernelgen.verify.session import Pool
    from kernelgen.verify.truth import CaseTruth

MANY_CALLS = {"cpu": (4, 12), "cuda": (8, 40)}
# Requests sent ahead of the answer being checked: enough to keep the runner busy while the
# judge compares; more would only leave more output files waiting in the scratch folder.
WINDOW = 3


class Run(sanitizer.Run, Protocol):
    """What one candidate's judging needs of the run's judge (judge.Evaluator)."""

    seed: int
    rng: random.Random
    cap_s: float
    grid: list[Case]  # the run's cases: the spec's fixed ones, then those drawn from its seed
    limit_layouts: dict[str, list[Any]]  # each limit case's argument layout, once drawn
    pool: Pool
    gpu_target: str | None
    sanitize: bool

    def cases(self) -> list[Case]: ...

    def deadline(self, case: str, calls: int = 1) -> float: ...

    def prepare(self, path: Path, digest: str, phases: Phases) -> None: ...

    def compiling(self, case: Case) -> bool: ...

    def compiled_for(self, case: Case) -> Failure | None: ...

    def end_compiles(self, phases: Phases, stop: bool) -> tuple[Failure | None, str | None]: ...

    def warm_compilers(self) -> None: ...

    def compile_for_target(
        self, path: Path, cases: list[Case], phases: Phases
    ) -> tuple[Failure | None, str | None]: ...


Then = Callable[[Reply, Any, CaseResult], None]


@dataclass
class _Step:
    case: Case
    truth: CaseTruth
    variant: str
    request: Call
    then: Then | None = None  # checks beyond the full one every call gets
    context: str = ""  # what the call was for, before a failure's reason


class Judging:
    """One candidate's judging: its runner, its calls, its verdict."""

    def __init__(self, ev: Run, path: Path, digest: str):
        self.ev, self.spec, self.device = ev, ev.spec, ev.device
        self.path = path.resolve()
        self.digest = digest
        self.answers = Answers(ev.spec, ev.device, ev.truths.device)
        self.runner: Runner | None = None
        self.calls = 0
        self.spaces: list[Space] = []  # the candidate's autotuned kernels, from its load
        self.cases_planned = 0  # cases given their calls: the autotune sweep turns on it
        self.not_run: dict[str, str] = {}  # cases the interpreter cannot run -> why
        self.compiled_cases: set[str] = set()  # cases whose compile ahead was waited for
        self.gpu = contextlib.ExitStack()  # the GPU's shared lock while the calls run
        self.gpu_held = False

    def run(self) -> Verdict:
        ev = self.ev
        start = time.monotonic()
        results: list[CaseResult] = []
        failure: Failure | None = None
        phases = Phases()
        sanitized: list[str] = []
        try:
            ev.prepare(self.path, self.digest, phases)
            mark = time.monotonic()
            self.runner = ev.pool.take()
            self.runner.ready()
            phases.start, mark = _lap(mark)
            ev.warm_compilers()
            self.load()
            if self.device == "cuda":  # the calls share the GPU with judges, never with a timing
                self.on_gpu()
            run: list[tuple[Case, CaseTruth]] = []
            runnable = {c.name for c in ev.cases()}
            grid: list[_Step] = []
            at_limits: list[Case] = []
            for case in ev.grid:
                if case.name not in runnable:
                    results.append(
                        CaseResult(name=case.name, status="not_run", note=_why_not(case))
                    )
                    continue
                if case.limit is not None or ev.truths.oversized(case):
                    at_limits.append(case)
                    continue
                truth = ev.truths.get(case)
                grid += self.case_steps(case, truth, results)
                run.append((case, truth))
            self.drive(grid)
            profiled = bool(at_limits) and self.judge_limits(at_limits, results)
            judged = [(c, t) for c, t in run if c.name not in self.not_run]
            phases.cases, mark = _lap(mark)
            if judged:
                self.drive(self.extra_steps(judged, profile=not profiled))
            # The bench shapes' compiles, which the timing needs (one that fails rejects),
            # waited for off the GPU's lock: no call of this candidate is in flight.
            self.off_gpu()
            failure, where = ev.end_compiles(phases, stop=False)
            if failure is not None:
                raise Rejected(failure, where)
            if self.device == "cuda":
                self.on_gpu()
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
                # A drawn case is drawn again by judging with the run's seed: say which.
                drawn = any(c.drawn and c.name == r.case for c in ev.grid)
                where = f"case {r.case}" + (f" (drawn from seed {ev.seed})" if drawn else "")
                failure = Failure(failure.category, f"{where}: {failure.reason}")
                if r.case in {c.name for c in ev.grid}:
                    results = [c for c in results if c.name != r.case]
                    results.append(CaseResult(name=r.case, status="failed", note=failure.reason))
        finally:
            ev.end_compiles(phases, stop=True)  # rejected: what is left to compile is of no use
            if self.runner is not None:
                self.runner.close()
            self.off_gpu()  # once the runner is gone: calls sent ahead stop with it
            costs = self.answers.costs
            phases.calls = costs if costs.calls else None
        results = [c for c in results if c.name not in self.not_run]
        done = {c.name for c in results}
        for case in ev.grid:
            if case.name not in done:
                note = self.not_run.get(case.name, "not run: stopped at the first failure")
                results.append(CaseResult(name=case.name, status="not_run", note=note))
        order = {c.name: i for i, c in enumerate(ev.grid)}
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
            kernels=sorted(self.answers.kernels),
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
        self.spaces = reply.spaces
        too_many = sweep.over_budget(self.spaces)
        if too_many is not None:
            raise Rejected(too_many)

    def step(
        self,
        case: Case,
        truth: CaseTruth,
        variant: str,
        *,
        fill: str = "poison",
        guard: bool = True,
        keep: str | None = None,
        report: tuple[str, ...] = (),
        repeat: int = 1,
        profile: bool = False,
        then: Then | None = None,
        context: str = "",
        pin: dict[str, int] | None = None,
    ) -> _Step:
        """One call to make, and what to check of its answer beyond the full check against
        the truth that every call gets. `pin`: the config of each autotuned kernel it runs
        (sweep.py); the first of any not named. `fill`: "poison" or "random", the family and its
        values drawn per call from the run's seed (fills.py): no constant marks a judged call."""
        self.calls += 1
        poisons = fills.PROFILED if profile else fills.POISONS
        family = self.ev.rng.choice(poisons) if fill == "poison" else fill
        lends = self.device == "cuda"  # the inputs are lent as the call is sent (`drive`)
        request = Call(
            inputs=None if lends else str(truth.variants[variant].file),
            shared=[] if lends else None,
            share_outputs=lends,
            outputs=str(self.ev.folder / f"out-{self.calls}.pt"),
            guard=guard,
            fill=family,  # type: ignore[arg-type]
            fill_seed=self.ev.rng.getrandbits(63),
            keep=keep,
            report=list(report),
            repeat=repeat,
            profile=profile,
            pin=pin or {},
        )
        # A failure names the configs the call ran, so a wrong config is named.
        context = ", ".join(filter(None, [context, sweep.note(self.spaces, pin or {})]))
        return _Step(case, truth, variant, request, then, context)

    def on_gpu(self) -> None:
        self.gpu.enter_context(gpulock.shared("judging a candidate", self.spec.name))
        self.gpu_held = True

    def off_gpu(self) -> None:
        self.gpu.close()
        self.gpu_held = False

    def compiled(self, case: Case) -> None:
        """Wait, before a case's first call, for its compile ahead (ev.prepare): the case is
        reached as the compiles of the ones after it go on. Its compile failure rejects. Called
        with no call of this candidate in flight, it lets the GPU's lock go while it waits: a
        timing of another job need not wait for this compile (judge_limits, drive)."""
        if case.name in self.compiled_cases:
            return
        release = self.gpu_held and self.ev.compiling(case)
        if release:
            self.off_gpu()
        try:
            failure = self.ev.compiled_for(case)
        finally:
            if release:
                self.on_gpu()
        if failure is not None:
            raise Rejected(failure, case.name)
        self.compiled_cases.add(case.name)

    def drive(self, steps: list[_Step]) -> None:
        """Make the calls in order, checking each answer in order, with up to WINDOW requests
        ahead of the one being checked: the runner computes the next call while the judge
        compares the last one. The first failure ends it (the runner is killed with whatever
        it was still doing). A call's deadline counts from when the judge starts waiting for
        its answer, which is never before the runner could have started on it. A case whose
        compile ahead is still going is sent once the calls in flight are answered, its compile
        waited for off the GPU's lock (`compiled`)."""
        assert self.runner is not None
        queue = iter(steps)
        pending: deque[_Step] = deque()
        held: list[_Step] = []  # the next step, its case's compile still going

        def post() -> None:
            step = held.pop() if held else next(queue, None)
            while step is not None and step.case.name in self.not_run:
                step = next(queue, None)
            if step is None:
                return
            if (
                pending
                and step.case.name not in self.compiled_cases
                and self.ev.compiling(step.case)
            ):
                held.append(step)  # waited for once the calls in flight are answered
                return
            self.compiled(step.case)
            assert self.runner is not None
            request = step.request
            if request.shared is not None:  # a fresh loan for every call
                shared = step.truth.variants[step.variant].lend()
                request = request.model_copy(update={"shared": shared})
            self.runner.send(request)
            pending.append(step)

        for _ in range(WINDOW):
            post()
        costs = self.answers.costs
        while pending or held:
            if not pending:  # a compile waited for: the window filled again
                for _ in range(WINDOW):
                    post()
                continue
            step = pending.popleft()
            name = step.case.name
            mark = time.monotonic()
            reply = self.runner.receive(self.ev.deadline(name, step.request.repeat), f"case {name}")
            costs.add("judge_wait", time.monotonic() - mark)
            post()
            out_file = Path(step.request.outputs)
            try:
                if name in self.not_run:  # its other calls, sent ahead, fail alike
                    continue
                if isinstance(reply, Dead):
                    raise Rejected(Failure(reply.category, reply.reason))
                if not reply.ok:
                    lacks = self.lacking(reply.error)
                    if lacks is not None:
                        self.not_run[name] = lacks
                        continue
                    raise Rejected(classify(reply.error or Failed(type="Error", message="")))
                _count(costs, reply)
                mark, read = time.monotonic(), costs.judge_read
                self.answers.check_log(reply, step.request.guard or step.request.profile)
                out, result = self.answers.check_output(
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

    def lacking(self, error: Failed | None) -> str | None:
        """Why a case is not run on CPU, where the runner says the interpreter lacks a
        libdevice function (runner._failed). Believed only for one the interpreter's table
        does not compute and the candidate's source names: anything else is a crash."""
        if self.device != "cpu" or error is None or error.type != "InterpreterLacks":
            return None
        name = error.message.removeprefix("libdevice.")
        tree = ast.parse(self.path.read_text())
        named = any(
            getattr(n, "attr", None) == name or getattr(n, "name", None) == name
            for n in ast.walk(tree)
            if isinstance(n, (ast.Attribute, ast.alias))
        )
        if name in libdevice.TABLE or not named:
            return None
        return f"not run on CPU: the interpreter lacks libdevice.{name}"

    # ---- the case grid -----------------------------------------------------------------------

    def case_steps(self, case: Case, truth: CaseTruth, results: list[CaseResult]) -> list[_Step]:
        """The four calls of a case (the last one's check adds the case's result), then each
        other config of each autotuned kernel alone (sweep.py)."""
        seen: dict[str, Any] = {}
        base, alone = sweep.case_pins(self.spaces, self.device, self.cases_planned)
        self.cases_planned += 1
        if case.limit is not None or self.ev.truths.oversized(case):  # one input set
            return self.limit_steps(case, truth, results, base, alone)

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
                self.answers.agree(seen["out"], out, case, what, truth.variants["a"])
                seen["slowest"] = max(seen["slowest"], reply.seconds)
                if last:
                    results.append(
                        seen["result"].model_copy(update={"seconds": round(seen["slowest"], 4)})
                    )

            return check

        return [
            self.step(case, truth, "a", keep="a", then=first, pin=base),
            self.step(case, truth, "b", keep="b", report=("a",), then=second, pin=base),
            # Fresh copies of A, into buffers that hold random finite values: nothing tells
            # them apart from memory the kernel wrote.
            self.step(
                case,
                truth,
                "a",
                fill="random",
                then=agrees("a call into randomly filled buffers"),
                pin=base,
            ),
            self.step(
                case,
                truth,
                "a",
                fill="random",
                guard=False,
                then=agrees("a call without the guard", last=True),
                pin=base,
            ),
        ] + [self.step(case, truth, "b" if i % 2 else "a", pin=pin) for i, pin in enumerate(alone)]

    def limit_steps(
        self,
        case: Case,
        truth: CaseTruth,
        results: list[CaseResult],
        base: dict[str, int],
        alone: list[dict[str, int]],
    ) -> list[_Step]:
        """A limit case's calls, and a case's too large to keep (Truths.oversized): what only
        its size shows, each a full check (on a limit case's sampled rows). One call under the
        guard into poisoned memory: offsets that wrap past 2^31 read or write other rows, and a
        grid that cannot launch fails (the guard also sees a fallback to torch taken only at
        this size). Then each other config of each autotuned kernel alone, since a config's
        block sizes set its grid and its offsets; each is a ~ms kernel on the GPU. Not run: B
        (caching and shared outputs show on every other case, and a second input set would
        double the GBs the judge holds), and the calls into random fills and without the guard
        (what they look for does not depend on size)."""

        def done(reply: Reply, out: Any, result: CaseResult) -> None:
            results.append(result.model_copy(update={"seconds": round(reply.seconds, 4)}))

        return [self.step(case, truth, "a", then=done, pin=base)] + [
            self.step(case, truth, "a", pin=pin) for pin in alone
        ]

    def judge_limits(self, cases: list[Case], results: list[CaseResult]) -> bool:
        """The limit cases and those too large to keep (Truths.oversized), after the others, as
        the host's only judge holding one (gpulock.limit_case): each drawn when reached, its
        layout kept for the next candidates' compile-ahead, and the judge trimmed to its budget
        before the next is drawn.
        The largest's calls end with one under the profiler, where a fallback taken only at
        that size would show. Returns whether that profiled call was made."""
        ev = self.ev
        largest = max(cases, key=_numel)
        profile = self.device == "cuda"
        for case in cases:  # before the lock, which a compile runner at GBs of layout takes
            self.compiled(case)
        with gpulock.limit_case("judging its limit cases", self.spec.name):
            for case in cases:
                truth = ev.truths.get(case)
                ev.limit_layouts[case.name] = truth.layout
                steps = self.case_steps(case, truth, results)
                if profile and case is largest:
                    steps.append(
                        self.step(case, truth, "a", profile=True, then=self.answers.profiled)
                    )
                self.drive(steps)
                del truth, steps  # its GBs go with the cache's hold, not kept by these
                ev.truths.trim()
        return profile

    def extra_steps(self, run: list[tuple[Case, CaseTruth]], profile: bool = True) -> list[_Step]:
        """A call after a random number of calls on the smallest case, and on CUDA (unless a
        limit case had it: judge_limits) one call under the profiler on the largest."""
        ev = self.ev
        steps: list[_Step] = []
        # The many calls in a row on a small case, never a limit case (GBs a call).
        smallest = min(
            [ct for ct in run if ct[0].limit is None] or run, key=lambda ct: _numel(ct[0])
        )
        largest = max(run, key=lambda ct: _numel(ct[0]))
        # A call after many calls: a kernel that counts its calls and changes after N.
        lo, hi = MANY_CALLS[self.device]
        n = ev.rng.randint(lo, hi)
        other = "b" if "b" in smallest[1].variants else "a"  # a limit case has one input set
        steps.append(self.step(*smallest, other, repeat=n, context=f"after {n} calls in a row"))
        if self.device == "cuda" and profile:
            # Every CUDA kernel of one call (the largest case, where a size-triggered fallback
            # would show) must be one of the candidate's Triton kernels, or a layout copy or
            # fill. Checked after every guarded call before it has named the candidate's own.
            steps.append(self.step(*largest, "a", profile=True, then=self.answers.profiled))
        return steps

    def sanitize(self, cases: list[Case]) -> list[str]:
        return sanitizer.check(self.ev, self.path, cases)


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
    if case.limit is not None:
        return "not run on CPU: a limit case (GPU only; its inputs are GBs)"
    why = (
        "bf16 arithmetic is wrong in the interpreter"
        if "bfloat16" in (case.dtype, *case.fixed_dtypes)
        else "too large for the interpreter"
    )
    return f"not run on CPU: {why}"
