"""Evaluation records under evaluations/<op>/<run-id>/, every write atomic (write, then rename).

    run.json                      RunRecord: settings, environment, budget, state, why it stopped
    candidates/<id>/source.py     the candidate as judged
    candidates/<id>/record.json   CandidateRecord: verdict, timings, compile facts, parent
    candidates/<id>/transcript.json   the prompt and reply that produced it (proposers with one)
    candidates/<id>/profile-<shape>.json   Nsight Compute's summary at one bench shape
                                  (seed/profile-<shape>.json for the seed)
    candidates/<id>/kernelbench.json   KbCheck: an imported problem's candidate checked and
                                  timed by KernelBench's own criteria (kernelbench/criteria.py)
    report.md, report.html        written by `kernelgen report`

A candidate's record is written 'pending' before it is judged and rewritten with its verdict
after, so a run killed at any point resumes without losing or re-judging anything.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ValidationError

from kernelgen import paths
from kernelgen.errors import StoreError, first_error
from kernelgen.records import CandidateRecord, RunRecord, Transcript, now


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read(path: Path, model: type[BaseModel]) -> BaseModel:
    try:
        return model.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise StoreError(f"{path}: missing") from None
    except ValidationError as e:
        raise StoreError(f"{path}: {first_error(e)}") from None


def op_dir(op: str) -> Path:
    return paths.evaluations_dir() / op


def run_dir(op: str, run_id: str) -> Path:
    return op_dir(op) / run_id


def stamp() -> str:
    """UTC now, to the second, as run ids and record names carry it."""
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


def new_run_id(proposer: str) -> str:
    return f"{stamp()}-{proposer}-{secrets.token_hex(2)}"


def save_run(run: RunRecord) -> None:
    run.updated = now()
    write_atomic(run_dir(run.op, run.id) / "run.json", run.model_dump_json(indent=2))


def load_run(op: str, run_id: str) -> RunRecord:
    path = run_dir(op, run_id) / "run.json"
    if not path.is_file():
        known = ", ".join(list_runs(op)[-5:]) or "none"
        raise StoreError(f"no run {run_id!r} for {op} under {op_dir(op)} (latest: {known})")
    return _read(path, RunRecord)  # type: ignore[return-value]


def list_runs(op: str) -> list[str]:
    """Run ids of an operator, oldest first (ids start with a UTC timestamp)."""
    folder = op_dir(op)
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob("*/run.json"))


def latest_run(op: str) -> str:
    runs = list_runs(op)
    if not runs:
        raise StoreError(f"no runs for {op} under {op_dir(op)}: run `kernelgen optimize {op}`")
    return runs[-1]


def candidate_dir(op: str, run_id: str, cand_id: str) -> Path:
    return run_dir(op, run_id) / "candidates" / cand_id


def save_candidate(
    op: str,
    run_id: str,
    record: CandidateRecord,
    source: str | None = None,
    transcript: Transcript | None = None,
) -> None:
    folder = candidate_dir(op, run_id, record.id)
    if source is not None:
        write_atomic(folder / "source.py", source)
    if transcript is not None:
        write_atomic(folder / "transcript.json", transcript.model_dump_json(indent=2))
    # The record goes last: its presence says the files beside it are complete.
    write_atomic(folder / "record.json", record.model_dump_json(indent=2))


def load_candidates(op: str, run_id: str) -> list[CandidateRecord]:
    """All candidates of a run in the order they were made."""
    folder = run_dir(op, run_id) / "candidates"
    records = [_read(p, CandidateRecord) for p in folder.glob("*/record.json")]
    return sorted(records, key=lambda r: (r.created, r.id))  # type: ignore[attr-defined]


def candidate_source(op: str, run_id: str, cand_id: str) -> str:
    path = candidate_dir(op, run_id, cand_id) / "source.py"
    if not path.is_file():
        raise StoreError(f"{path}: missing")
    return path.read_text()


def candidate_path(op: str, run_id: str, cand_id: str) -> Path:
    return candidate_dir(op, run_id, cand_id) / "source.py"


def profile_path(op: str, run_id: str, cand_id: str, shape: str) -> Path:
    """Where a profile of a candidate (or of the seed, which has no candidate folder) at one
    bench shape is kept: beside what it measured, as evidence."""
    folder = (
        run_dir(op, run_id) / "seed" if cand_id == "seed" else candidate_dir(op, run_id, cand_id)
    )
    # Shape names come from the spec; keep them from naming a path outside the folder.
    return folder / f"profile-{re.sub(r'[^A-Za-z0-9._-]', '_', shape)}.json"


def load_transcript(op: str, run_id: str, cand_id: str) -> Transcript | None:
    path = candidate_dir(op, run_id, cand_id) / "transcript.json"
    return _read(path, Transcript) if path.is_file() else None  # type: ignore[return-value]
