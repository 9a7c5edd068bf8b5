"""Number formats and the summary lines every renderer shares, so the terminal, the Markdown and the
HTML page say the same thing in the same words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from kernelgen.records import BenchRecord, CandidateRecord, ShapeTiming
from kernelgen.report.library import LibraryFigures
from kernelgen.report.model import ReportData, ShapeRow
from kernelgen.report.ratios import geomean

MISSING = "—"


def us(v: float | None) -> str:
    if v is None:
        return MISSING
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def x(v: float | None) -> str:
    return MISSING if v is None else f"{v:.2f}×"


def pct(v: float | None) -> str:
    return MISSING if v is None else f"{v:.0f}%"


def time_over(v: float | None) -> str:
    """A time ratio, ours over a baseline's (below 1 is faster): said as time, so that it does not
    read as one of the speedups beside it."""
    return MISSING if v is None else f"{v:.2f}× time"


def vs_best_peer(f: LibraryFigures | None) -> tuple[str, str | None, str | None]:
    """The library benchmark's geomean over the best peer ("1.10× time"), its worst ratio
    ("worst 2.50×") and the shape of it; None for what the figures lack."""
    if f is None or f.time_over_best_peer is None:
        return MISSING, None, None
    worst = f.time_over_best_peer_worst
    if worst is None:
        return time_over(f.time_over_best_peer), None, None
    shape = f.time_over_best_peer_worst_shape
    return time_over(f.time_over_best_peer), f"worst {worst:.2f}×", shape


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`1 candidate`, `2 candidates`; `many` where adding an s is wrong."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def when(iso: str) -> str:
    """An ISO time of a record (UTC) as a reader says it: `2026-12-04 14:55 UTC`."""
    day, _, rest = iso.partition("T")
    if not rest:
        return iso
    zone = rest[8:]
    return f"{day} {rest[:5]}" + (" UTC" if zone in ("+00:00", "Z") else f" {zone}")


def duration(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {sec:02d}s"
    return f"{sec}s"


def cand_speedup_seed(c: CandidateRecord, seed: BenchRecord | None = None) -> float | None:
    """A candidate's geomean speedup over the seed: against the seed timed beside it where its
    benchmark did, else against `seed`, the run's benchmark of the seed, as the per-shape
    table and the summary's `× the seed` are (an agent's candidate is timed against the best
    alone)."""
    if c.bench is None:
        return None
    if c.bench.geomean_seed is not None:
        return c.bench.geomean_seed
    seed_us = {(t.shape, t.dtype): t.candidate.median_us for t in seed.shapes} if seed else {}

    def one(t: ShapeTiming) -> float | None:
        if t.speedup_seed:
            return t.speedup_seed
        base = t.seed.median_us if t.seed else seed_us.get((t.shape, t.dtype))
        return base / t.candidate.median_us if base else None

    return geomean([one(t) for t in c.bench.shapes])


def verdict_word(status: str, outcome: str | None) -> str:
    """accepted, accepted-partial (accepted on the cases that ran, some not run: a CPU verdict
    skips the bf16 and GPU-only cases), rejected or pending: the word `kernelgen verify`, `agent
    submit`, `agent status` and the reports all use."""
    return outcome if status == "accepted" and outcome else status


def candidate_word(c: CandidateRecord) -> str:
    return verdict_word(c.status, c.verdict.outcome if c.verdict is not None else None)


# The candidate history's columns, as the Markdown and HTML reports head it.
HISTORY_HEADER = (
    "round",
    "id",
    "parent",
    "proposer",
    "verdict",
    "category",
    "reason",
    "× best then",
    "× seed",
    "",
)
# The two speedups of the history, said against what: a candidate is timed against the best of
# its moment (interleaved, in one process), and the summary's figure is against the seed.
HISTORY_LEGEND = (
    "× best then: against the run's best when the candidate was judged (the seed or an earlier "
    "candidate), timed interleaved with it; × seed: against the seed, as the summary and the "
    "per-shape table give it."
)


def is_open_agent_run(d: ReportData) -> bool:
    """An agent's run stays 'running' after its last submission: the agent, not a budget, ends
    it. It is open for more, not busy."""
    return d.run.state == "running" and d.run.settings.proposer == "agent"


class _Made(Protocol):
    """A candidate as a record or as `agent status` summarizes it."""

    @property
    def id(self) -> str: ...

    @property
    def created(self) -> str | None: ...


def open_since(candidates: Sequence[_Made]) -> str:
    """An open agent run's state: when it was last submitted to, the newest candidate's creation
    (a tuned child is made by the run, not submitted)."""
    made = [c.created for c in candidates if c.created and not c.id.endswith("-tuned")]
    return f"open, last submission {when(max(made))}" if made else "open, no submission yet"


def run_state(d: ReportData) -> str:
    """The run's state as the summary says it: an open agent run says when it was last
    submitted to instead of 'running'."""
    return open_since(d.candidates) if is_open_agent_run(d) else d.run.state


def summary(d: ReportData) -> list[tuple[str, str]]:
    run, env, s = d.run, d.run.environment, d.run.settings
    items: list[tuple[str, str]] = [("Operator", d.op), ("Run", f"{run.id} ({run_state(d)})")]

    who = s.proposer + (f" · {s.model}" if s.model else "")
    if s.base_url:
        who += f" at {s.base_url}"
    if s.source:
        who += f" (from {s.source})"
    items.append(("Proposer", who))

    if env.device == "cuda":
        extra = ", ".join(
            p for p in (env.driver and f"driver {env.driver}", env.cuda and f"CUDA {env.cuda}") if p
        )
        items.append(("Device", f"{env.gpu or 'CUDA GPU'}" + (f" ({extra})" if extra else "")))
    else:
        items.append(("Device", "CPU (Triton interpreter: no timings)"))
    items.append(
        ("Software", f"torch {env.torch}, Triton {env.triton}, Python {env.python} on {env.host}")
    )

    b = s.budget
    if s.proposer == "agent":
        # Each submission is a round of its own; the budget's rounds grow with them.
        items.append(("Submissions", f"{run.rounds_done} (each judged as a round of its own)"))
    else:
        # Rounds finished, as the live panel of `kernelgen optimize` counts them.
        items.append(
            (
                "Rounds done",
                f"{run.rounds_done} of {b.rounds} ({plural(b.candidates, 'candidate')} a round, "
                f"{plural(b.repairs, 'repair')} each)",
            )
        )
    n = d.counts
    parts = [f"{n['accepted']} accepted", f"{n['rejected']} rejected"]
    if n["pending"]:
        parts.append(f"{n['pending']} pending")
    items.append(("Candidates", f"{len(d.candidates)} ({', '.join(parts)})"))

    u = run.usage
    if u.calls:
        cost = f"${u.cost_usd:.4f}" if u.cost_usd is not None else "cost unknown (no prices set)"
        tokens = (
            f"{u.tokens:,} tokens ({u.prompt_tokens:,} prompt, {u.completion_tokens:,} "
            f"completion) in {plural(u.calls, 'call')} · {cost}"
        )
    else:
        tokens = "no LLM calls"
    items.append(("Tokens and cost", tokens))
    items.append(("Time", duration(run.elapsed_s)))
    stopped = run.stopped or ("still running" if run.state == "running" else "not recorded")
    if is_open_agent_run(d):
        stopped = "not yet: open for more submissions"
    items.append(("Stopped", stopped))

    if run.best is None:
        if not any(c.status == "accepted" for c in d.candidates):
            best = "the seed (no candidate was accepted)"
        elif env.device == "cpu":
            best = "the seed (on CPU nothing is timed, so nothing replaces it)"
        else:
            best = "the seed (no candidate beat it)"
        if run.state == "running":
            best += ", so far"
    else:
        c = next((c for c in d.candidates if c.id == run.best), None)
        best = run.best
        if c is not None:
            best += f" (round {c.round}, {c.proposer}" + (f" · {c.model}" if c.model else "") + ")"
        if d.focus_is_best and d.geomean.seed is not None:
            best += (
                f": {x(d.geomean.seed)} the seed, {x(d.geomean.eager)} eager, "
                f"{x(d.geomean.compile)} torch.compile (geomean over shapes)"
            )
    items.append(("Best", best))
    if not d.focus_is_best and d.focus is not None:
        items.append(("Shown", f"candidate {d.focus}, against its parent {d.base}"))
    if run.promoted:
        items.append(("Promoted", "yes: this run is the evidence for generated/"))
    return items


def limit(d: ReportData, seed_pct: float | None, pct_: float | None) -> str:
    """% of the limit, with the seed's before it when the row compares a candidate to the seed."""
    if d.focus is None or seed_pct is None:
        return pct(pct_)
    return f"{pct(seed_pct)} → {pct(pct_)}"


def limit_header(d: ReportData) -> str:
    return "% limit" if d.focus is None else f"% limit (seed → {d.focus})"


def history_marker(d: ReportData, c: CandidateRecord) -> str:
    if c.id == d.run.best:
        return "★ best"
    if c.became_best:
        return "↑ was best"
    return ""


@dataclass(frozen=True)
class Column:
    """One column of the per-shape table, the same in every renderer."""

    header: str
    kind: Literal["text", "us", "x"]  # text is shown as is; us and x are numbers
    get: Callable[[ShapeRow], str | float | None]
    foot: float | None = None  # the geomean under a speedup column
    strong: bool = False


def shape_columns(d: ReportData, dtype: bool = True, bound: bool = True) -> list[Column]:
    """Seed, the shown kernel, eager and compile times, speedups, % of the limit. With the seed
    shown (no candidate beat it) its column and its speedup over itself would say nothing."""
    g, who = d.geomean, d.focus
    cols = [Column("shape", "text", lambda r: r.shape)]
    if dtype:
        cols.append(Column("dtype", "text", lambda r: r.dtype))
    cols.append(Column("seed µs", "us", lambda r: r.seed_us, strong=who is None))
    if who is not None:
        cols.append(Column(f"{who} µs", "us", lambda r: r.best_us, strong=True))
    cols += [
        Column("eager µs", "us", lambda r: r.eager_us),
        Column("compile µs", "us", lambda r: r.compile_us),
        Column("× eager", "x", lambda r: r.speedup_eager, g.eager),
        Column("× compile", "x", lambda r: r.speedup_compile, g.compile),
    ]
    if who is not None:
        cols.append(Column("× seed", "x", lambda r: r.speedup_seed, g.seed))
    cols.append(Column(limit_header(d), "text", lambda r: limit(d, r.seed_limit_pct, r.limit_pct)))
    if bound:
        cols.append(Column("bound", "text", lambda r: r.bound or MISSING))
    return cols


def cell(col: Column, row: ShapeRow) -> str:
    v = col.get(row)
    if col.kind == "us":
        return us(v)  # type: ignore[arg-type]
    if col.kind == "x":
        return x(v)  # type: ignore[arg-type]
    return str(v)
