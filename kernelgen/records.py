"""Every record kernelgen stores or exchanges, as pydantic models: no sentinels, no dict
catch-alls.

Verdicts come from verify/, timings from bench/, runs and candidates from the loop; the store
writes them as JSON, the report and the library read them back.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Category = Literal[
    "contract",  # no entry function, wrong signature, not a module
    "static",  # an AST rule: torch arithmetic in the launcher, forbidden import, try/except...
    "syntax",  # does not parse
    "compile",  # Triton failed to compile a kernel (or ran out of resources)
    "crash",  # the process died: segfault, abort, os._exit, illegal memory access
    "timeout",  # ran past the hard time limit
    "oom",  # ran past the memory cap
    "incorrect",  # wrong values, NaN where there should be none, wrong dtype/shape/device
    "precision",  # within tolerance but far less accurate than torch in the same dtype
    "stale",  # depends on memory it never wrote, or disagrees with itself
    "mutation",  # changed an input
    "aliasing",  # output shares memory with an input or with an earlier output (caching)
    "provenance",  # no kernel of its own launched, or torch did the compute
    "physical",  # faster than the device's measured limits allow
    "memcheck",  # compute-sanitizer memcheck: an out-of-bounds or misaligned access
    "race",  # compute-sanitizer racecheck: a shared-memory data race
    "no_code",  # the proposer's reply had no code block
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Environment(_Record):
    """Where a figure was measured."""

    device: Literal["cpu", "cuda"]
    gpu: str | None = None
    driver: str | None = None
    cuda: str | None = None
    torch: str
    triton: str
    python: str
    host: str
    interpreter: bool = Field(description="Triton ran through TRITON_INTERPRET (CPU)")


class CaseResult(_Record):
    name: str
    status: Literal["passed", "failed", "not_run"]
    max_abs_err: float | None = None
    rel_err: float | None = Field(None, description="mean |out-ref| / mean |ref|")
    torch_rel_err: float | None = Field(None, description="the same for torch in the case dtype")
    seconds: float | None = Field(None, description="the candidate's slowest call on this case")
    note: str | None = None


Outcome = Literal["accepted", "accepted-partial", "rejected"]


class CallCosts(_Record):
    """Where the checked calls' time went (cases and checks phases), summed over the calls, in
    seconds: the runner's parts as it reports them, the judge's as it measures them."""

    calls: int = 0
    runner_load: float = 0.0
    runner_flood: float = 0.0
    runner_call: float = 0.0
    runner_save: float = 0.0
    runner_digest: float = 0.0
    judge_wait: float = Field(0.0, description="waiting for answers (the runner's parts, and IPC)")
    judge_read: float = Field(0.0, description="loading the outputs onto the judge's device")
    judge_check: float = Field(0.0, description="values, structure, mutation, aliasing checks")

    def add(self, field: str, seconds: float) -> None:
        setattr(self, field, round(getattr(self, field) + seconds, 4))


class Phases(_Record):
    """Where a verification's wall time went, in seconds. Compile runs beside truth (each case
    is compiled for as soon as its truth is drawn) and beside the cases (each waits for its own
    compile), so the phases can add up to more than the verification's seconds."""

    truth: float = Field(
        0.0, description="inputs, float64 reference, torch's own result; overlaps compile"
    )
    compile: float = Field(
        0.0,
        description="compile ahead, in parallel runners, until the last compile (the bench "
        "shapes' included); overlaps truth and cases",
    )
    start: float = Field(0.0, description="waiting for a warm runner")
    cases: float = Field(0.0, description="the case grid, four checked calls per case")
    checks: float = Field(0.0, description="configs, many calls, profiler, sanitizer")
    compiles: int = Field(
        0,
        description="specializations compiled ahead: those this source was not compiled for "
        "before in this Triton cache (Triton may still find some cached)",
    )
    compiled_by_runner: int = Field(
        0,
        description="new specializations left to the judging runner's first call of each: "
        "a lone one compiles faster than a compile runner starts",
    )
    slowest_compile: str | None = Field(
        None, description="the longest single compile's case or bench shape"
    )
    slowest_compile_s: float = Field(
        0.0,
        description="its seconds, which bound the compile phase: a floor under a cold verdict "
        "that is the candidate's own "
        "(one ptxas process, which no number of compile runners splits)",
    )
    gpu_compile: float = Field(
        0.0,
        description="CPU: compiling the candidate for the GPU target (sm_90) after its cases, "
        "which the interpreter cannot stand in for; part of checks",
    )
    calls: CallCosts | None = Field(None, description="the checked calls' time, by part")


class Verdict(_Record):
    op: str
    candidate: str = Field(description="path of the judged file")
    sha256: str
    accepted: bool
    outcome: Outcome | None = Field(
        None,
        description="accepted-partial: accepted on the cases that ran, with some not run "
        "(bf16 and GPU-only cases on CPU); only a CUDA verdict with every case run may promote",
    )
    category: Category | None = None
    reason: str | None = None
    device: Literal["cpu", "cuda"]
    seed: int
    cases: list[CaseResult] = Field(default_factory=list)
    kernels: list[str] = Field(default_factory=list, description="Triton kernels it launched")
    seconds: float
    phases: Phases | None = None
    sanitized: list[str] = Field(
        default_factory=list, description="compute-sanitizer tools that ran clean"
    )
    duplicate_of: str | None = Field(
        None, description="an earlier candidate of the run with the same source: judged once"
    )
    environment: Environment | None = None

    @property
    def complete(self) -> bool:
        """Accepted with every case of the grid run."""
        return self.accepted and not self.cases_not_run

    @property
    def cases_run(self) -> int:
        return sum(c.status != "not_run" for c in self.cases)

    @property
    def cases_not_run(self) -> list[str]:
        return [c.name for c in self.cases if c.status == "not_run"]


class Ceilings(_Record):
    """The device's measured limits, cached once per device."""

    gpu: str
    copy_gbps: float = Field(description="device-to-device copy, bytes read + written per second")
    bf16_tflops: float = Field(description="large bf16 matmul")
    launch_us: float = Field(description="an empty Triton kernel, launch to completion")
    measured: str
    torch: str
    triton: str


class PeerTime(_Record):
    """One implementation's time on one shape."""

    median_us: float = Field(description="the headline: per-call time by `method`, over rounds")
    method: Literal["do_bench", "graph"] = Field(
        "do_bench",
        description="what produced median_us: do_bench (one call per timing, L2 flushed) or "
        "CUDA-graph replays of many calls (kernels under ~50 us, where launch gaps dominate)",
    )
    graph_us: float | None = Field(None, description="per call inside a CUDA graph replay")
    host_us: float | None = Field(
        None, description="wall time per call of back-to-back calls from Python, synced once"
    )
    spread: float = Field(
        description="round-to-round noise of median_us: (max - min) / median of the per-round "
        "figures once the floor(n/4) lowest and highest rounds are dropped (a trimmed range)"
    )
    rounds: int | None = Field(None, description="interleaved rounds behind median and spread")
    cached: bool = Field(False, description="a peer time from evaluations/peers/, not this run")
    measured: str | None = Field(None, description="when a cached figure was measured")


class ShapeTiming(_Record):
    shape: str
    dtype: str
    bytes: int
    flops: int
    candidate: PeerTime
    eager: PeerTime | None = None
    compile: PeerTime | None = None
    seed: PeerTime | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    speedup_seed: float | None = None
    gbps: float
    tflops: float
    limit_pct: float = Field(description="% of the binding ceiling (bandwidth or bf16 rate)")
    floor_us: float = Field(description="the cost model at the measured ceilings")
    bound: Literal["memory", "compute", "launch"]
    suspect: str | None = Field(
        None, description="why the time is physically implausible (below the floor): re-check it"
    )


class ShapeFailure(_Record):
    """An implementation that raised on one benchmark shape, so it has no time there."""

    shape: str
    who: Literal["candidate", "eager", "compile", "seed"]
    error: str


class BenchRecord(_Record):
    op: str
    candidate: str
    sha256: str
    label: str = Field(description="seed, generated, or the candidate's name")
    shapes: list[ShapeTiming]
    ceilings: Ceilings
    environment: Environment
    created: str = Field(default_factory=now)
    geomean_eager: float | None = None
    geomean_compile: float | None = None
    geomean_seed: float | None = None
    failed: list[ShapeFailure] = Field(
        default_factory=list, description="shapes without a time, and why"
    )
    compile: list[CompileFacts] = Field(
        default_factory=list, description="per compiled kernel: registers, spills, shared memory"
    )
    peers: Literal["eager", "reference"] | None = Field(
        None,
        description="what the eager and torch.compile peers ran: the reference module's `eager` "
        "(the op as torch users call it) or the reference itself; None: no peers, or a record "
        "older than this field (those ran the reference)",
    )
    launch: Literal["as written", "kernelgen_ops"] | None = Field(
        None,
        description="how the contenders were launched: as their sources launch them, or as "
        "kernelgen_ops ships a kernel (lean launches and launch plans: the library's host time); "
        "None: a record older than this field (as written)",
    )


class PromoteBench(_Record):
    """A promotion's bench against the library's kernel: what decided it, kept with the run."""

    wins: bool
    why: str = Field(description="the acceptance rule's words")
    candidate: BenchRecord
    library: BenchRecord
    created: str = Field(default_factory=now)


class CompileFacts(_Record):
    """What Triton's compiled kernel says about itself (CUDA only)."""

    kernel: str
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


class Usage(_Record):
    """Tokens and money spent on LLM calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = Field(None, description="None when no prices are configured")

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=cost,
        )


class Message(_Record):
    role: Literal["system", "user", "assistant"]
    content: str


class Transcript(_Record):
    """One proposer exchange: the prompt sent and the reply received."""

    messages: list[Message] = Field(default_factory=list)
    reply: str | None = None
    model: str | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = Field(None, description="why the call produced no reply")


class CandidateRecord(_Record):
    id: str = Field(description="r<round>-c<index>, with -fix<n> for repair turns")
    round: int
    parent: str | None = Field(description="candidate id, 'seed', or None")
    proposer: str
    model: str | None = None
    status: Literal["pending", "accepted", "rejected"]
    category: Category | None = None
    reason: str | None = None
    verdict: Verdict | None = None
    bench: BenchRecord | None = None
    speedup: float | None = Field(None, description="geomean time of the best / this, per shape")
    became_best: bool = False
    compile: list[CompileFacts] = Field(default_factory=list)
    sha256: str | None = None
    created: str = Field(default_factory=now)
    # Judging over a pool of workers (--gpus, --ray); None where one judge did it all.
    worker: str | None = Field(None, description="the evaluation worker that judged it")
    retimed_on: str | None = Field(
        None,
        description="the worker that re-timed it against the best (one GPU, interleaved) "
        "before it could become the best; `bench` is that re-timing",
    )
    best_seq: int | None = Field(
        None,
        description="pool runs: the order in which candidates became the best (chains finish "
        "out of order); the highest is the run's best",
    )


class Budget(_Record):
    rounds: int = 4
    candidates: int = 2
    repairs: int = 2
    max_tokens_total: int | None = None
    max_cost_usd: float | None = None
    time_limit_s: float | None = None
    target_pct: float | None = Field(None, description="stop at this % of the device limit")
    stagnation: int = Field(2, description="stop after this many rounds without a gain")
    tune_accepted: bool = Field(
        True,
        description="on CUDA, each accepted candidate's TUNE_SPACE searched as its child "
        "(--no-tune: kept as written)",
    )
    bench_accepted: bool = Field(
        True,
        description="on CUDA, each accepted candidate timed against the best (--no-bench: "
        "untimed, the first accepted of an operator without a seed its best; a suite that "
        "times it as KernelBench does)",
    )
    first_accepted: bool = Field(
        False,
        description="stop once a candidate is accepted, the proposer's candidates judged in "
        "its order (--first-accepted: its first correct one kept, the rest never judged)",
    )


class RunSettings(_Record):
    op: str
    proposer: Literal["llm", "tune", "replay", "files", "agent"]
    model: str | None = None
    base_url: str | None = None
    device: Literal["cpu", "cuda"]
    source: str | None = Field(None, description="--from: the run or folder replayed")
    budget: Budget
    seed: int


class RunRecord(_Record):
    id: str
    op: str
    settings: RunSettings
    environment: Environment
    state: Literal["running", "finished", "failed"]
    stopped: str | None = Field(None, description="why the run stopped")
    created: str = Field(default_factory=now)
    updated: str = Field(default_factory=now)
    rounds_done: int = 0
    elapsed_s: float = 0.0
    best: str | None = Field(None, description="id of the best candidate, None = the seed")
    seed_bench: BenchRecord | None = None
    seed_verdict: Verdict | None = Field(
        None, description="the seed judged by this run's judge: its case times set the deadlines"
    )
    usage: Usage = Field(default_factory=Usage)
    promoted: bool = False
