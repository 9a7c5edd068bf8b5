"""One operator's figures from the newest library benchmark record that measured it
(evaluations/library/), as the status page shows them beside the evidence of its runs: its time
over the best peer, each peer's figure, and the peers it is timed against that have none, and why.

Every ratio here is a time ratio, kernelgen's device time over the baseline's, so below 1 is
faster: the opposite direction of the status page's speedups (× eager, × compile).
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.bench.library import (
    OP_PEERS,
    PEERS,
    TARGET_US,
    LibraryBench,
    Measurement,
    NewestBench,
    Ratio,
    StoredBench,
)

_FASTER = "time over the best peer's: below 1 is faster"
# What the bench writes where a peer refused a shape (FlashMLA's head dims, a block layout it
# does not take), as against a peer that raised or disagreed with eager.
_REFUSED = re.compile(r"\brefus", re.IGNORECASE)
_REASON_CHARS = 300


class PeerFigure(BaseModel):
    """One peer that gave device times for the operator."""

    model_config = ConfigDict(extra="forbid")

    peer: str
    shapes: int = Field(description="shapes where it gave a device time")
    fastest_at: int = Field(description="shapes where it was the fastest peer")
    time_over: float | None = Field(
        description="kernelgen_ops.<op>'s device time over this peer's, geomean over the shapes "
        "both have: below 1 is faster"
    )


class MissingPeer(BaseModel):
    """A peer the operator is timed against that has no figure at some or all of its shapes."""

    model_config = ConfigDict(extra="forbid")

    peer: str
    why: Literal["not installed", "refused", "failed", "skipped", "not run"]
    shapes: int = Field(description="the operator's shapes in the record without its figure")
    of: int = Field(description="the operator's shapes in the record")
    reason: str | None = Field(description="the record's words, the first shape's")


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
    peer_figures: list[PeerFigure] = Field(
        default_factory=list, description="each peer that gave a device time, in PEERS' order"
    )
    missing_peers: list[MissingPeer] = Field(
        default_factory=list,
        description="the peers the operator is timed against (eager, compile and OP_PEERS') "
        "without a figure at some shape, and why",
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


def _figured(m: Measurement) -> bool:
    return m.device_us is not None and m.error is None and m.skipped is None


def peer_figures(rec: LibraryBench, op: str) -> list[PeerFigure]:
    """Per peer, its shapes, where it was the fastest, and kernelgen_ops' time over its."""
    by_shape: dict[str, dict[str, float]] = {}
    for m in rec.measurements:
        if m.op == op and _figured(m) and m.device_us is not None:
            by_shape.setdefault(m.shape, {})[m.impl] = m.device_us
    out = []
    for peer in PEERS:
        times = {shape: got[peer] for shape, got in by_shape.items() if peer in got}
        if not times:
            continue
        fastest = sum(
            1
            for got in by_shape.values()
            if peer in got and got[peer] == min(got[p] for p in PEERS if p in got)
        )
        ratios = [
            by_shape[shape]["kernelgen_ops"] / t
            for shape, t in times.items()
            if "kernelgen_ops" in by_shape[shape] and t > 0
        ]
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else None
        out.append(
            PeerFigure(
                peer=peer,
                shapes=len(times),
                fastest_at=fastest,
                time_over=round(mean, 4) if mean is not None else None,
            )
        )
    return out


def _why(m: Measurement, installed: bool) -> tuple[str, str | None]:
    if not installed:
        return "not installed", m.error
    if m.skipped is not None:
        return "skipped", m.skipped
    if m.error is not None:
        if m.error.startswith(f"{m.impl} not available"):  # the worker's word for it
            return "not installed", m.error
        return ("refused" if _REFUSED.search(m.error) else "failed"), m.error
    return "failed", "no device time"


def missing_peers(rec: LibraryBench, op: str) -> list[MissingPeer]:
    """Eager, compile and the op's peers (OP_PEERS) where the record has no figure of theirs at
    some shape of the op: not installed (the worker could not import it), refused the shape,
    failed (raised, disagreed with eager, or its worker stopped), skipped, or not run at all
    (its group was not started)."""
    shapes = list(dict.fromkeys(m.shape for m in rec.measurements if m.op == op))
    available = {a.impl: a for a in rec.availability}
    workers = {w.group: w for w in rec.workers}
    out: list[MissingPeer] = []
    for peer in ("eager", "compile", *OP_PEERS.get(op, ())):
        rows = {m.shape: m for m in rec.measurements if m.op == op and m.impl == peer}
        gone = [s for s in shapes if not (s in rows and _figured(rows[s]))]
        if not gone:
            continue
        found = available.get(peer)
        installed = found is None or found.available
        kinds: dict[str, list[str | None]] = {}
        for shape in gone:
            if shape in rows:
                why, reason = _why(rows[shape], installed)
            elif not installed:
                why, reason = "not installed", found.reason if found else None
            elif peer in workers and workers[peer].state in ("failed", "timed_out"):
                w = workers[peer]
                why, reason = "failed", f"its worker {w.state}" + (f": {w.note}" if w.note else "")
            else:
                why, reason = "not run", "no figure of it in this record"
            kinds.setdefault(why, []).append(reason)
        for why, reasons in kinds.items():
            first = next((r for r in reasons if r), None)
            out.append(
                MissingPeer(
                    peer=peer,
                    why=why,  # type: ignore[arg-type]
                    shapes=len(reasons),
                    of=len(shapes),
                    reason=first[:_REASON_CHARS] if first else None,
                )
            )
    return out


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
        peer_figures=peer_figures(rec, op),
        missing_peers=missing_peers(rec, op),
    )


def missing_note(f: LibraryFigures | None) -> str | None:
    """The peers without a figure, in a line: "no figure: quack (not installed), flashmla
    (refused at 2 of 6 shapes)"; None where every peer gave one."""
    if f is None or not f.missing_peers:
        return None
    parts = [
        f"{m.peer} ({m.why}" + (f" at {m.shapes} of {m.of} shapes)" if m.shapes < m.of else ")")
        for m in f.missing_peers
    ]
    return "no figure: " + ", ".join(parts)


def _where(rec: LibraryBench) -> str:
    gpu = rec.environment.get("gpu")
    return ", ".join(
        p
        for p in (
            gpu if isinstance(gpu, str) else None,
            rec.created[:10],
            None if rec.complete else "cut short",
        )
        if p
    )


def source_note(found: NewestBench, used: dict[str, str]) -> str:
    """Which records the status page's library figures come from: the newest, and for each
    operator whose figures come from another, that one (a bench split over GPU calls, or the
    newest measured on another GPU than the operator's own figures). `used`: operator -> the
    record its row took (status.records_used)."""
    if found.newest is None:
        return "library bench: no record under evaluations/library/ (scripts/bench_library.py)"
    note = f"library bench: evaluations/{found.newest.path} ({_where(found.newest.record)})"
    for stored in found.records:  # newest first
        names = [op for op, path in used.items() if path == stored.path]
        if names and stored.path != found.newest.path:
            note += f"; {', '.join(names)} from evaluations/{stored.path} ({_where(stored.record)})"
    return note


def skipped_notes(found: NewestBench) -> list[str]:
    """One line per record file the status page passed over."""
    return [f"library bench: skipped evaluations/{s.path}: {s.reason}" for s in found.skipped]
