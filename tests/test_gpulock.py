"""The GPU lock (kernelgen/gpulock.py) between processes: a timed section (exclusive) excludes a
shared one, shared ones overlap, a waiting timing goes before the shared takers that come after
it, waits are logged per operator, and without KERNELGEN_GPU_LOCK nothing is locked."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelgen import gpulock

# A process that takes the lock, says so, and holds it until told to let go.
HOLDER = """
import sys, time
from pathlib import Path
from kernelgen import gpulock
mode, folder = sys.argv[1], Path(sys.argv[2])
(folder / "asking").write_text("")
with getattr(gpulock, mode)("holder", "op_held"):
    (folder / "got").write_text("")
    while not (folder / "stop").exists():
        time.sleep(0.01)
    (folder / "released").write_text("")
"""
WAIT_S = 20.0
BLOCKED_S = 0.5  # long enough for a flock that would be granted to be granted


class Holder:
    def __init__(self, tmp: Path, name: str, mode: str):
        self.folder = tmp / name
        self.folder.mkdir()
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, mode, str(self.folder)])

    def has(self, what: str) -> bool:
        return (self.folder / what).exists()

    def wait_for(self, what: str) -> None:
        end = time.monotonic() + WAIT_S
        while not self.has(what):
            assert self.proc.poll() is None, f"the holder exited before {what!r}"
            assert time.monotonic() < end, f"the holder never reached {what!r}"
            time.sleep(0.01)

    def release(self) -> None:
        (self.folder / "stop").write_text("")
        assert self.proc.wait(timeout=WAIT_S) == 0


class Taker(threading.Thread):
    """This process taking the lock in a thread, to see whether it is granted yet."""

    def __init__(self, mode: str):
        super().__init__(daemon=True)
        self.mode = mode
        self.got = threading.Event()
        self.waited: float | None = None
        self.let_go = threading.Event()

    def run(self) -> None:
        with getattr(gpulock, self.mode)("taker", "op_taker") as waited:
            self.waited = waited
            self.got.set()
            self.let_go.wait(WAIT_S)


@pytest.fixture()
def lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "gpu.lock"))
    monkeypatch.setenv(gpulock.LOG_ENV, str(tmp_path / "waits"))
    yield tmp_path


def test_a_timed_section_excludes_a_shared_one(lock: Path) -> None:
    timing = Holder(lock, "timing", "exclusive")
    timing.wait_for("got")
    judge = Taker("shared")
    judge.start()
    assert not judge.got.wait(BLOCKED_S)  # the GPU is the timing's alone
    timing.release()
    assert judge.got.wait(WAIT_S)
    judge.let_go.set()
    judge.join()
    assert judge.waited is not None and judge.waited >= BLOCKED_S
    # Each flock taken is a line of its operator's log; a suite sums them per problem.
    (line,) = [json.loads(x) for x in (lock / "waits" / "op_taker.jsonl").read_text().splitlines()]
    assert line["mode"] == "shared" and line["what"] == "taker"
    assert gpulock.waited(lock / "waits", "op_taker") == pytest.approx(judge.waited, abs=1e-3)
    held = json.loads((lock / "waits" / "op_held.jsonl").read_text())
    assert held["mode"] == "exclusive" and held["held_s"] >= BLOCKED_S


def test_shared_sections_overlap_and_a_timing_waits_for_them(lock: Path) -> None:
    judge = Holder(lock, "judge", "shared")
    judge.wait_for("got")
    other = Taker("shared")
    other.start()
    assert other.got.wait(WAIT_S) and not judge.has("released")  # side by side
    timing = Taker("exclusive")
    timing.start()
    assert not timing.got.wait(BLOCKED_S)
    other.let_go.set()
    other.join()
    assert not timing.got.wait(BLOCKED_S)  # the other process's judge holds it still
    judge.release()
    assert timing.got.wait(WAIT_S)
    timing.let_go.set()
    timing.join()


def test_a_waiting_timing_goes_before_the_judges_after_it(lock: Path) -> None:
    """flock grants a shared lock beside a waiting exclusive one: without the gate, judges that
    keep overlapping would keep a timing out."""
    first = Holder(lock, "first", "shared")
    first.wait_for("got")
    timing = Holder(lock, "timing", "exclusive")
    timing.wait_for("asking")
    time.sleep(BLOCKED_S)  # the timing is at the lock now, holding the gate
    later = Taker("shared")
    later.start()
    assert not later.got.wait(BLOCKED_S)  # behind the timing, though only judges hold the lock
    first.release()
    timing.wait_for("got")
    assert not later.got.wait(BLOCKED_S)
    timing.release()
    assert later.got.wait(WAIT_S)
    later.let_go.set()
    later.join()


def test_without_the_variable_nothing_is_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(gpulock.LOCK_ENV, raising=False)
    monkeypatch.setenv(gpulock.LOG_ENV, str(tmp_path / "waits"))
    timing = Holder(tmp_path, "timing", "exclusive")
    timing.wait_for("got")
    with gpulock.exclusive("another timing", "op") as waited:
        assert waited == 0.0 and not timing.has("released")
    timing.release()
    assert list(tmp_path.iterdir()) == [tmp_path / "timing"]  # no lock file, no log


def test_shared_sections_nest_in_one_process_and_a_timing_inside_one_is_refused(
    lock: Path,
) -> None:
    with gpulock.shared("outer", "op"):
        with gpulock.shared("a truth drawn again", "op") as waited:
            assert waited == 0.0  # this process holds it already: no second flock
        with pytest.raises(RuntimeError, match="exclusive inside a section"):
            with gpulock.exclusive("timing", "op"):
                pass
    (line,) = (lock / "waits" / "op.jsonl").read_text().splitlines()
    assert json.loads(line)["what"] == "outer"


def test_one_limit_case_at_a_time_on_the_host_inside_a_judge_s_shared_section(
    lock: Path,
) -> None:
    """Two judges share the GPU, and only one draws a limit case's truth at a time; a timing
    waits for their shared sections, never for the limit lock itself."""
    other = Holder(lock, "other_judge", "limit_case")
    other.wait_for("got")
    with gpulock.shared("judging", "op"):
        drawing = Taker("limit_case")
        drawing.start()
        assert not drawing.got.wait(BLOCKED_S)  # the other judge is drawing one
        other.release()
        assert drawing.got.wait(WAIT_S)
        drawing.let_go.set()
        drawing.join()
    assert drawing.waited is not None and drawing.waited >= BLOCKED_S
    lines = [json.loads(x) for x in (lock / "waits" / "op_taker.jsonl").read_text().splitlines()]
    assert [x["mode"] for x in lines] == ["limit"]
    with gpulock.limit_case("alone", "op"):
        with gpulock.exclusive("a timing beside it", "op") as waited:
            assert waited < BLOCKED_S  # the limit lock is not the GPU lock


def test_without_the_variable_limit_cases_are_not_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(gpulock.LOCK_ENV, raising=False)
    with gpulock.limit_case("one", "op") as first, gpulock.limit_case("two", "op") as second:
        assert first == second == 0.0
    assert list(tmp_path.iterdir()) == []


def test_a_limit_case_gives_its_cached_gpu_blocks_back_as_it_ends(
    lock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch keeps freed blocks reserved: a judge that kept a limit case's 37 GB so left the
    next problem's timing 4 GB. The outermost limit section empties the cache as it ends, an
    inner one does not, and a process without CUDA started is left alone."""
    import types

    emptied: list[str] = []
    started = [True]
    cuda = types.SimpleNamespace(
        is_initialized=lambda: started[0], empty_cache=lambda: emptied.append("emptied")
    )
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    with gpulock.limit_case("outer", "op"):
        with gpulock.limit_case("inner", "op"):
            pass
        assert emptied == []
    assert emptied == ["emptied"]
    started[0] = False
    with gpulock.limit_case("no cuda", "op"):
        pass
    assert emptied == ["emptied"]
