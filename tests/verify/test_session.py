"""The runner pool's bookkeeping: what it starts, and when."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen.verify import session


class _Started:
    """Stands in for a runner process."""

    def __init__(self, device: str, env: dict[str, str], memory_mb: int, folder: Path):
        self.folder = folder

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "Runner", _Started)


def test_take_starts_the_replacement(tmp_path: Path) -> None:
    pool = session.Pool("cpu", {}, 1024, 2, tmp_path)
    first = pool.take()
    assert first.folder.name == "runner-1"
    assert [r.folder.name for r in pool._idle] == ["runner-2", "runner-3"]


def test_grow_starts_only_the_difference(tmp_path: Path) -> None:
    # A judge starts two compile runners for a source with few new specializations, and all
    # of them once the candidate's own runner is ready.
    pool = session.Pool("cpu", {}, 1024, 2, tmp_path, replenish=False)
    pool.grow(5)
    assert (pool.size, len(pool._idle)) == (5, 5)
    pool.grow(3)  # never shrinks
    assert (pool.size, len(pool._idle)) == (5, 5)
