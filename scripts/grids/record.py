"""What scripts/peer_grids.py writes: one CaseRecord a JSON line per call as it comes, and a
GridsSummary of a run's lines, the record kept under evaluations/grids/."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.records import Environment

Status = Literal["passed", "failed", "refused", "error", "skipped"]
Mode = Literal["direct", "routed"]
Dispatch = Literal["measured", "kernel"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaseRecord(_Model):
    """One call of kernelgen_ops on one case of a peer's grid, and its verdicts."""

    kind: Literal["case"] = "case"
    grid: str
    peer: str
    op: str
    source: str = Field(description="the peer's test: repository, file::function @ commit")
    case: str = Field(description="GridCase.key(): shape, params, dtype, values")
    shape: list[int] | None
    dtype: str
    layout: str = Field(description="how the call's arguments are laid out")
    mode: Mode | None = Field(
        description="direct: kernelgen_ops.<op>(...); routed: the peer's torch call under "
        "kernelgen_ops.use(); None for a case skipped before any call"
    )
    dispatch: Dispatch | None = Field(
        description="measured: the library's default; kernel: set_dispatch('kernel')"
    )
    path: Literal["kernel", "torch"] | None = Field(
        None, description="which took the call: the generated kernel or torch's op"
    )
    status: Status = Field(
        description="passed both checks; failed one (peer_error, kernelgen_error say which); "
        "refused by the library's contract (its ValueError or TypeError); error: anything else "
        "raised; skipped before any call (over the run's element limit)"
    )
    peer_error: str | None = Field(None, description="where the peer's tolerance is not met")
    kernelgen_error: str | None = Field(None, description="where kernelgen's rule is not met")
    message: str | None = Field(None, description="the refusal, error or skip, one line")
    seconds: float | None = None


class GridCount(_Model):
    """One grid's calls, by mode, dispatch and status."""

    grid: str
    peer: str
    op: str
    source: str
    cases: int = Field(description="the grid's cases in this run (each one or more layouts)")
    calls: dict[str, dict[str, int]] = Field(
        description="'<mode>/<dispatch>' -> status -> calls; 'skipped' for skipped cases"
    )


class GridsSummary(_Model):
    created: str
    command: str
    environment: Environment | None = None
    library: str | None = Field(None, description="kernelgen_ops' MANIFEST.json sha256")
    totals: dict[str, int] = Field(description="calls by status")
    grids: list[GridCount]
    not_passed: list[CaseRecord] = Field(
        description="every call that did not pass, in full: failures, refusals, errors, skips"
    )


def summarize(records: list[CaseRecord]) -> tuple[dict[str, int], list[GridCount]]:
    """Totals by status and per grid counts, in the order the grids first appear."""
    totals = Counter(r.status for r in records)
    grids: dict[str, GridCount] = {}
    cases: dict[str, set[str]] = {}
    for r in records:
        g = grids.setdefault(
            r.grid,
            GridCount(grid=r.grid, peer=r.peer, op=r.op, source=r.source, cases=0, calls={}),
        )
        cases.setdefault(r.grid, set()).add(r.case)
        key = f"{r.mode}/{r.dispatch}" if r.mode else "skipped"
        by = g.calls.setdefault(key, {})
        by[r.status] = by.get(r.status, 0) + 1
    for name, g in grids.items():
        g.cases = len(cases[name])
    return dict(sorted(totals.items())), list(grids.values())
