"""The kernel against the best peer measured: per shape the fastest of torch eager, torch.compile,
Liger-Kernel and FlagGems, the figure the library's headlines give (a speedup over eager alone
flatters a kernel whose op torch.compile or a library already fuses: decode_attn's 46x over eager
is 22x over torch.compile).

The peers come from two records, each figure a ratio within its own record (their timings are
taken differently, so no time of one is set against a time of the other):
- the promoted run's bench record (the provenance's speedups): eager and torch.compile, timed
  interleaved with the kernel at the spec's bench shapes;
- the newest library bench record (evaluations/library/, scripts/bench_library.py), where it
  measured this kernel: on the provenance's GPU, after the kernel was promoted (an older record
  timed another kernel, or none). It adds Liger and FlagGems, and decode shapes of its own;
  the kernel's figure is its call forced onto the kernel (kernelgen_ops[kernel]), device time
  in CUDA graphs.
At a shape both measured, the lower figure stands: the peer that did best against the kernel.
"""

from __future__ import annotations

from datetime import datetime, timezone

from kernelgen.bench.library import PEERS, StoredBench, newest_record
from kernelgen.bench.roofline import geomean
from kernelgen.package.manifest import BestPeer, PeerShape, Provenance

# How the headers name each peer.
PEER_NAMES = {
    "eager": "eager",
    "compile": "torch.compile",
    "liger": "Liger",
    "flaggems": "FlagGems",
}
_KERNEL = "kernelgen_ops[kernel]"  # the library bench's call forced onto the kernel


def _when(iso: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _measured_this_kernel(stored: StoredBench, p: Provenance) -> bool:
    rec = stored.record
    promoted, created = _when(p.promoted), _when(rec.created)
    return (
        rec.environment.get("gpu") == p.device
        and promoted is not None
        and created is not None
        and created > promoted
    )


def _from_run(p: Provenance) -> dict[tuple[str, str], PeerShape]:
    out = {}
    for s in p.speedups or []:
        ratios = {"eager": s.eager, "compile": s.compile}
        found = [(v, k) for k, v in ratios.items() if v is not None]
        if found:
            speedup, peer = min(found)
            out[(s.shape, s.dtype)] = PeerShape(
                shape=s.shape, dtype=s.dtype, peer=peer, speedup=speedup, source="run"
            )
    return out


def _from_library(op: str, stored: StoredBench) -> dict[tuple[str, str], PeerShape]:
    times: dict[tuple[str, str], dict[str, float]] = {}
    for m in stored.record.measurements:
        if m.op == op and m.device_us and m.error is None and m.skipped is None:
            times.setdefault((m.shape, m.dtype), {})[m.impl] = m.device_us
    out = {}
    for (shape, dtype), by_impl in times.items():
        kernel = by_impl.get(_KERNEL)
        found = [(by_impl[k] / kernel, k) for k in PEERS if k in by_impl and kernel]
        if found:
            speedup, peer = min(found)
            out[(shape, dtype)] = PeerShape(
                shape=shape, dtype=dtype, peer=peer, speedup=speedup, source="library"
            )
    return out


def best_peer(op: str, p: Provenance) -> BestPeer | None:
    """The kernel of a measured provenance against its best peer; None where nothing was."""
    if not p.measured:
        return None
    shapes = _from_run(p)
    # The newest record that timed this operator on this kernel's GPU: a newer one of another
    # GPU, or one that left the operator out, has no figure to set beside the run's.
    stored = newest_record().for_op(op, p.device)
    library = None
    if stored is not None and _measured_this_kernel(stored, p):
        extra = _from_library(op, stored)
        if extra:
            library = f"evaluations/{stored.path}"
        for key, figure in extra.items():
            if key not in shapes or figure.speedup < shapes[key].speedup:
                shapes[key] = figure
    figures = list(shapes.values())
    mean = geomean(f.speedup for f in figures)
    if mean is None:
        return None
    return BestPeer(geomean=mean, shapes=figures, library=library)
