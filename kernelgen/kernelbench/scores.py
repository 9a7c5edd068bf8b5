"""A suite's record as KernelBench scores it: one row per problem, and fast_p.

fast_p (KernelBench's score.py) is the fraction of problems that are correct and faster than p
times the baseline, over every problem of the levels in the record, attempted or not. Here a
problem is correct when kernelgen accepted its candidate and KernelBench's own check passed it
too (criteria.py), and its speedup is the one timed as KernelBench times, at its sizes. fast_0 is
the fraction correct: any time is more than 0, one not measured (on the CPU) too. The geomeans
are over the accepted problems that were timed.

The state files of several suites (problems split among machines or agents) merge: per problem,
the furthest any got.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from kernelgen import paths, store
from kernelgen.errors import KernelgenError, StoreError, UsageError, first_error
from kernelgen.kernelbench.results import SuiteProblem, SuiteRecord

THRESHOLDS = (0.0, 1.0, 1.5)
FOLDER = "kernelbench"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Row(_Model):
    """One problem as `kernelgen report kernelbench --json` lists it."""

    level: int
    problem: int
    op: str
    status: str = Field(description="accepted, rejected, or not attempted")
    category: str | None = Field(None, description="rejected: the category")
    reason: str | None = Field(None, description="rejected or not attempted: why")
    kb_correct: bool | None
    speedup_vs_eager: float | None
    speedup_vs_compile: float | None
    device: str | None = Field(description="the GPU its figures came from, else cpu or cuda")
    run: str | None
    candidate: str | None = None
    title: str


class Against(_Model):
    """fast_p and the geomean against one baseline (torch eager, or torch.compile)."""

    fast_0: float
    fast_1: float
    fast_1_5: float = Field(alias="fast_1.5")
    geomean: float | None = Field(description="over the accepted problems that were timed")
    timed: int = Field(description="accepted problems with a time against this baseline")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Summary(_Model):
    problems: int
    accepted: int
    kb_correct: int
    rejected: int
    not_attempted: int
    eager: Against
    compile: Against
    levels: dict[str, Summary] = Field(default_factory=dict)
    gpus: dict[str, Summary] = Field(
        default_factory=dict,
        description="where figures came from more than one GPU (a record rejudged part-way): "
        "the same over the problems whose figures each GPU gave",
    )


def state_dir() -> Path:
    return paths.evaluations_dir() / FOLDER


def state_path(name: str) -> Path:
    return state_dir() / f"{name}.json"


def load_state(path: Path) -> SuiteRecord:
    try:
        return SuiteRecord.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise StoreError(f"{path}: missing") from None
    except ValueError as e:
        raise StoreError(f"{path}: not a suite record: {first_error(e)}") from None


def shown_status(p: SuiteProblem) -> tuple[str, str | None]:
    """The status a report shows, and its reason: a problem the suite has not finished is not
    attempted, and says why."""
    if p.status == "pending":
        why = "not reached yet: the suite has not come to it" if p.selected else "not selected"
        return "not attempted", p.reason or why
    if p.status == "running":
        return "not attempted", "in progress when the suite stopped: run the suite again"
    return p.status, p.reason


def row(p: SuiteProblem) -> Row:
    status, reason = shown_status(p)
    return Row(
        level=p.level,
        problem=p.problem,
        op=p.op,
        status=status,
        category=p.category if status == "rejected" else None,
        reason=reason,
        kb_correct=p.kb_correct,
        speedup_vs_eager=p.speedup_vs_eager,
        speedup_vs_compile=p.speedup_vs_compile,
        device=gpu_of(p) or p.device,
        run=p.run,
        candidate=p.candidate,
        title=p.title,
    )


def gpu_of(p: SuiteProblem) -> str | None:
    """The GPU the problem's run recorded: whether a figure is an H200's or an H100's."""
    if p.run is None:  # a CPU run records none
        return None
    try:
        return store.load_run(p.op, p.run).environment.gpu
    except KernelgenError:
        return None


def correct(r: Row) -> bool:
    return r.status == "accepted" and r.kb_correct is True


def geomean(values: list[float]) -> float | None:
    good = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in good) / len(good)) if good else None


def fast_p(rows: list[Row], p: float, against: str) -> float:
    """The fraction of `rows` correct and more than p times faster than the baseline."""
    if not rows:
        return 0.0
    hits = 0
    for r in rows:
        if not correct(r):
            continue
        speedup = getattr(r, f"speedup_vs_{against}")
        if p == 0.0 or (speedup is not None and speedup > p):
            hits += 1
    return hits / len(rows)


def _against(rows: list[Row], against: str) -> Against:
    timed = [
        s
        for r in rows
        if r.status == "accepted" and (s := getattr(r, f"speedup_vs_{against}")) is not None
    ]
    fast = {f"fast_{p:g}": fast_p(rows, p, against) for p in THRESHOLDS}
    return Against(**fast, geomean=geomean(timed), timed=len(timed))


def summarize(rows: list[Row], by_level: bool = True) -> Summary:
    levels = sorted({r.level for r in rows})
    # A GPU's name, not "cuda" (a run not yet settled) or "cpu".
    gpus = sorted({r.device for r in rows if r.device and r.device not in ("cuda", "cpu")})
    return Summary(
        problems=len(rows),
        accepted=sum(r.status == "accepted" for r in rows),
        kb_correct=sum(correct(r) for r in rows),
        rejected=sum(r.status == "rejected" for r in rows),
        not_attempted=sum(r.status == "not attempted" for r in rows),
        eager=_against(rows, "eager"),
        compile=_against(rows, "compile"),
        levels={
            str(lv): summarize([r for r in rows if r.level == lv], by_level=False)
            for lv in (levels if by_level and len(levels) > 1 else [])
        },
        gpus={
            gpu: summarize([r for r in rows if r.device == gpu], by_level=False)
            for gpu in (gpus if by_level and len(gpus) > 1 else [])
        },
    )


def _rank(p: SuiteProblem) -> tuple[int, float]:
    order = {"accepted": 4, "rejected": 3, "not attempted": 2, "running": 1, "pending": 0}
    speed = p.speedup_vs_eager or 0.0
    return (order[p.status] + (p.kb_correct is True), speed)


def merged(records: list[SuiteRecord]) -> list[SuiteProblem]:
    """Every problem of the records, each at the furthest any record got with it."""
    best: dict[tuple[int, int], SuiteProblem] = {}
    for rec in records:
        for p in rec.problems:
            if p.key not in best or _rank(p) > _rank(best[p.key]):
                best[p.key] = p
    return [best[k] for k in sorted(best)]


def gather(name: str | None = None, levels: list[int] | None = None) -> list[Row]:
    """The rows of the suite `name` (default: every suite under evaluations/kernelbench/)."""
    if name is not None:
        files = [state_path(name)]
        if not files[0].is_file():
            raise UsageError(f"no suite {name!r}: {files[0]} does not exist")
    else:
        files = sorted(state_dir().glob("*.json")) if state_dir().is_dir() else []
        if not files:
            raise UsageError(
                f"no suite under {state_dir()}: run `kernelgen suite kernelbench` first"
            )
    problems = merged([load_state(f) for f in files])
    if levels:
        problems = [p for p in problems if p.level in levels]
    return [row(p) for p in problems]


def report_json(rows: list[Row]) -> dict:
    """The last line of `kernelgen report kernelbench --json`."""
    return {
        "problems": [r.model_dump(mode="json") for r in rows],
        "summary": summarize(rows).model_dump(mode="json", by_alias=True),
    }
