"""What the agent's session answers: the records `kernelgen agent ... --json` prints and the MCP
tools return."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.propose.base import Context
from kernelgen.records import CaseResult, Outcome
from kernelgen.run.optimize import CandidateSummary


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentContext(_Model):
    """What the agent reads before writing the next candidate."""

    run_id: str
    next_candidate: str = Field(description="the id the next submission will get")
    parent: str = Field(description="what the next submission is judged against: best or 'seed'")
    context: Context = Field(description="what the llm proposer's prompt is made from")
    prompt: str = Field(description="the llm proposer's prompt: system message, then user message")


class ShapeResult(_Model):
    shape: str
    dtype: str
    us: float
    best_us: float | None = Field(
        None, description="the run's best before this submission, as stored when it was timed"
    )
    vs_best: float | None = Field(None, description="best_us / us (the verdict used interleaved)")
    vs_eager: float | None = None
    vs_compile: float | None = None
    vs_seed: float | None = None
    gbps: float
    limit_pct: float
    bound: str


class CandidateOutcome(_Model):
    id: str
    parent: str | None
    status: str
    outcome: Outcome | None = None
    category: str | None = None
    reason: str | None = None
    failing_case: CaseResult | None = Field(None, description="the first case that failed")
    cases_run: int = 0
    cases_not_run: list[str] = Field(default_factory=list)
    became_best: bool = False
    speedup: float | None = Field(None, description="geomean over shapes vs the best, interleaved")
    shapes: list[ShapeResult] = Field(default_factory=list)


class SubmitResult(_Model):
    run_id: str
    op: str
    device: str
    candidate: CandidateOutcome
    tuned: CandidateOutcome | None = Field(
        None, description="CUDA: the child with the declared meta-parameters tuned, if any"
    )
    best: str | None = Field(description="the run's best after this submission; None = the seed")
    timed: bool = Field(description="False on CPU: the interpreter verifies, it does not time")

    @property
    def accepted(self) -> bool:
        return self.candidate.status == "accepted"


class RunStatus(_Model):
    run_id: str
    op: str
    device: str
    proposer: str
    model: str | None
    state: str
    best: str | None
    rounds_done: int
    pending: int
    promoted: bool
    run_dir: str
    candidates: list[CandidateSummary]


class PromoteResult(_Model):
    run_id: str
    op: str
    candidate: str | None
    promoted: bool
    path: str | None = Field(None, description="the library folder it went into")
    why: str | None = Field(None, description="why not, when not promoted")


class ReportPaths(_Model):
    run_id: str
    op: str
    md: str
    html: str


class OperatorInfo(_Model):
    name: str
    summary: str = Field(description="the first line of the reference's docstring")
    seed: str | None = Field(description="seeds/<op>.py, when there is one")
    generated: str | None = Field(
        None, description="what kernelgen_ops ships for it: proposer, run and candidate, or None"
    )
    cases: int = Field(description="correctness cases on CUDA")
    cpu_cases: int = Field(description="of which Triton's CPU interpreter runs")
    bench_shapes: list[str]
    runs: list[str] = Field(default_factory=list, description="its runs under evaluations/")


class Operators(_Model):
    operators: list[OperatorInfo]
