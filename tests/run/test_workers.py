"""The local worker pool (--gpus) on CPU: fake GPUs are interpreter workers, each with sandboxes
of its own. A worker killed mid-candidate loses nothing: the candidate stays pending, another
worker judges it, and the run's verdicts equal the one-worker run's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from workers_helpers import (  # noqa: E402
    OP,
    Killer,
    Watch,
    kill_process,
    make_candidates,
    optimize_killing_one,
    options,
    record,
    verdicts,
)

from kernelgen.cli import app  # noqa: E402
from kernelgen.errors import KernelgenError, UsageError  # noqa: E402
from kernelgen.run import workers  # noqa: E402
from kernelgen.run.optimize import open_workers, optimize_op  # noqa: E402


def test_killed_worker_loses_nothing(inside: Path, one_worker: dict[str, tuple]) -> None:
    folder = inside / "pool"
    folder.mkdir()
    cands = make_candidates(folder)
    opts = options(cands, gpus="2")
    pool = open_workers(OP, "cpu", opts)
    # Right after the kill the candidate was pending; another worker judged it.
    summary, killer = optimize_killing_one(inside, opts, pool, kill_process)
    first = record(inside, summary.run_id, "r01-c01")
    assert first["worker"] not in (None, killer.killed)
    # The records equal the one-worker run's (verdicts; timings aside).
    assert verdicts(inside, summary.run_id) == one_worker
    workers_seen = {record(inside, summary.run_id, c)["worker"] for c in one_worker}
    assert len(workers_seen - {None}) >= 1


def test_every_worker_dead_stops_the_run_resumable(
    inside: Path, one_worker: dict[str, tuple]
) -> None:
    folder = inside / "lost"
    folder.mkdir()
    cands = make_candidates(folder)
    opts = options(cands, gpus="1")
    pool = open_workers(OP, "cpu", opts)
    watch = Watch()
    killer = Killer(lambda: pool, "r01-c01", kill_process, after_s=0.5)
    killer.start()
    try:
        with pytest.raises(KernelgenError, match="resumable: kernelgen optimize"):
            optimize_op(OP, opts, watch, pool=pool)
    finally:
        pool.close()
    run = watch.run
    assert run is not None
    stored = json.loads((inside / "evaluations" / OP / run.id / "run.json").read_text())
    assert stored["state"] == "failed" and "every worker died" in stored["stopped"]
    assert record(inside, run.id, "r01-c01")["status"] == "pending"
    # Resumed on new workers: the pending ones are judged, and the run ends as one judge's.
    again = options(cands, gpus="2", resume=run.id)
    summary = optimize_op(OP, again, Watch())
    assert summary.run_id == run.id and summary.stopped == "all 1 round done"
    assert verdicts(inside, run.id) == one_worker


def test_gpus_values_fail_in_one_line(inside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    for value, want in [
        ("0", "--gpus 0: expected at least 1 GPU"),
        ("foo", "--gpus foo: expected a number of GPUs (1, 2, ...) or 'all'"),
        ("all", "--gpus all: no GPU is used on --device cpu"),
    ]:
        result = runner.invoke(app, ["optimize", OP, "--device", "cpu", "--gpus", value])
        assert result.exit_code == 2, result.output
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and want in lines[0], result.output
    monkeypatch.setattr(workers, "visible_gpus", lambda: ["0"])
    with pytest.raises(UsageError, match=r"--gpus 3: only 1 GPU is visible here"):
        workers.local_slots("3", "cuda")
    monkeypatch.setattr(workers, "visible_gpus", lambda: ["4", "6"])
    assert workers.local_slots("all", "cuda") == ["4", "6"]
    assert workers.local_slots("1", "cuda") == ["4"]
    assert workers.local_slots("2", "cpu") == ["", ""]


def test_verify_several_files_over_workers(inside: Path) -> None:
    folder = inside / "verify"
    folder.mkdir()
    cands = make_candidates(folder)
    files = [str(cands / n) for n in ("a_good.py", "b_wrong.py", "c_cheat.py")]
    result = CliRunner().invoke(
        app, ["verify", OP, *files, "--device", "cpu", "--gpu-target", "none", "--gpus", "2"]
    )
    assert result.exit_code == 1, result.output  # one rejected
    assert "1 of 3 accepted" in result.output
    for name in ("a_good.py", "b_wrong.py", "c_cheat.py"):
        assert name in result.output


def test_workers_sharing_a_gpu_have_names_of_their_own() -> None:
    # A worker puts its name on every outcome it sends, so the names are set before it starts.
    assert workers.worker_names(["0", "0", "1", "0"]) == ["gpu0", "gpu0.1", "gpu1", "gpu0.2"]
    assert workers.worker_names(["", ""]) == ["cpu0", "cpu1"]
