"""Number formats and the summary lines every renderer shares, so the terminal, the Markdown and the
HTML page say the same thing in the same words."""

from __future__ import annotations

from kernelgen.records import CandidateRecord
from kernelgen.report.model import ReportData, geomean

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


def duration(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {sec:02d}s"
    return f"{sec}s"


def cand_speedup_seed(c: CandidateRecord) -> float | None:
    """A candidate's geomean speedup over the seed, from its own benchmark."""
    if c.bench is None:
        return None
    if c.bench.geomean_seed is not None:
        return c.bench.geomean_seed
    return geomean(
        [
            t.speedup_seed or (t.seed.median_us / t.candidate.median_us if t.seed else None)
            for t in c.bench.shapes
        ]
    )


def summary(d: ReportData) -> list[tuple[str, str]]:
    run, env, s = d.run, d.run.environment, d.run.settings
    items: list[tuple[str, str]] = [("Operator", d.op), ("Run", f"{run.id} ({run.state})")]

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
    items.append(
        (
            "Rounds",
            f"{run.rounds_done} of {b.rounds} ({b.candidates} candidates a round, "
            f"{b.repairs} repairs each)",
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
            f"completion) in {u.calls} calls · {cost}"
        )
    else:
        tokens = "no LLM calls"
    items.append(("Tokens and cost", tokens))
    items.append(("Time", duration(run.elapsed_s)))
    stopped = run.stopped or ("still running" if run.state == "running" else "not recorded")
    items.append(("Stopped", stopped))

    if run.best is None:
        best = "the seed (no candidate beat it)"
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


def history_marker(d: ReportData, c: CandidateRecord) -> str:
    if c.id == d.run.best:
        return "★ best"
    if c.became_best:
        return "↑ was best"
    return ""
