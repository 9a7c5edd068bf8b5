"""What a run report shows, gathered once from the store; the terminal, Markdown and HTML
renderers only format it.

A report focuses on one candidate: the run's best (seed -> best), or with ``candidate=`` any
candidate (its parent -> it). Everything a reader might expect and not find — no accepted
candidate, no timings on CPU, a run still going — is stated in ``notes`` rather than left blank.
"""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernelgen import paths, store
from kernelgen.errors import UsageError
from kernelgen.records import (
    BenchRecord,
    CandidateRecord,
    CaseResult,
    CompileFacts,
    RunRecord,
    ShapeTiming,
    now,
)
from kernelgen.report.manifest import read_manifest
from kernelgen.report.ratios import geomean, ratio


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShapeRow(_Model):
    """One benchmark shape: the focused kernel against its peers."""

    shape: str
    dtype: str
    seed_us: float | None = None
    best_us: float | None = Field(None, description="the focused kernel (best or --candidate)")
    eager_us: float | None = None
    compile_us: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    speedup_seed: float | None = None
    limit_pct: float | None = None
    seed_limit_pct: float | None = None
    bound: str | None = None
    gbps: float | None = None
    tflops: float | None = None


class Geomeans(_Model):
    eager: float | None = None
    compile: float | None = None
    seed: float | None = None


class RoundPoint(_Model):
    """The best kernel after a round; times line up with ReportData.shapes."""

    label: str = Field(description="'seed' or 'r<round>'")
    round: int | None
    best: str = Field(description="candidate id, or 'seed'")
    times_us: list[float | None]


class ReportData(_Model):
    op: str
    run: RunRecord
    candidates: list[CandidateRecord]
    focus: str | None = Field(description="candidate shown, None when the seed remained best")
    focus_is_best: bool
    base: str = Field(description="what the diff starts from: 'seed' or the parent's id")
    base_path: str | None = None
    focus_path: str | None = None
    base_source: str | None = None
    focus_source: str | None = None
    diff: str = Field("", description="unified diff base -> focus; empty when there is none")
    diff_note: str | None = Field(None, description="why there is no diff")
    shapes: list[ShapeRow] = Field(default_factory=list)
    geomean: Geomeans = Field(default_factory=Geomeans)
    rounds: list[RoundPoint] = Field(default_factory=list)
    compile: list[CompileFacts] = Field(default_factory=list)
    failed_cases: list[CaseResult] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    run_dir: str
    generated: str = Field(default_factory=now)

    @property
    def focus_label(self) -> str:
        return self.focus or "seed"

    @property
    def shapes_title(self) -> str:
        if self.focus is None:
            return "Per shape: the seed against torch eager and torch.compile"
        return f"Per shape: {self.focus} against the seed, torch eager and torch.compile"

    @property
    def diff_title(self) -> str:
        return f"Diff: {self.base} → {self.focus or 'best (the seed)'}"

    @property
    def focus_record(self) -> CandidateRecord | None:
        return next((c for c in self.candidates if c.id == self.focus), None)

    @property
    def timed(self) -> bool:
        return any(r.best_us is not None or r.seed_us is not None for r in self.shapes)

    @property
    def counts(self) -> dict[str, int]:
        out = {"accepted": 0, "rejected": 0, "pending": 0}
        for c in self.candidates:
            out[c.status] += 1
        return out


def _peer(t: ShapeTiming, name: str) -> float | None:
    p = getattr(t, name)
    return p.median_us if p is not None else None


def _key(t: ShapeTiming) -> tuple[str, str]:
    return (t.shape, t.dtype)


def _seed_source(op: str, run: RunRecord) -> tuple[str | None, str | None]:
    """The seed as the run saw it: a copy in the run if the loop kept one, else seeds/<op>.py,
    else (no seed) the reference, torch eager being the baseline."""
    here = store.run_dir(op, run.id)
    for path in (here / "candidates" / "seed" / "source.py", here / "seed.py"):
        if path.is_file():
            return path.read_text(), path.relative_to(here).as_posix()
    path = paths.seeds_dir() / f"{op}.py"
    if path.is_file():
        return path.read_text(), f"seeds/{op}.py"
    # An operator without a seed (an imported problem) starts from torch eager: its reference.
    path = paths.references_dir() / f"{op}.py"
    if path.is_file():
        return path.read_text(), f"references/{op}.py"
    return None, None


def _source(op: str, run_id: str, cand_id: str) -> tuple[str | None, str]:
    """The candidate's source and its path relative to the run (where the report is written)."""
    path = store.candidate_path(op, run_id, cand_id)
    rel = path.relative_to(store.run_dir(op, run_id)).as_posix()
    return (path.read_text() if path.is_file() else None), rel


def unified_diff(a: str, b: str, a_name: str, b_name: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        a.splitlines(), b.splitlines(), fromfile=a_name, tofile=b_name, n=context, lineterm=""
    )
    return "\n".join(lines)


def _shape_rows(focus: BenchRecord | None, seed: BenchRecord | None, focus_is_seed: bool):
    rows: list[ShapeRow] = []
    seed_by_key = {_key(t): t for t in seed.shapes} if seed else {}
    bench = focus or (seed if focus_is_seed else None)
    if bench is None:
        return rows
    for t in bench.shapes:
        s = seed_by_key.get(_key(t))
        if focus_is_seed:
            seed_us = t.candidate.median_us
        else:
            seed_us = _peer(t, "seed") or (s.candidate.median_us if s else None)
        rows.append(
            ShapeRow(
                shape=t.shape,
                dtype=t.dtype,
                seed_us=seed_us,
                best_us=t.candidate.median_us,
                eager_us=_peer(t, "eager"),
                compile_us=_peer(t, "compile"),
                speedup_eager=t.speedup_eager or ratio(_peer(t, "eager"), t.candidate.median_us),
                speedup_compile=t.speedup_compile
                or ratio(_peer(t, "compile"), t.candidate.median_us),
                speedup_seed=1.0
                if focus_is_seed
                else t.speedup_seed or ratio(seed_us, t.candidate.median_us),
                limit_pct=t.limit_pct,
                seed_limit_pct=t.limit_pct if focus_is_seed else (s.limit_pct if s else None),
                bound=t.bound,
                gbps=t.gbps,
                tflops=t.tflops,
            )
        )
    return rows


def _rounds(run: RunRecord, cands: list[CandidateRecord], shapes: list[ShapeRow]):
    """The best after each round: the last candidate that became best by then, else the seed."""
    if not shapes:
        return []
    keys = [(r.shape, r.dtype) for r in shapes]
    seed_times = [r.seed_us for r in shapes]
    points = [RoundPoint(label="seed", round=None, best="seed", times_us=seed_times)]
    by_id = {c.id: c for c in cands}
    promoted = [c for c in cands if c.became_best]
    if not promoted and run.best in by_id:
        promoted = [by_id[run.best]]
    last = run.rounds_done or 0
    numbers = sorted({c.round for c in cands} | set(range(1, last + 1)))
    best: CandidateRecord | None = None
    for n in numbers:
        for c in promoted:
            if c.round == n:
                best = c
        if best is None or best.bench is None:
            times = seed_times
        else:
            mine = {_key(t): t.candidate.median_us for t in best.bench.shapes}
            times = [mine.get(k) for k in keys]
        points.append(
            RoundPoint(label=f"r{n}", round=n, best=best.id if best else "seed", times_us=times)
        )
    return points


def default_run(op: str) -> str:
    """The run a report shows when none is named: the one whose candidate the library ships
    (what a user reviews: the diff from the seed to what they import), else the latest."""
    shipped = read_manifest().get(op, {}).get("run_id")
    if isinstance(shipped, str) and shipped in store.list_runs(op):
        return shipped
    return store.latest_run(op)


def gather(op: str, run_id: str | None = None, candidate: str | None = None) -> ReportData:
    run_id = run_id or default_run(op)
    run = store.load_run(op, run_id)
    cands = store.load_candidates(op, run_id)
    by_id = {c.id: c for c in cands}
    notes: list[str] = []

    if candidate is not None and candidate not in by_id:
        known = ", ".join(by_id) or "none"
        raise UsageError(f"run {op}/{run_id} has no candidate {candidate!r} (known: {known})")
    focus = candidate or run.best
    if focus is not None and focus not in by_id:
        # run.json names a best whose record is missing: report what is there, say what is not.
        notes.append(f"run.json names {focus!r} as the best, but it has no record.")
        focus = None
    rec = by_id.get(focus) if focus else None

    if run.state == "running" and run.settings.proposer == "agent":
        # An agent's run stays open after its last submission: the agent, not a budget, ends it.
        # When it was last submitted to is the summary's (its Run line).
        promoted = "; its best was promoted into generated/" if run.promoted else ""
        notes.append(
            f"Agent run, open for more submissions ({run.rounds_done} so far): a judged "
            f"candidate's figures are final, the run's best may change with a later "
            f"submission{promoted}."
        )
    elif run.state == "running":
        notes.append(
            f"Run in progress ({run.rounds_done} of {run.settings.budget.rounds} rounds done, "
            f"last update {run.updated}): figures may still change."
        )
    elif run.state == "failed":
        notes.append(f"The run failed: {run.stopped or 'no reason recorded'}.")
    accepted = [c for c in cands if c.status == "accepted"]
    if not cands:
        notes.append("No candidates were recorded yet.")
    elif not accepted:
        notes.append(
            "No candidate was accepted: every one was rejected, the seed remains the best."
        )
    elif run.best is None and run.environment.device == "cpu":
        notes.append(
            f"{len(accepted)} accepted; on CPU nothing is timed, so none replaces the seed."
        )
    elif run.best is None:
        notes.append(f"{len(accepted)} accepted, none beat the seed: the seed remains the best.")
    if run.environment.device == "cpu":
        notes.append(
            "Ran on CPU through the Triton interpreter: correctness only, no timings "
            "(speed is judged on a GPU)."
        )

    seed_source, seed_path = _seed_source(op, run)
    if seed_source is not None and run.seed_bench is not None and seed_path == f"seeds/{op}.py":
        if hashlib.sha256(seed_source.encode()).hexdigest() != run.seed_bench.sha256:
            notes.append(f"{seed_path} changed since this run: the diff starts from today's seed.")

    if seed_path == f"references/{op}.py":
        notes.append(
            f"{op} has no seed: torch eager (its reference) is the baseline, the first accepted "
            "candidate the first best, and the diff starts from the reference."
        )
    base = "seed"
    base_source, base_path = seed_source, seed_path
    # The run's report diffs seed -> best; a candidate's report diffs its parent -> it.
    if candidate is not None and rec is not None and rec.parent not in (None, "seed"):
        base = rec.parent
        base_source, base_path = _source(op, run_id, rec.parent)
    focus_source = focus_path = None
    if rec is not None:
        focus_source, focus_path = _source(op, run_id, rec.id)

    diff, diff_note = "", None
    if rec is None:
        diff_note = "The seed remained the best: there is no diff to show."
        if accepted:
            diff_note += (
                f" To review an accepted candidate: kernelgen report {op} --run {run_id} "
                f"--candidate {accepted[-1].id}"
            )
    elif focus_source is None:
        diff_note = f"{rec.id} has no source ({rec.category or rec.status}: {rec.reason or '-'})."
    elif base_source is None:
        diff_note = f"The source of {base} is missing ({base_path}): no diff."
    else:
        diff = unified_diff(
            base_source, focus_source, f"{base} ({base_path})", f"{rec.id} ({focus_path})"
        )
        if not diff:
            diff_note = f"{rec.id} is identical to {base}."
    if candidate is not None and rec is not None and rec.parent is None:
        notes.append(f"{rec.id} records no parent: the diff starts from the seed.")

    focus_is_seed = rec is None
    focus_bench = rec.bench if rec is not None else None
    shapes = _shape_rows(focus_bench, run.seed_bench, focus_is_seed)
    if rec is not None and rec.bench is None and run.environment.device == "cuda":
        notes.append(f"{rec.id} has no benchmark record: no timings to compare.")
    if not shapes and run.environment.device == "cuda" and run.seed_bench is None and rec is None:
        notes.append("No benchmark of the seed was recorded yet.")

    return ReportData(
        op=op,
        run=run,
        candidates=cands,
        focus=focus,
        focus_is_best=focus == run.best,
        base=base,
        base_path=base_path,
        focus_path=focus_path,
        base_source=base_source,
        focus_source=focus_source,
        diff=diff,
        diff_note=diff_note,
        shapes=shapes,
        geomean=Geomeans(
            eager=geomean([r.speedup_eager for r in shapes]),
            compile=geomean([r.speedup_compile for r in shapes]),
            seed=geomean([r.speedup_seed for r in shapes]),
        ),
        rounds=_rounds(run, cands, shapes),
        compile=rec.compile if rec is not None else [],
        failed_cases=[c for c in rec.verdict.cases if c.status == "failed"]
        if rec is not None and rec.verdict is not None
        else [],
        notes=notes,
        run_dir=str(store.run_dir(op, run_id)),
    )


def relpath(path: str | Path) -> str:
    try:
        return str(Path(path).relative_to(paths.root()))
    except ValueError:
        return str(path)
