"""Fixtures of the worker-pool tests (test_workers.py, test_ray_pool.py): one small project and
one single-worker run of it per session, which every pool run's verdicts are held against."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from workers_helpers import OP, Watch, make_candidates, make_project, options, verdicts  # noqa: E402


@pytest.fixture(scope="session")
def small_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("workers"))


@pytest.fixture()
def inside(small_project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(small_project)
    monkeypatch.setenv("KERNELGEN_ROOT", str(small_project))
    return small_project


@pytest.fixture(scope="session")
def one_worker(small_project: Path) -> dict[str, tuple]:
    """The run judged by the one judge of the single-worker loop (no --gpus)."""
    from kernelgen.run.optimize import optimize_op

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(small_project)
        mp.setenv("KERNELGEN_ROOT", str(small_project))
        folder = small_project / "one"
        folder.mkdir()
        summary = optimize_op(OP, options(make_candidates(folder)), Watch())
    found = verdicts(small_project, summary.run_id)
    assert {k: v[:2] for k, v in found.items()} == {
        "r01-c01": ("accepted", None),
        "r01-c02": ("rejected", "incorrect"),
        "r01-c03": ("rejected", "static"),
        "r01-c04": ("accepted", None),
        "r01-c05": ("accepted", None),  # a_good again: not judged twice
    }
    assert found["r01-c05"][5] is True
    return found
