"""One operator's figures from the library benchmark's newest record (evaluations/library/), as the
status page shows them beside the evidence of its runs.

Every ratio here is a time ratio, kernelgen's device time over the baseline's, so below 1 is
faster: the opposite direction of the status page's speedups (× eager, × compile).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.bench.library import (
    PEERS,
    TARGET_US,
    LibraryBench,
    NewestBench,
    Ratio,
    StoredBench,
)

_FASTER = "time over the best peer's: below 1 is faster"


class LibraryFigures(BaseModel):
    """kernelgen_ops.<op> against its peers, from one record of scripts/bench_library.py."""

    model_config = ConfigDict(extra="forbid")

    record: str = Field(description="the record, relative to evaluations/")
    created: str
    gpu: str | None = Field(description="from the record's environment")
    complete: bool = Field(description="every worker of the run finished")
    lean_launches: bool | None
    peers: list[str] = Field(
        description="the peers the best peer is taken from: eager, compile, and the libraries "
        "the record found available, where they gave a figure for this operator"
    )
    shapes: int | None = Field(description="shapes behind time_over_best_peer")
    time_over_best_peer: float | None = Field(
        description="kernelgen_ops.<op> as users call it (the measured dispatch may take "
        f"torch's op), geomean over shapes of its device {_FASTER}"
    )
    time_over_best_peer_worst: float | None = Field(
        description=f"the largest over shapes of kernelgen_ops.<op>'s device {_FASTER}"
    )
    time_over_best_peer_worst_shape: str | None
    kernel_time_over_best_peer: float | None = Field(
        description=f"forced onto the kernel, geomean over shapes of its device {_FASTER}"
    )
    routed_time_over_eager: float | None = Field(
        description="torch.<op> under kernelgen_ops.use(), geomean over shapes of its device time "
        "over plain eager's: below 1 is faster; None for ops the library does not route"
    )
    decode_host_excess_us: float | None = Field(
        description="at decode shapes, the worst of kernelgen_ops.<op>'s host time per call "
        "minus eager's"
    )
    decode_host_target_met: bool | None = Field(
        description=f"decode_host_excess_us at most {TARGET_US:g} us (issue [H]'s target)"
    )
    routed_within_noise: bool | None = Field(
        None,
        description="torch.<op> under use() never slower than without it by more than the "
        "measured noise, device time at every shape and host time at decode shapes (issue [H]); "
        "None where the record has no such check",
    )
    routed_over_noise: list[str] = Field(
        default_factory=list, description="metric:shape where the routed call was past the noise"
    )


def _ratio(rec: LibraryBench, op: str, impl: str, against: str) -> Ratio | None:
    return next(
        (
            r
            for r in rec.summary
            if (r.op, r.metric, r.impl, r.against) == (op, "device_us", impl, against)
        ),
        None,
    )


def _peers(rec: LibraryBench, op: str) -> list[str]:
    available = {"eager", "compile"} | {a.impl for a in rec.availability if a.available}
    measured = {
        m.impl
        for m in rec.measurements
        if m.op == op and m.device_us is not None and m.error is None and m.skipped is None
    }
    return [p for p in PEERS if p in available and p in measured]


def library_figures(op: str, stored: StoredBench | None) -> LibraryFigures | None:
    """The op's figures, or None when the record holds no figure of it."""
    if stored is None:
        return None
    rec = stored.record
    if not any(m.op == op for m in rec.measurements) and not any(r.op == op for r in rec.summary):
        return None
    mine = _ratio(rec, op, "kernelgen_ops", "best_peer")
    kernel = _ratio(rec, op, "kernelgen_ops[kernel]", "best_peer")
    routed = _ratio(rec, op, "routed", "eager")
    host = next((t for t in rec.host_target if (t.op, t.impl) == (op, "kernelgen_ops")), None)
    checks = [c for c in rec.routed if c.op == op]
    gpu = rec.environment.get("gpu")
    return LibraryFigures(
        record=stored.path,
        created=rec.created,
        gpu=gpu if isinstance(gpu, str) else None,
        complete=rec.complete,
        lean_launches=rec.lean_launches,
        peers=_peers(rec, op),
        shapes=mine.shapes if mine else None,
        time_over_best_peer=mine.geomean if mine else None,
        time_over_best_peer_worst=mine.worst if mine else None,
        time_over_best_peer_worst_shape=mine.worst_shape if mine else None,
        kernel_time_over_best_peer=kernel.geomean if kernel else None,
        routed_time_over_eager=routed.geomean if routed else None,
        decode_host_excess_us=host.worst_excess_us if host else None,
        decode_host_target_met=host.met if host else None,
        routed_within_noise=all(c.met for c in checks) if checks else None,
        routed_over_noise=[f"{c.metric}:{shape}" for c in checks for shape in c.over_noise],
    )


def source_note(found: NewestBench) -> str:
    """Which record the status page's library figures come from."""
    if found.newest is None:
        return "library bench: no record under evaluations/library/ (scripts/bench_library.py)"
    rec = found.newest.record
    gpu = rec.environment.get("gpu")
    where = ", ".join(
        p
        for p in (
            gpu if isinstance(gpu, str) else None,
            rec.created[:10],
            None if rec.complete else "cut short",
        )
        if p
    )
    return f"library bench: evaluations/{found.newest.path} ({where})"


def skipped_notes(found: NewestBench) -> list[str]:
    """One line per record file the status page passed over."""
    return [f"library bench: skipped evaluations/{s.path}: {s.reason}" for s in found.skipped]
