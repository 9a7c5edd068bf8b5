"""When a run stops before its rounds are done, each rule with why in one line (the run's
`stopped`), or None to go on: a budget spent (time, tokens, cost), the target reached by the
best, a candidate accepted under --first-accepted."""

from __future__ import annotations

from kernelgen.records import BenchRecord, Budget, CandidateRecord, Usage


def out_of_budget(b: Budget, usage: Usage, elapsed_s: float) -> str | None:
    if b.time_limit_s is not None and elapsed_s >= b.time_limit_s:
        return f"time limit of {b.time_limit_s:.0f} s reached"
    if b.max_tokens_total is not None and usage.tokens >= b.max_tokens_total:
        return f"token budget of {b.max_tokens_total} reached ({usage.tokens} used)"
    if (
        b.max_cost_usd is not None
        and usage.cost_usd is not None
        and usage.cost_usd >= b.max_cost_usd
    ):
        return f"cost budget of ${b.max_cost_usd:.2f} reached (${usage.cost_usd:.4f} spent)"
    return None


def target_reached(b: Budget, best: BenchRecord | None) -> str | None:
    """Every shape of the best's bench (launch-bound ones aside) at the target's % of its limit."""
    if b.target_pct is None or best is None or not best.shapes:
        return None
    bound = [s.limit_pct for s in best.shapes if s.bound != "launch"]
    if bound and min(bound) >= b.target_pct:
        return f"target reached: every shape at >= {b.target_pct:.0f}% of its limit"
    return None


def first_accepted(b: Budget, records: list[CandidateRecord]) -> str | None:
    if b.first_accepted and any(r.status == "accepted" for r in records):
        return "a candidate was accepted (--first-accepted)"
    return None
