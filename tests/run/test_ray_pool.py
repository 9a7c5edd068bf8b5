"""The workers as Ray actors (--ray) on a local Ray cluster that declares fake GPUs: each actor
takes num_gpus=1 and judges through the CPU interpreter. An actor killed mid-candidate (ray.kill)
loses nothing, and the run's verdicts equal the one-worker run's. Without Ray, --ray says in one
line how to install it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from workers_helpers import (  # noqa: E402
    OP,
    Killer,
    Watch,
    make_candidates,
    optimize_killing_one,
    options,
    record,
    verdicts,
)

from kernelgen.cli import app  # noqa: E402
from kernelgen.errors import KernelgenError  # noqa: E402
from kernelgen.run.optimize import open_workers, optimize_op  # noqa: E402

# CI installs Ray (the dev extra): there the test must run, never skip.
ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")
FAKE_GPUS = 3


@pytest.fixture(scope="module")
def cluster():
    # Two CPUs as on the CI machine; the actors hold no CPU (num_cpus=0), only a fake GPU each.
    ray.init(
        num_cpus=2,
        num_gpus=FAKE_GPUS,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield ray
    ray.shutdown()


def test_killed_actor_loses_nothing(inside: Path, one_worker: dict[str, tuple], cluster) -> None:
    folder = inside / "ray"
    folder.mkdir()
    cands = make_candidates(folder)
    opts = options(cands, ray="auto", gpus="2")
    pool = open_workers(OP, "cpu", opts)
    assert pool.size == 2
    assert all(w.name.startswith("ray-") for w in pool.workers)
    summary, killer = optimize_killing_one(inside, opts, pool, lambda w: ray.kill(w.actor))
    judged_by = record(inside, summary.run_id, "r01-c01")["worker"]
    assert judged_by.startswith("ray-") and judged_by != killer.killed
    assert verdicts(inside, summary.run_id) == one_worker


def test_lost_actors_stop_the_run_resumable(inside: Path, cluster) -> None:
    """Every actor gone (as when the cluster goes away): the run stops, its records as they
    were, and says how to resume."""
    folder = inside / "ray-lost"
    folder.mkdir()
    opts = options(make_candidates(folder), ray="auto", gpus="1")
    pool = open_workers(OP, "cpu", opts)
    watch = Watch()
    killer = Killer(lambda: pool, "r01-c01", lambda w: ray.kill(w.actor), after_s=0.5)
    killer.start()
    try:
        with pytest.raises(KernelgenError, match="resumable: kernelgen optimize"):
            optimize_op(OP, opts, watch, pool=pool)
    finally:
        pool.close()
    assert killer.killed is not None
    run = json.loads((inside / "evaluations" / OP / watch.run.id / "run.json").read_text())
    assert run["state"] == "failed" and "every worker died" in run["stopped"]
    assert record(inside, watch.run.id, "r01-c01")["status"] == "pending"


def test_ray_cluster_too_small_is_one_line(inside: Path, cluster) -> None:
    result = CliRunner().invoke(
        app, ["optimize", OP, "--device", "cpu", "--ray", "auto", "--gpus", str(FAKE_GPUS + 1)]
    )
    assert result.exit_code == 2, result.output
    assert f"the Ray cluster at auto has {FAKE_GPUS} GPUs" in result.output


def test_bad_ray_address_is_one_line(inside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelgen.run import ray_pool

    # As a driver not yet joined to any cluster would see it.
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    for address, want in [
        ("127.0.0.1:1", "--ray 127.0.0.1:1: no Ray cluster answers there"),
        ("nowhere", "--ray nowhere: expected auto, HOST:PORT or ray://HOST:PORT"),
    ]:
        with pytest.raises(ray_pool.UsageError, match=want):
            ray_pool.connect(address)


def test_without_ray_says_how_to_install(inside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    result = CliRunner().invoke(app, ["optimize", OP, "--device", "cpu", "--ray", "auto"])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'kernelgen[ray]'" in lines[0], result.output
