"""The records of KernelBench's own criteria and of a suite over its problems.

KbCheck is one accepted candidate checked and timed as KernelBench checks and times
(criteria.py), stored as kernelbench.json beside the candidate. SuiteRecord is a suite's state
file, evaluations/kernelbench/<name>.json: every problem of the levels it covers, with its status,
rewritten after each step so a killed suite resumes where it stopped (suite.py). The worker's
request and result (kbworker.py) are here too, so the parent reads them without the worker's
imports.

Models only: no torch, nothing of the pipeline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.records import Environment, now

# KernelBench's run_and_check.py: 5 correctness trials, 100 timed trials, CUDA events; the seed
# its eval starts from (eval_kernel_against_ref's seed_num).
TRIALS = 5
PERF_TRIALS = 100
SEED = 42
# atol = rtol, as KernelBench v0 and v0.1 compare fp32 outputs (the figures published with it).
# Its current eval takes 1e-4 for fp32 (get_tolerance_for_precision); trials keep the largest
# difference, so a stricter figure can be read from the record.
TOLERANCE = 1e-2


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KbTrial(_Record):
    seed: int = Field(description="the trial's seed: torch.manual_seed before get_inputs()")
    passed: bool
    max_abs_diff: float | None = None
    mean_abs_diff: float | None = None
    error: str | None = Field(None, description="the call raised, or the shapes differ")


class KbTimes(_Record):
    """One implementation's times over KernelBench's timed trials, in ms (cuda events)."""

    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    trials: int


class KbTiming(_Record):
    method: Literal["cuda_event"] = "cuda_event"
    warmup: int = Field(description="untimed calls of the candidate first (the peers take 5)")
    trials: int
    discard_first: int = Field(1, description="timed trials dropped before the figures")
    order: Literal["each_alone", "rounds"] = Field(
        "each_alone",
        description="each_alone: the candidate's trials, then eager's, then torch.compile's "
        "(records before 2026-12-07); rounds: one trial of each in turn, round after round",
    )
    l2_flush: str = Field(
        "a 256 MiB int64 fill before each trial", description="cold cache, as KernelBench times"
    )
    candidate: KbTimes | None = None
    eager: KbTimes | None = None
    compile: KbTimes | None = Field(
        None, description="torch.compile(Model) with the inductor backend, mode default"
    )
    speedup_vs_eager: float | None = Field(None, description="eager mean / candidate mean")
    speedup_vs_compile: float | None = None
    excessive: bool = Field(
        False, description="over KernelBench's 10x flag on the speedup over eager"
    )
    errors: dict[str, str] = Field(default_factory=dict, description="who -> why no time")


class KbCheck(_Record):
    """One candidate judged by KernelBench's criteria, beside kernelgen's verdict on it."""

    op: str
    run: str
    candidate: str
    sha256: str = Field(description="of the candidate's source")
    file: str = Field(description="the problem file (SPEC.origin)")
    level: int
    problem: int
    device: Literal["cpu", "cuda"]
    dtype: str = Field(description="the problem's float dtype: inputs and the Model cast to it")
    seed: int = SEED
    tolerance: float = TOLERANCE
    correct: bool | None = Field(
        None, description="every trial within atol = rtol = tolerance; None: not run"
    )
    trials: list[KbTrial] = Field(default_factory=list)
    correctness_not_run: str | None = Field(None, description="why there are no trials")
    timing: KbTiming | None = None
    timing_not_run: str | None = Field(None, description="why there is no timing")
    error: str | None = Field(None, description="the worker died: its category and reason")
    environment: Environment | None = None
    created: str = Field(default_factory=now)

    @property
    def speedup_vs_eager(self) -> float | None:
        return self.timing.speedup_vs_eager if self.timing else None

    @property
    def speedup_vs_compile(self) -> float | None:
        return self.timing.speedup_vs_compile if self.timing else None


# ---- the worker's messages ----------------------------------------------------------------------


class KbRequest(_Record):
    op: str
    root: str = Field(description="project root; the worker runs from there")
    candidate: str = Field(description="path of the candidate's source")
    device: Literal["cpu", "cuda"]
    seed: int = SEED
    trials: int = TRIALS
    tolerance: float = TOLERANCE
    perf_trials: int = PERF_TRIALS


class KbTrials(_Record):
    dtype: str
    trials: list[KbTrial]
    environment: Environment
    load_error: str | None = Field(None, description="the candidate did not load")


class KbTimed(_Record):
    timing: KbTiming
    environment: Environment


# ---- the suite ----------------------------------------------------------------------------------

Status = Literal["pending", "running", "accepted", "rejected", "not attempted"]


class SuiteSettings(_Record):
    levels: list[int]
    proposer: str | None = Field(None, description="None: llm where configured, else tune")
    device: Literal["cpu", "cuda"]
    budget_s: float | None = Field(None, description="per problem: the run's time limit")
    rounds: int
    candidates: int
    repairs: int
    model: str | None = None
    base_url: str | None = None
    source: str | None = Field(None, description="files: the folder of <op>/ candidate folders")
    checkout: str | None = Field(None, description="--from: the KernelBench checkout imported")
    skip_conv: bool = False
    jobs: int = Field(
        1, description="problems attempted at once (--jobs); above 1, timings hold the GPU lock"
    )
    heavy: int = Field(
        1,
        description="of them, problems past a job's share of GPU memory at once (--heavy; "
        "kernelgen/kernelbench/jobs.py)",
    )
    tune: bool = Field(
        True, description="accepted candidates tuned in each run (--no-tune: kept as written)"
    )
    first_accepted: bool = Field(
        False, description="each run stopped at its first accepted candidate (--first-accepted)"
    )
    bench: bool = Field(
        True,
        description="accepted candidates timed in their runs (--no-bench: by KernelBench's "
        "timing only)",
    )
    promote: bool = Field(
        False,
        description="accepted problems promoted into generated/ (--promote); by default a "
        "problem's best stays in its run: the suite measures the pipeline, it does not ship",
    )


class SuiteProblem(_Record):
    level: int
    problem: int
    title: str
    op: str
    file: str | None = Field(None, description="the problem file, where a checkout named it")
    selected: bool = Field(False, description="a suite invocation chose it")
    status: Status = "pending"
    category: str | None = Field(None, description="rejected: the last judged candidate's")
    reason: str | None = None
    proposer: str | None = Field(None, description="the proposer of its attempt")
    run: str | None = None
    candidate: str | None = Field(None, description="accepted: the candidate checked by KB")
    replaces: str | None = Field(
        None,
        description="--redo or --rejudge of an accepted problem: its earlier run (after a "
        "--redo it stands where the new attempt accepts nothing)",
    )
    earlier: SuiteProblem | None = Field(
        None,
        description="--redo of an accepted problem, while the new attempt is under way: the "
        "entry as it stood, restored whole (its timings and waits too) where the new attempt "
        "accepts nothing",
    )
    device: str | None = None
    started: str | None = Field(None, description="when its attempt began (finds its run)")
    finished: str | None = None
    kb_correct: bool | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    kb_note: str | None = Field(None, description="why KernelBench's figures are missing")
    lock_wait_s: float | None = Field(
        None,
        description="seconds its processes waited for the GPU lock (a suite of several jobs, "
        "kernelgen/gpulock.py): waiting, not work; None where no lock was held",
    )

    @property
    def key(self) -> tuple[int, int]:
        return (self.level, self.problem)


class SuiteRecord(_Record):
    name: str
    settings: SuiteSettings
    problems: list[SuiteProblem] = Field(default_factory=list)
    created: str = Field(default_factory=now)
    updated: str = Field(default_factory=now)
