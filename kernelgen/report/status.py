"""The library's status page: every operator, its seed, its generated version and the evidence.

The evidence for an operator is the run named by generated/kernelgen_ops/MANIFEST.json, else its
latest run whose best candidate has a CUDA benchmark. Speedups are geometric means over the
benchmark shapes of that candidate's record; beside them, the newest library benchmark record that
measured the operator (evaluations/library/, kernelgen.report.library) gives kernelgen_ops.<op>
against every peer, and names the peers it is timed against that have no figure there, and why.
Nothing here re-measures.
"""

from __future__ import annotations

import json
import statistics

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelgen import paths, spec, store
from kernelgen.bench.library import NewestBench, newest_record
from kernelgen.errors import KernelgenError, StoreError
from kernelgen.records import BenchRecord, CandidateRecord, RunRecord
from kernelgen.report.library import LibraryFigures, library_figures
from kernelgen.report.manifest import read_manifest
from kernelgen.report.ratios import geomean, ratio
from kernelgen.spec.origin import IMPORTED_NAME


class OpStatus(BaseModel):
    """One operator, exactly as `kernelgen report --all --json` prints it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    generated: bool
    device: str | None
    speedup_vs_eager: float | None
    speedup_vs_compile: float | None
    worst_shape_vs_best_peer: float | None
    limit_pct: float | None
    run: str | None
    library: LibraryFigures | None = Field(
        description="from the newest library benchmark record that measured this operator; "
        "None where none has. Its ratios are time over the best peer's: below 1 is faster"
    )


class LibraryStatus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ops: list[OpStatus]


class OpRow(BaseModel):
    """What the page and the table show beyond the JSON."""

    model_config = ConfigDict(extra="forbid")

    status: OpStatus
    seed: str | None = Field(description="seeds/<op>.py when present")
    seed_speedup_eager: float | None = None
    module: str | None = Field(None, description="generated/kernelgen_ops/<op>.py when present")
    candidate: str | None = None
    proposer: str | None = None
    date: str | None = None
    worst_shape: str | None = None
    report: str | None = Field(None, description="the run report, relative to evaluations/")
    latest_run: str | None = None
    note: str | None = None
    dispatch: str | None = Field(
        None, description="where the library takes the kernel, from configs/<op>.json"
    )
    dispatch_brief: str | None = Field(None, description="the dispatch line with counts alone")


def _candidate(op: str, run_id: str, cand_id: str) -> CandidateRecord | None:
    path = store.candidate_dir(op, run_id, cand_id) / "record.json"
    try:
        return CandidateRecord.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None


def _evidence(op: str, entry: dict) -> tuple[RunRecord | None, CandidateRecord | None, str | None]:
    """(run, candidate, run id) behind the op's generated version or best measured candidate."""
    run_id = entry.get("run_id") or entry.get("run")
    if isinstance(run_id, str) and run_id:
        try:
            run = store.load_run(op, run_id)
        except StoreError:
            return None, None, run_id
        cand_id = entry.get("candidate_id") or entry.get("candidate") or run.best
        cand = _candidate(op, run_id, cand_id) if isinstance(cand_id, str) else None
        return run, cand, run_id
    for rid in reversed(store.list_runs(op)):
        try:
            run = store.load_run(op, rid)
        except StoreError:
            continue
        if run.best is None:
            continue
        cand = _candidate(op, rid, run.best)
        if cand and cand.bench and cand.bench.environment.device == "cuda":
            return run, cand, rid
    return None, None, None


def _has_eager_peer(op: str) -> bool:
    try:
        op_spec = spec.load_spec(op)
    except KernelgenError:
        return False
    return op_spec.eager is not op_spec.reference


def _record_bench(entry: dict) -> BenchRecord | None:
    """The bench record a manifest entry names as its evidence when no run stands behind it
    (a seed timed by `kernelgen bench OP --seed`)."""
    record = entry.get("record")
    if not isinstance(record, str) or not record.endswith(".json"):
        return None
    path = paths.root() / record
    try:
        return BenchRecord.model_validate_json(path.read_text())
    except (OSError, ValueError):
        return None


def _figures(bench: BenchRecord) -> dict[str, float | str | None]:
    eager, compile_, worst, limits = [], [], [], []
    worst_shape, worst_value = None, None
    for t in bench.shapes:
        me = t.candidate.median_us
        e = t.eager.median_us if t.eager else None
        c = t.compile.median_us if t.compile else None
        eager.append(t.speedup_eager or ratio(e, me))
        compile_.append(t.speedup_compile or ratio(c, me))
        peers = [p for p in (e, c) if p is not None]
        if peers:
            v = min(peers) / me
            worst.append(v)
            if worst_value is None or v < worst_value:
                worst_shape, worst_value = t.shape, v
        limits.append(t.limit_pct)
    return {
        "eager": geomean(eager),
        "compile": geomean(compile_),
        "worst": worst_value,
        "worst_shape": worst_shape,
        "limit": statistics.median(limits) if limits else None,
    }


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


class Dispatch(BaseModel):
    """The library's dispatch table for an operator, said twice: in full, with every shape, and
    in brief, with counts alone (the status page shows the brief and folds the full line under it,
    so that a row of twelve shapes stays a few lines tall)."""

    model_config = ConfigDict(extra="forbid")

    full: str
    brief: str


def dispatch_summary(op: str) -> Dispatch | None:
    """Where a call takes the kernel per device, where a routed torch call does (the rest of the
    measured shapes go to torch's op), and where set_dispatch("device") takes it (by device time
    alone, for CUDA graphs), as the library answers them (kernelgen_ops._runtime.takes_kernel,
    takes_kernel_on_device), from generated/kernelgen_ops/configs/<op>.json."""
    # The library's own rule, so the page cannot say other than the library does; imported
    # here, as the page is drawn, since it brings torch and triton with it.
    from kernelgen_ops._routing import routable
    from kernelgen_ops._runtime import takes_kernel, takes_kernel_on_device

    try:
        data = json.loads((paths.library_dir() / "configs" / f"{op}.json").read_text())
    except (OSError, ValueError):
        return None
    has_routes = op in routable()
    full, brief = [], []
    for device, table in sorted((data.get("dispatch") or {}).items()):
        if not isinstance(table, dict):
            continue
        rows = [r for r in table.values() if isinstance(r, dict) and "kernel" in r]
        won = [str(r.get("shape")) for r in rows if takes_kernel(r, routed=False)]
        # Routed calls (enable(), use()) come through the torch entry points the library's
        # manifest records for the op; an op without them is never routed.
        routed = [str(r.get("shape")) for r in rows if takes_kernel(r, has_routes)]
        where = ", ".join(won) if won else "no shape"
        head = f"{device.split('|')[0]}: kernel at {len(won)} of {len(table)}"
        line, short = f"{head} ({where})", head
        if routed != won:
            line += f", routed at {len(routed)} ({', '.join(routed) or 'none'})"
            short += f", routed at {len(routed)}"
        # By device time a routed call answers as a direct one: no route is paid in a graph.
        graphs = [str(r.get("shape")) for r in rows if takes_kernel_on_device(r, routed=False)]
        if graphs != won or routed != won:
            where = ", ".join(graphs) or "none"
            line += f"; by device time (CUDA graphs) at {len(graphs)} ({where})"
            short += f"; by device time at {len(graphs)}"
        full.append(line)
        brief.append(short)
    if not full:
        return None
    return Dispatch(full="; ".join(full), brief="; ".join(brief))


def op_row(op: str, manifest: dict[str, dict], library: NewestBench | None = None) -> OpRow:
    """The operator's row; its library figures from the newest of `library`'s records that
    measured it on the GPU its own figures came from (any record where those name no GPU)."""
    entry = manifest.get(op, {})
    seed = paths.seeds_dir() / f"{op}.py"
    module = paths.library_dir() / f"{op}.py"
    run, cand, run_id = _evidence(op, entry)
    runs = store.list_runs(op)
    row = OpRow(
        status=OpStatus(
            name=op,
            generated=bool(entry),
            device=None,
            speedup_vs_eager=None,
            speedup_vs_compile=None,
            worst_shape_vs_best_peer=None,
            limit_pct=None,
            run=run_id,
            library=None,
        ),
        seed=f"seeds/{op}.py" if seed.is_file() else None,
        module=f"generated/kernelgen_ops/{op}.py" if module.is_file() else None,
        latest_run=runs[-1] if runs else None,
        proposer=entry.get("proposer") if isinstance(entry.get("proposer"), str) else None,
    )
    dispatch = dispatch_summary(op) if entry else None
    if dispatch is not None:
        row.dispatch, row.dispatch_brief = dispatch.full, dispatch.brief
    st = row.status
    bench = cand.bench if cand is not None else None
    if bench is None and run is None:
        bench = _record_bench(entry)
    if bench is not None:
        f = _figures(bench)
        st.device = bench.environment.gpu or bench.environment.device
        st.speedup_vs_eager, st.speedup_vs_compile = f["eager"], f["compile"]  # type: ignore[assignment]
        st.worst_shape_vs_best_peer, st.limit_pct = f["worst"], f["limit"]  # type: ignore[assignment]
        row.worst_shape = f["worst_shape"]  # type: ignore[assignment]
        row.date = bench.created[:10]
        if cand is not None:
            row.candidate = cand.id
            row.proposer = row.proposer or cand.proposer + (
                f" · {cand.model}" if cand.model else ""
            )
        else:
            row.note = f"no run yet: evidence {entry.get('record')}"
        if bench.peers != "eager" and _has_eager_peer(op):
            row.note = (row.note + "; " if row.note else "") + (
                f"× eager/compile were measured against the reference as written, not "
                f"references/{op}.py:eager, and overstate the gain"
            )
    elif entry:
        # The manifest names a run this checkout does not hold (or one without timings): show
        # what the manifest says.
        sp = entry.get("speedups") if isinstance(entry.get("speedups"), dict) else {}
        st.device = entry.get("device") if isinstance(entry.get("device"), str) else None
        st.speedup_vs_eager = _num(sp.get("eager", entry.get("speedup_vs_eager")))
        st.speedup_vs_compile = _num(sp.get("compile", entry.get("speedup_vs_compile")))
        if not run_id:
            row.note = "the manifest names no run"
        elif run is None:
            row.note = f"run {run_id} is not under evaluations/"
        else:
            row.note = f"run {run_id} holds no CUDA benchmark of the promoted candidate"
    elif runs:
        row.note = "no run with a measured best yet"
    else:
        row.note = "never optimized"
    if library is not None:
        gpu = st.device if st.device not in (None, "cuda", "cpu") else None
        st.library = library_figures(op, library.for_op(op, gpu))
    if run is not None and run.seed_bench is not None:
        row.seed_speedup_eager = run.seed_bench.geomean_eager or geomean(
            [
                t.speedup_eager
                or ratio(t.eager.median_us if t.eager else None, t.candidate.median_us)
                for t in run.seed_bench.shapes
            ]
        )
    return row


def known_ops(manifest: dict[str, dict]) -> list[str]:
    """The library's operators: shipped, with a reference, or with runs. Imported benchmark
    problems are left to their own report (`kernelgen report kernelbench`): a hundred of them
    would bury the library's eleven."""
    ops = set(manifest)
    try:
        ops |= set(spec.known_ops())
    except OSError:
        pass
    folder = paths.evaluations_dir()
    if folder.is_dir():
        ops |= {p.parent.parent.name for p in folder.glob("*/*/run.json")}
    return sorted(op for op in ops if op in manifest or not _imported(op))


def _imported(op: str) -> bool:
    if not IMPORTED_NAME.match(op):  # the importer's names; only those can be imports
        return False
    try:
        return spec.load_spec(op).data.origin is not None
    except KernelgenError:
        return True  # a run of a problem whose reference is not here


def records_used(rows: list[OpRow]) -> dict[str, str]:
    """Operator -> the library record its row's figures come from (relative to evaluations/)."""
    return {r.status.name: r.status.library.record for r in rows if r.status.library is not None}


def gather_status(library: NewestBench | None = None) -> list[OpRow]:
    """Every operator's row; `library` is the library benchmark's records as found (read from
    evaluations/library/ when not given). Each operator's figures come from the newest record
    that measured it on the GPU of its own figures: a bench split over GPU calls leaves one
    record per call."""
    manifest = read_manifest()
    found = library or newest_record()
    return [op_row(op, manifest, found) for op in known_ops(manifest)]
