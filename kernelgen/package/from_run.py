"""Promotion from the evidence: a run's accepted, CUDA-measured candidate, or a seed timed by
`kernelgen bench` outside a run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from kernelgen import paths, store
from kernelgen.package.manifest import PromoteError, Provenance, ShapeSpeedup, sha256
from kernelgen.package.promotion import promote
from kernelgen.records import BenchRecord, CandidateRecord


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.root()))
    except ValueError:
        return str(path)


def _measured(bench: BenchRecord) -> dict[str, object]:
    """The Provenance fields that come from a CUDA bench record."""
    env = bench.environment
    return {
        "device": env.gpu,
        "driver": env.driver,
        "cuda": env.cuda,
        "torch": env.torch,
        "triton": env.triton,
        "speedups": [
            ShapeSpeedup(
                shape=s.shape,
                dtype=s.dtype,
                median_us=s.candidate.median_us,
                eager=s.speedup_eager,
                compile=s.speedup_compile,
                seed=s.speedup_seed,
                host_us=s.candidate.host_us,
                eager_us=s.eager.median_us if s.eager else None,
                eager_host_us=s.eager.host_us if s.eager else None,
                bound=s.bound,
            )
            for s in bench.shapes
        ],
        "peers": bench.peers,
        "geomean_eager": bench.geomean_eager,
        "geomean_compile": bench.geomean_compile,
        "geomean_seed": bench.geomean_seed,
    }


def first_judged(op: str, digest: str) -> tuple[str, str, str, str] | None:
    """(created, run id, candidate id, proposer) of the earliest candidate record of `op` whose
    source has sha256 `digest`, or None. A kernel resubmitted unchanged in a later run (to be
    measured again) is promoted from that run; the header then says where it came from."""
    found = []
    for path in store.op_dir(op).glob("*/candidates/*/record.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):  # an unreadable record is no evidence either way
            continue
        judged = data.get("sha256") or (data.get("verdict") or {}).get("sha256")
        if judged == digest:
            found.append(
                (data.get("created") or "", path.parents[2].name, path.parent.name,
                 str(data.get("proposer")))
            )  # fmt: skip
    return min(found) if found else None


def provenance_of(op: str, run_id: str, cand: CandidateRecord, source: str) -> Provenance:
    assert cand.bench is not None
    digest = sha256(source)
    first = first_judged(op, digest)
    note = None
    if first is not None and (first[1], first[2]) != (run_id, cand.id):
        note = (
            f"this source was first judged as {first[3]} run {first[1]}/{first[2]}; run "
            f"{run_id} judged and measured it again unchanged, and its figures are the ones here"
        )
    return Provenance(
        op=op,
        source=_relative(store.candidate_path(op, run_id, cand.id)),
        run_id=run_id,
        candidate_id=cand.id,
        record=_relative(store.candidate_dir(op, run_id, cand.id) / "record.json"),
        proposer=cand.proposer,
        model=cand.model,
        round=cand.round,
        parent=cand.parent,
        sha256=digest,
        note=note,
        **_measured(cand.bench),
    )


def seed_source_with_sha(op: str, digest: str) -> str:
    """The version of seeds/<op>.py whose sha256 is `digest`: the file, or one in its git history
    (a record names the exact source it measured; the seed may have moved on since)."""
    rel = f"seeds/{op}.py"
    root = paths.root()
    current = (root / rel).read_text()
    if sha256(current) == digest:
        return current
    revs = subprocess.run(
        ["git", "log", "--format=%H", "--", rel],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    for rev in revs:
        shown = subprocess.run(
            ["git", "show", f"{rev}:{rel}"], cwd=root, capture_output=True, text=True, check=False
        )
        if shown.returncode == 0 and sha256(shown.stdout) == digest:
            return shown.stdout
    raise PromoteError(f"{rel}: no version (file or git history) has sha256 {digest[:12]}")


def provenance_of_bench(
    op: str, bench: BenchRecord, record: Path, source_name: str, source: str, note: str
) -> Provenance:
    """A kernel measured by `kernelgen bench` outside a run (the seeds, before any run wins)."""
    if sha256(source) != bench.sha256:
        raise PromoteError(
            f"{record}: measured sha256 {bench.sha256[:12]}, but the source "
            f"given hashes to {sha256(source)[:12]}"
        )
    return Provenance(
        op=op,
        source=source_name,
        record=_relative(record),
        proposer="seed",
        sha256=bench.sha256,
        note=note,
        **_measured(bench),
    )


def promote_from_run(op: str, run_id: str, candidate_id: str | None = None) -> Path:
    """Promote a run's best candidate (or `candidate_id`): it must be accepted and measured on
    CUDA. Marks the run promoted and returns the library folder."""
    run = store.load_run(op, run_id)
    candidates = {c.id: c for c in store.load_candidates(op, run_id)}
    cid = candidate_id or run.best
    if cid is None:
        raise PromoteError(
            f"run {run_id} of {op} kept no candidate over the seed: nothing to promote "
            "(pass --candidate ID to choose one)"
        )
    cand = candidates.get(cid)
    if cand is None:
        known = ", ".join(sorted(candidates)) or "none"
        raise PromoteError(f"run {run_id} of {op} has no candidate {cid!r} (it has: {known})")
    where = f"{op} {run_id}/{cid}"
    if cand.status != "accepted":
        why = f": {cand.category}: {cand.reason}" if cand.reason else ""
        raise PromoteError(
            f"{where} was not accepted ({cand.status}{why}); only accepted "
            "candidates can be promoted"
        )
    bench = cand.bench
    if bench is None or bench.environment.device != "cuda" or bench.environment.interpreter:
        raise PromoteError(
            f"{where} has no timings measured on CUDA; promote only what was "
            "measured on a GPU (run `kernelgen optimize` there)"
        )
    verdict = cand.verdict
    if verdict is None or verdict.device != "cuda" or not verdict.complete:
        got = "no verdict" if verdict is None else f"a {verdict.device} verdict ({verdict.outcome})"
        raise PromoteError(f"{where} has {got}; promotion needs a CUDA verdict with every case run")
    if "memcheck" not in verdict.sanitized:
        raise PromoteError(
            f"{where} was not run under compute-sanitizer (memcheck); promote what "
            "`kernelgen optimize --device cuda` checked before promotion"
        )
    source = store.candidate_source(op, run_id, cid)
    digest = sha256(source)
    judged = cand.sha256 or (cand.verdict.sha256 if cand.verdict else None)
    if judged is not None and judged != digest:
        raise PromoteError(
            f"{store.candidate_path(op, run_id, cid)} changed since it was judged "
            f"(sha256 {digest[:12]}, judged {judged[:12]})"
        )
    library = promote(op, source, None, provenance_of(op, run_id, cand, source))
    run.promoted = True
    store.save_run(run)
    return library
