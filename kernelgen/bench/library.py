"""The library benchmark's record: scripts/bench_library.py writes it, the status page reads it.

One record is one run of the script on one GPU: per operator and shape, the device and host time of
kernelgen_ops.<op> and of its peers (torch eager, torch.compile, Liger-Kernel, FlagGems), and the
ratios that summarize them. Ratios are kernelgen's time over the baseline's: below 1 is faster.
Records are kept as evaluations/library/bench-<UTC time>.json; `newest_record` finds the one the
status page shows.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelgen import paths
from kernelgen.errors import first_error

# The baselines "best_peer" is the fastest of, per shape: torch, the kernel libraries, and the
# serving libraries' kernels (scripts/peers; issue [P]).
PEERS = (
    "eager",
    "compile",
    "liger",
    "flaggems",
    "quack",
    "flashinfer",
    "sglang",
    "vllm",
    "scaled_mm",
    "flashmla",
)
# The peers each operator is timed against beyond torch eager and torch.compile: the kernel
# libraries (scripts/bench_library_worker.py) and the serving libraries' kernels (scripts/peers'
# FAMILIES; tests/test_peers_bench.py keeps the two in step). The status page names each one's
# figure for the operator, or why the record has none (kernelgen.report.library).
OP_PEERS: dict[str, tuple[str, ...]] = {
    "softmax": ("quack", "liger", "flaggems"),
    "rms_norm": ("quack", "liger", "flaggems"),
    "silu_and_mul": ("liger", "flaggems"),
    "decode_attn": ("flashinfer", "sglang"),
    "fused_moe": ("sglang", "vllm"),
    "fp8_gemm": ("scaled_mm",),
    "sparse_attn": ("flashmla",),
}
# Issue [H]'s target at decode shapes: host time per call at most eager's + this many us.
TARGET_US = 2.0
FOLDER = "library"  # under evaluations/


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Availability(_Model):
    impl: str
    available: bool
    version: str | None = None
    reason: str | None = Field(None, description="why not, or what ran (an API, a mode)")


class Measurement(_Model):
    """One implementation on one shape."""

    op: str
    shape: str
    dims: dict[str, int]
    dtype: str
    decode: bool = Field(description="a decode shape: 64 rows or fewer, added or the spec's own")
    impl: str = Field(
        description="kernelgen_ops, kernelgen_ops[kernel], eager, compile, routed, or one of PEERS"
    )
    device_us: float | None = Field(None, description="per call, CUDA-graph replay")
    host_us: float | None = Field(None, description="wall per call, back-to-back calls")
    device_spread: float | None = Field(
        None, description="the graph replays' trimmed range over their median (timing.summarize)"
    )
    host_spread: float | None = Field(
        None, description="the host rounds' trimmed range over their median (timing.summarize)"
    )
    host_rounds_us: list[float] | None = Field(
        None,
        description="host time of each round; round r of every implementation of the shape was "
        "taken in the same pass, so differences are paired by round",
    )
    device_again_us: float | None = Field(
        None,
        description="eager only: its device time taken again after the shape's other "
        "implementations, the run-to-run noise of one call",
    )
    host_again_rounds_us: list[float] | None = Field(
        None,
        description="eager only: its host time in a second place of each round, paired with "
        "host_rounds_us by round: what two timings of one call differ by",
    )
    method: Literal["graph", "do_bench"] | None = None
    calls_per_replay: int | None = None
    path: Literal["kernel", "torch"] | None = Field(None, description="kernelgen_ops: which ran")
    api: str | None = Field(
        None,
        description="the peer's function that ran, and in parentheses how its problem differs "
        "from the reference's where it does (rowwise scales, MLA's shared K and V)",
    )
    error: str | None = Field(None, description="raised, or disagreed with eager")
    skipped: str | None = None


class Ratio(_Model):
    """kernelgen_ops.<op> (or the routed call) over a baseline, across the shapes both have."""

    op: str
    metric: Literal["device_us", "host_us"]
    against: str = Field(description="best_peer: the fastest of PEERS that ran at the shape")
    impl: str
    shapes: int
    geomean: float | None = None
    worst: float | None = None
    worst_shape: str | None = None
    decode_geomean: float | None = None


class HostTarget(_Model):
    """Issue [H]'s target at decode shapes: kernelgen_ops.<op>'s host time per call at most torch
    eager's + TARGET_US."""

    op: str
    impl: str
    decode_shapes: int
    worst_excess_us: float | None = Field(None, description="max of impl host_us - eager host_us")
    worst_shape: str | None = None
    met: bool | None = None


class RoutedCheck(_Model):
    """Issue [H]'s rule for a routed torch call: never slower than the plain call by more than
    the measured noise, per shape (host time at decode shapes only). Device: the excess is the
    difference of the medians, the noise the larger of the two spreads times eager's median plus
    how far eager's second timing moved. Host: the excess is the median of the per-round
    differences, the noise eager's spread times its median."""

    op: str
    metric: Literal["device_us", "host_us"]
    shapes: int
    worst_excess: float | None = Field(None, description="max of routed - eager, in us")
    worst_shape: str | None = None
    noise_there: float | None = Field(None, description="the noise at worst_shape, in us")
    over_noise: list[str] = Field(default_factory=list, description="shapes past their noise")
    met: bool | None = None


class Worker(_Model):
    group: str
    state: Literal["pending", "running", "finished", "failed", "timed_out"] = "pending"
    seconds: float | None = None
    returncode: int | None = None
    note: str | None = None


class LibraryBench(_Model):
    created: str
    command: str
    budget_s: float
    environment: dict[str, str | bool | None] = Field(default_factory=dict)
    lean_launches: bool | None = Field(None, description="lean launches on in the workers")
    launch_plans: bool | None = Field(None, description="launch plans (_plans.py) on in workers")
    workers: list[Worker] = Field(default_factory=list)
    availability: list[Availability] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    summary: list[Ratio] = Field(default_factory=list)
    host_target: list[HostTarget] = Field(default_factory=list)
    routed: list[RoutedCheck] = Field(default_factory=list)
    complete: bool = False


class StoredBench(_Model):
    """A record as found on disk."""

    path: str = Field(description="relative to evaluations/")
    record: LibraryBench


class Skipped(_Model):
    path: str = Field(description="relative to evaluations/")
    reason: str


class NewestBench(_Model):
    newest: StoredBench | None = None
    skipped: list[Skipped] = Field(default_factory=list)
    records: list[StoredBench] = Field(
        default_factory=list,
        description="every record that reads, newest first: a bench split over GPU calls "
        "leaves one record per call, each covering some operators",
    )

    def for_op(self, op: str, gpu: str | None = None) -> StoredBench | None:
        """The newest record that measured `op` (a device time of any implementation of it);
        the newest record where none has. With `gpu` (the GPU the operator's own figures came
        from), only that GPU's records, since timings are set side by side only within one GPU:
        the newest of them that measured `op`, else the newest of them (None where that GPU has
        no record)."""
        records = self.records or [s for s in (self.newest,) if s is not None]
        if gpu is not None:
            records = [s for s in records if s.record.environment.get("gpu") == gpu]
        for stored in records:
            if any(m.op == op and m.device_us is not None for m in stored.record.measurements):
                return stored
        return self.newest if gpu is None else (records[0] if records else None)


def _created(record: LibraryBench) -> datetime:
    when = datetime.fromisoformat(record.created)
    # A record written without a zone is taken as UTC, as the script writes it, so that it
    # compares with the others instead of raising.
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _why(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return f"not a library benchmark record ({first_error(e)})"
    if isinstance(e, OSError):
        return f"unreadable ({e.strerror or e})"
    return f"created is not an ISO time ({e})"


def newest_record() -> NewestBench:
    """The newest record under evaluations/library/bench-*.json, by its `created` time (ties by
    file name), and every record that reads in that order (NewestBench.for_op picks each
    operator's); files that do not read or validate are skipped and named, never raised: the
    status page must still render."""
    evaluations = paths.evaluations_dir()
    found: list[tuple[datetime, str, StoredBench]] = []
    skipped: list[Skipped] = []
    for file in sorted((evaluations / FOLDER).glob("bench-*.json")):
        rel = file.relative_to(evaluations).as_posix()
        try:
            record = LibraryBench.model_validate_json(file.read_bytes())
            when = _created(record)
        except (OSError, ValueError) as e:  # ValidationError is a ValueError
            skipped.append(Skipped(path=rel, reason=_why(e)))
            continue
        found.append((when, file.name, StoredBench(path=rel, record=record)))
    ordered = [f[2] for f in sorted(found, key=lambda f: (f[0], f[1]), reverse=True)]
    return NewestBench(newest=ordered[0] if ordered else None, skipped=skipped, records=ordered)
