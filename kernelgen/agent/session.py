"""A coding agent as the proposer: the run session behind `kernelgen agent` (and an MCP server).

The other proposers are pulled: the loop asks them for candidates. An agent pushes: it reads the
context, writes a kernel, submits it, reads the verdict and decides what to try next. So an agent
run is a Loop whose proposer never offers anything by itself; each submission is one round of one
candidate (r<round>-c01, parent the run's best or 'seed'), stored 'pending' with its source and
the agent's note as transcript, then finished by Loop.finish_chain exactly like a proposal of the
loop: static rules, sandbox, correctness; on CUDA the bench against the best, the acceptance rule
and the tuning of declared meta-parameters. Repairs are the agent's own next submissions.

The session drives a Loop from outside; the seat it gives the agent in the loop is
propose/agent.py, and what it answers is results.py. Every function opens the run from the store
and leaves everything there, so one process per shell command and a long-lived server can share
them unchanged; a lock on the run folder keeps two submissions to one run from taking the same
candidate id. A long-lived
session (the MCP server, scripts/agent_plan.py) also keeps each run's judge between calls
(`kept_judges`), as the loop keeps one judge per run.
"""

from __future__ import annotations

import fcntl
import random
import re
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kernelgen import paths, store
from kernelgen.agent.results import (
    AgentContext,
    CandidateOutcome,
    OperatorInfo,
    Operators,
    PromoteResult,
    ReportPaths,
    RunStatus,
    ShapeResult,
    SubmitResult,
)
from kernelgen.bench.profile import ProfileResult
from kernelgen.errors import NoDeviceError, UsageError
from kernelgen.propose.agent import AgentProposer
from kernelgen.propose.base import Proposal
from kernelgen.records import (
    BenchRecord,
    Budget,
    CandidateRecord,
    RunRecord,
    Transcript,
)
from kernelgen.run import loop
from kernelgen.run.optimize import CandidateSummary, maybe_promote
from kernelgen.spec import load_spec

if TYPE_CHECKING:
    from kernelgen.verify import Evaluator

# Run ids are folder names: anything else could point the store outside evaluations/.
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_SOURCE_CHARS = 1_000_000
MAX_NOTE_CHARS = 100_000
# ---- arguments ------------------------------------------------------------------------------


def _text(value: object, what: str, limit: int, *, empty_ok: bool) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{what}: expected text (a str), got {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise UsageError(f"{what}: empty; expected the candidate module's Python source")
    if len(value) > limit:
        raise UsageError(f"{what}: {len(value)} characters, expected at most {limit}")
    return value


def _device(device: str | None) -> str:
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise UsageError(f"device {device!r}: expected 'cpu' or 'cuda'")
    if device == "cuda" and not torch.cuda.is_available():
        raise NoDeviceError("device cuda: no CUDA device here (use cpu)")
    return device


def find_run(run_id: object) -> RunRecord:
    """A run by its id alone: ids are unique across operators (a UTC stamp and random hex), and
    the store keeps each under evaluations/<op>/<id>/."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise UsageError(
            f"run id {run_id!r}: expected a run id like 20260101-120000-agent-1a2b "
            "(printed by `kernelgen agent start`)"
        )
    root = paths.evaluations_dir()
    hits = sorted(root.glob(f"*/{run_id}/run.json"))
    if not hits:
        raise UsageError(
            f"no run {run_id!r} under {root}: start one with `kernelgen agent start OP`"
        )
    if len(hits) > 1:
        ops = ", ".join(p.parent.parent.name for p in hits)
        raise UsageError(f"run id {run_id!r} is under several operators ({ops}): ambiguous")
    return store.load_run(hits[0].parent.parent.name, run_id)


@contextmanager
def _locked(run: RunRecord) -> Iterator[None]:
    # One writer per run: ids are taken from what is stored, so two submissions at once would
    # otherwise both become the same r<round>-c01. Readers (context, status) need no lock: every
    # write is atomic.
    lock = store.run_dir(run.op, run.id) / ".agent.lock"
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# Run id -> its judge, while a long-lived session keeps them (None: not kept, one process per
# shell command). A judge holds the run's ground truth (the float64 reference of every case:
# 4.8-9.1 s of each H200 submission's verify when made afresh), its warm runners and its
# compile-ahead pool; it is made once per run and session, as the loop makes one per run. Its
# seed is drawn once per session, so a run's submissions in one session see the same inputs,
# as the candidates of one optimize run do. The newest few are kept: each holds its inputs.
_kept: OrderedDict[str, Evaluator] | None = None
KEPT_JUDGES = 2


@contextmanager
def kept_judges() -> Iterator[None]:
    """Keep each run's judge from one call to the next until the block ends (then close them)."""
    global _kept
    if _kept is not None:  # nested: the outer block owns them
        yield
        return
    _kept = OrderedDict()
    try:
        yield
    finally:
        judges, _kept = _kept, None
        for ev in judges.values():
            ev.close()


def _release(runner: loop.Loop) -> None:
    """End a call: keep the run's judge where the session keeps judges, close it elsewhere."""
    ev = runner.judging.evaluator
    if _kept is not None and ev is not None:
        _kept[runner.run.id] = ev
        _kept.move_to_end(runner.run.id)
        runner.judging.evaluator = None
        while len(_kept) > KEPT_JUDGES:
            _, old = _kept.popitem(last=False)
            old.close()
    runner.close()


def _open(run: RunRecord) -> loop.Loop:
    """The run as a Loop, from the store; its judge is made by _judging, only where one judges."""
    return loop.resume(run.op, run.id, AgentProposer(run.settings.model))


def _judging(runner: loop.Loop) -> None:
    """Make the run's judge, or take the one the session kept. On CUDA a new one takes the
    deadlines from the seed verdict stored at start, so a submission (one process per shell
    command) does not pay for judging the seed again; without one, prepare() judges the seed as
    the loop does."""
    kept = _kept.pop(runner.run.id, None) if _kept is not None else None
    if kept is not None:
        runner.judging.evaluator = kept
    elif runner.device == "cuda" and runner.run.seed_verdict is not None:
        from kernelgen.verify import Evaluator

        judge = Evaluator(runner.op, runner.device, seed=random.SystemRandom().randrange(2**31))
        judge.calibrate(runner.run.seed_verdict)
        runner.judging.evaluator = judge
    runner.prepare()


def _next(runner: loop.Loop) -> tuple[int, str, str]:
    round_no = max((r.round for r in runner.records), default=0) + 1
    return round_no, f"r{round_no:02d}-c01", runner.best_id() or "seed"


# ---- the session ----------------------------------------------------------------------------


def list_operators() -> Operators:
    """Every operator with a reference: its seed, what the library ships, its case grid, its
    benchmark shapes and its runs."""
    from kernelgen.package import reference_summary
    from kernelgen.report.manifest import read_manifest
    from kernelgen.spec import known_ops, seed_path

    shipped = read_manifest()
    out = []
    for op in known_ops():
        spec = load_spec(op)
        seed = seed_path(op)
        entry = shipped.get(op)
        generated = None
        if entry:
            generated = str(entry.get("proposer") or "?")
            if entry.get("run_id"):
                generated += f" run {entry['run_id']}/{entry.get('candidate_id')}"
        out.append(
            OperatorInfo(
                name=op,
                summary=reference_summary(op),
                seed=str(seed.relative_to(paths.root())) if seed.is_file() else None,
                generated=generated,
                cases=len(spec.cases),
                cpu_cases=sum(c.interpreter for c in spec.cases),
                bench_shapes=[b.name for b in spec.data.bench],
                runs=store.list_runs(op),
            )
        )
    return Operators(operators=out)


def start_run(op: str, device: str | None = None, model: str | None = None) -> RunRecord:
    """A new run with proposer 'agent'; on CUDA the seed is judged and timed first, so the first
    context holds its timings and the first candidate is benched against it."""
    if not isinstance(op, str):
        raise UsageError(f"operator {op!r}: expected an operator name")
    load_spec(op)  # unknown -> UsageError listing the known ones
    if model is not None:
        model = _text(model, "model", 200, empty_ok=False).strip()
    # The agent, not a budget, decides when to stop: rounds grows with each submission, and no
    # repair turns, since the agent repairs by submitting again.
    budget = Budget(rounds=1, candidates=1, repairs=0)
    runner = loop.start(op, AgentProposer(model), device=_device(device), budget=budget)
    try:
        runner.prepare()
    finally:
        _release(runner)
    return runner.run


def get_context(run_id: str) -> AgentContext:
    """The context the llm proposer's prompt is built from, and that prompt as text."""
    from kernelgen.propose.llm import render_prompt

    runner = _open(find_run(run_id))
    round_no, cid, parent = _next(runner)
    ctx = runner.context(round_no)
    prompt = "\n\n".join(m.content for m in render_prompt(ctx))
    return AgentContext(
        run_id=runner.run.id, next_candidate=cid, parent=parent, context=ctx, prompt=prompt
    )


def submit_candidate(run_id: str, source: str, note: str | None = None) -> SubmitResult:
    """Judge one candidate as the loop judges any proposal, and return its verdict and timings."""
    source = _text(source, "source", MAX_SOURCE_CHARS, empty_ok=False)
    if note is not None:
        note = _text(note, "note", MAX_NOTE_CHARS, empty_ok=True)
    run = find_run(run_id)
    if run.settings.proposer != "agent":
        raise UsageError(
            f"run {run.id} is a {run.settings.proposer} run of {run.op}: submit to an agent run "
            f"(`kernelgen agent start {run.op}`)"
        )
    if run.settings.device == "cuda":
        _device("cuda")
    with _locked(run):
        runner = _open(run)
        try:
            _judging(runner)  # also times the seed if a killed start did not
            round_no, cid, parent = _next(runner)
            before = runner.best_bench()
            transcript = (
                Transcript(reply=note, model=run.settings.model) if note is not None else None
            )
            rec = runner.new_record(
                cid, round_no, parent, Proposal(source=source, transcript=transcript, name=cid)
            )
            runner.finish_chain([rec], round_no)
            runner.run.rounds_done = round_no
            runner.run.settings.budget.rounds = max(runner.run.settings.budget.rounds, round_no)
            store.save_run(runner.run)
        finally:
            _release(runner)
    by_id = {r.id: r for r in runner.records}
    tuned = by_id.get(f"{cid}-tuned")
    return SubmitResult(
        run_id=run.id,
        op=run.op,
        device=runner.device,
        candidate=_outcome(by_id[cid], before),
        tuned=_outcome(tuned, before) if tuned is not None else None,
        best=runner.run.best,
        timed=runner.device == "cuda",
    )


def run_status(run_id: str) -> RunStatus:
    run = find_run(run_id)
    records = store.load_candidates(run.op, run.id)
    return RunStatus(
        run_id=run.id,
        op=run.op,
        device=run.settings.device,
        proposer=run.settings.proposer,
        model=run.settings.model,
        state=run.state,
        best=run.best,
        rounds_done=run.rounds_done,
        pending=sum(r.status == "pending" for r in records),
        promoted=run.promoted,
        run_dir=str(store.run_dir(run.op, run.id)),
        candidates=[CandidateSummary.model_validate(r, from_attributes=True) for r in records],
    )


def finish_pending(run_id: str) -> RunStatus:
    """What `optimize --resume` does for an agent run: judge (and on CUDA bench and tune) what a
    killed submission left unfinished. It asks for nothing new: there is no one to ask."""
    run = find_run(run_id)
    with _locked(run):
        runner = _open(run)
        try:
            unfinished = [
                (round_no, chain)
                for round_no in sorted({r.round for r in runner.records})
                for chain in runner.chains(round_no)
                if any(_unfinished(r, runner.device) for r in runner.records if r.round == round_no)
            ]
            if unfinished:
                _judging(runner)
            for round_no, chain in unfinished:
                runner.finish_chain(chain, round_no)
            store.save_run(runner.run)
        finally:
            _release(runner)
    return run_status(run_id)


def promote(run_id: str) -> PromoteResult:
    """Put the run's best into generated/ the way `optimize` does: compute-sanitizer on the best,
    then a bench against the library's kernel when it holds a generated one."""
    run = find_run(run_id)
    if run.settings.device != "cuda":
        raise UsageError(
            f"run {run.id} was judged on {run.settings.device}: promotion needs a candidate "
            "verified and timed on CUDA (start the run with --device cuda on a GPU machine)"
        )
    _device("cuda")
    if run.best is None:
        raise UsageError(
            f"run {run.id} of {run.op}: no candidate beat the seed, nothing to promote"
        )
    with _locked(run):
        runner = _open(run)
        try:
            _judging(runner)
            why = runner.sanitize_best()
            events = _Events()
            promoted = why is None and maybe_promote(runner.run, events)
            if why is None and not promoted:
                why = events.last or "not promoted"
            runner.run.promoted = runner.run.promoted or promoted
            store.save_run(runner.run)
        finally:
            _release(runner)
    path = paths.library_dir() if promoted else None
    return PromoteResult(
        run_id=run.id,
        op=run.op,
        candidate=run.best,
        promoted=promoted,
        path=str(path) if path else None,
        why=why,
    )


def profile(run_id: str, candidate: str | None = None, shape: str | None = None) -> ProfileResult:
    """Nsight Compute's summary of one candidate's kernels at one bench shape; by default the
    run's best (else the seed) at its worst shape against the best peer. Stored beside the
    candidate, where the next context picks it up for that shape."""
    from kernelgen.bench.profile import profile_file, summarize, worst_shape
    from kernelgen.spec import has_seed, seed_path

    run = find_run(run_id)
    if run.settings.device != "cuda":
        raise UsageError(
            f"run {run.id} was judged on {run.settings.device}: profiling needs a CUDA run "
            "(Nsight Compute measures GPU kernels; start one with --device cuda on a GPU machine)"
        )
    records = {r.id: r for r in store.load_candidates(run.op, run.id)}
    accepted = [i for i, r in records.items() if r.status == "accepted"]
    known = ", ".join(["seed", *accepted])
    if candidate is None:
        candidate = run.best or "seed"
    if not isinstance(candidate, str) or (candidate != "seed" and candidate not in records):
        raise UsageError(
            f"run {run.id}: no candidate {candidate!r}; expected 'seed' or an accepted "
            f"candidate: {known}"
        )
    if candidate == "seed" and not has_seed(run.op):
        raise UsageError(
            f"run {run.id}: {run.op} has no seed (torch eager is its baseline); expected an "
            f"accepted candidate: {', '.join(accepted) or 'none yet'}"
        )
    if candidate != "seed" and records[candidate].status != "accepted":
        rec = records[candidate]
        raise UsageError(
            f"run {run.id}: candidate {candidate} is {rec.status}"
            + (f" [{rec.category}]" if rec.category else "")
            + f"; only verified kernels are profiled, expected one of: {known}"
        )
    bench = run.seed_bench if candidate == "seed" else records[candidate].bench
    spec = load_spec(run.op)
    names = [b.name for b in spec.data.bench]
    if shape is None:
        shape = worst_shape(bench) or names[0]
    # A run recorded before its shapes were renamed names them by their former names.
    named = spec.data.bench_named(shape)
    if named is None:
        raise UsageError(f"{run.op}: no bench shape {shape!r}; expected one of: {', '.join(names)}")
    shape = named.name
    _device("cuda")
    source = (
        seed_path(run.op)
        if candidate == "seed"
        else store.candidate_path(run.op, run.id, candidate)
    )
    dtype = named.dtype
    command, kernels, gpu = profile_file(run.op, source, shape, seed=run.settings.seed)
    result = ProfileResult(
        op=run.op,
        run_id=run.id,
        candidate=candidate,
        shape=shape,
        dtype=dtype,
        gpu=gpu or (bench.environment.gpu if bench else None),
        command=command,
        kernels=kernels,
        summary=summarize(candidate, shape, dtype, kernels),
    )
    path = store.profile_path(run.op, run.id, candidate, shape)
    store.write_atomic(path, result.model_dump_json(indent=2))
    return result


def report(run_id: str) -> ReportPaths:
    """Write the run's report.md and report.html (seed -> best, with the evidence)."""
    from kernelgen.report import render_run

    run = find_run(run_id)
    written = render_run(run.op, run_id=run.id, fmt="md").written
    by_name = {Path(p).name: str(p) for p in written}
    return ReportPaths(
        run_id=run.id, op=run.op, md=by_name["report.md"], html=by_name["report.html"]
    )


# ---- helpers --------------------------------------------------------------------------------


class _Events:
    """An observer that keeps the last event: maybe_promote says why it did not promote there."""

    last: str | None = None

    def event(self, message: str) -> None:
        self.last = message

    def candidate(self, record: CandidateRecord, run: RunRecord) -> None:
        pass


def _unfinished(rec: CandidateRecord, device: str) -> bool:
    return rec.status == "pending" or (
        rec.status == "accepted" and device == "cuda" and rec.bench is None
    )


def _outcome(rec: CandidateRecord, best: BenchRecord | None) -> CandidateOutcome:
    verdict = rec.verdict
    failing = None
    if verdict is not None:
        failing = next((c for c in verdict.cases if c.status == "failed"), None)
    best_us = {(s.shape, s.dtype): s.candidate.median_us for s in best.shapes} if best else {}
    shapes = []
    for s in rec.bench.shapes if rec.bench else []:
        theirs = best_us.get((s.shape, s.dtype))
        shapes.append(
            ShapeResult(
                shape=s.shape,
                dtype=s.dtype,
                us=s.candidate.median_us,
                best_us=theirs,
                vs_best=theirs / s.candidate.median_us if theirs else None,
                vs_eager=s.speedup_eager,
                vs_compile=s.speedup_compile,
                vs_seed=s.speedup_seed,
                gbps=s.gbps,
                limit_pct=s.limit_pct,
                bound=s.bound,
            )
        )
    return CandidateOutcome(
        id=rec.id,
        parent=rec.parent,
        status=rec.status,
        outcome=verdict.outcome if verdict else None,
        category=rec.category,
        reason=rec.reason,
        failing_case=failing,
        cases_run=verdict.cases_run if verdict else 0,
        cases_not_run=verdict.cases_not_run if verdict else [],
        became_best=rec.became_best,
        speedup=rec.speedup,
        shapes=shapes,
    )


__all__ = [
    "AgentContext",
    "SubmitResult",
    "RunStatus",
    "PromoteResult",
    "ReportPaths",
    "ProfileResult",
    "find_run",
    "start_run",
    "get_context",
    "submit_candidate",
    "run_status",
    "finish_pending",
    "promote",
    "profile",
    "report",
]
