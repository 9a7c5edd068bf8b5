"""One GPU, several jobs: a host-wide lock so that nothing runs on the GPU while something is timed.

A timed measurement (the benchmark's rounds and its method probe, the device's ceilings,
KernelBench's timed trials) holds the lock exclusive; the judge's GPU work (drawing truths, a
candidate's calls, KernelBench's correctness trials) holds it shared, so judges overlap one another
and never a timing. Compiles hold nothing: they keep the CPU busy, not the GPU.

The lock is fcntl.flock on the file KERNELGEN_GPU_LOCK names (`kernelgen suite kernelbench --jobs
N` names one for its jobs); without the variable every section is free and nothing changes. Linux
grants a shared flock while an exclusive one waits, so judges that keep overlapping would keep a
timing out for good: every taker first holds a second file, the gate (`<lock>.gate`), exclusive
until it holds the lock. A timing that waits holds the gate, and the judges that come after it
queue behind it.

The shared sections of one process are one flock, taken by the first and given back by the last
(threads drawing truths side by side, a case grid that draws a dropped truth again): a section
nested in another costs nothing and cannot queue behind a timing that waits for its own process.
A thread that asks for the lock exclusive while it holds it (or shared while it holds it
exclusive) would wait for itself: that is a RuntimeError.

A limit case (kernelgen/verify/limits.py: inputs of 4-12 GiB, torch's answer on all of them, the
candidate's outputs) is drawn and judged by one judge of the host at a time: `limit_case` holds
a flock of its own, `<lock>.limits`, exclusive. It is taken inside the judge's shared section
and never waited on by a timing, so it adds no wait to the GPU lock's order.

Where KERNELGEN_GPU_LOCK_LOG names a folder, each flock taken is a JSON line in `<op>.jsonl`
there (mode, what, waited_s, held_s, pid), so a suite tells a problem's waiting from its work.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

LOCK_ENV = "KERNELGEN_GPU_LOCK"
LOG_ENV = "KERNELGEN_GPU_LOCK_LOG"
# The log of takers that name no operator (the device's ceilings).
HOST_LOG = "_host"
# Read by kernelgen/verify/truth.py and ahead.py, set by kernelgen/verify/sharing.py.
TRUTH_SHARE_ENV = "KERNELGEN_TRUTH_SHARE"
COMPILERS_ENV = "KERNELGEN_COMPILE_WORKERS"

Mode = Literal["shared", "exclusive", "limit"]


def host_lock() -> Path:
    """The lock of judges sharing this host's GPU where none is named (verify/sharing.py)."""
    return Path(tempfile.gettempdir()) / "kernelgen-gpu.lock"


def lock_path() -> Path | None:
    """The lock file named by KERNELGEN_GPU_LOCK, or None: no lock."""
    value = os.environ.get(LOCK_ENV)
    return Path(value) if value else None


def log_file(folder: Path, op: str | None) -> Path:
    return folder / f"{op or HOST_LOG}.jsonl"


@dataclass
class _Shared:
    """This process's shared hold of one lock file."""

    mutex: threading.Lock = field(default_factory=threading.Lock)
    count: int = 0
    handle: IO[str] | None = None
    since: float = 0.0
    waited: float = 0.0
    what: str = ""
    op: str | None = None


_shared: dict[Path, _Shared] = {}
_shared_guard = threading.Lock()
_mine = threading.local()  # this thread's holds: {"shared": n, "exclusive": n, "limit": n}


def _held(mode: Mode) -> int:
    return getattr(_mine, mode, 0)


def _count(mode: Mode, step: int) -> None:
    setattr(_mine, mode, _held(mode) + step)


def _take(path: Path, flag: int) -> IO[str]:
    """The lock file open and flocked with `flag`, through the gate."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")  # noqa: SIM115 - held past this function, closed by the caller
    try:
        with open(path.with_name(path.name + ".gate"), "a+") as gate:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(handle, flag)
    except BaseException:
        handle.close()
        raise
    return handle


def _record(op: str | None, mode: Mode, what: str, waited: float, held: float) -> None:
    folder = os.environ.get(LOG_ENV)
    if not folder:
        return
    line = {
        "mode": mode,
        "what": what,
        "waited_s": round(waited, 4),
        "held_s": round(held, 4),
        "pid": os.getpid(),
        "at": time.time(),
    }
    path = log_file(Path(folder), op)
    path.parent.mkdir(parents=True, exist_ok=True)
    # One write of one short line in append mode: lines of several processes do not mix.
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


@contextmanager
def _holding(mode: Mode, what: str, op: str | None, start: float) -> Iterator[float]:
    """A flock just taken (asked for at `start`), held by this thread for the block: counted
    as this thread's, and logged with its wait and its hold when given back."""
    got = time.monotonic()
    _count(mode, 1)
    try:
        yield got - start
    finally:
        _count(mode, -1)
        _record(op, mode, what, got - start, time.monotonic() - got)


@contextmanager
def exclusive(what: str, op: str | None = None) -> Iterator[float]:
    """Hold the GPU alone (a timed measurement); yields the seconds waited for it."""
    path = lock_path()
    if path is None:
        yield 0.0
        return
    if _held("shared") or _held("exclusive"):
        raise RuntimeError(f"GPU lock: {what} asks for it exclusive inside a section that holds it")
    start = time.monotonic()
    with _take(path, fcntl.LOCK_EX), _holding("exclusive", what, op, start) as waited:
        yield waited  # the flock given back as the file closes


@contextmanager
def shared(what: str, op: str | None = None) -> Iterator[float]:
    """Run on the GPU beside other shared holders, never beside a timing; yields the seconds
    waited (0 where this process held it already)."""
    path = lock_path()
    if path is None:
        yield 0.0
        return
    if _held("exclusive"):
        raise RuntimeError(f"GPU lock: {what} asks for it shared inside an exclusive section")
    with _shared_guard:
        state = _shared.setdefault(path, _Shared())
    waited = 0.0
    with state.mutex:
        if state.count == 0:
            start = time.monotonic()
            state.handle = _take(path, fcntl.LOCK_SH)
            state.since = time.monotonic()
            waited = state.since - start
            state.waited, state.what, state.op = waited, what, op
        state.count += 1
    _count("shared", 1)
    try:
        yield waited
    finally:
        _count("shared", -1)
        with state.mutex:
            state.count -= 1
            if state.count == 0 and state.handle is not None:
                state.handle.close()
                state.handle = None
                held = time.monotonic() - state.since
                _record(state.op, "shared", state.what, state.waited, held)


@contextmanager
def limit_case(what: str, op: str | None = None) -> Iterator[float]:
    """Hold a limit case's GBs as the host's only judge doing so: its truth's draw (a peak of
    about twice the case's bytes: the inputs, torch's copy of them and its answer) and the
    candidate's calls on it (their outputs as large). Yields the seconds waited; a thread that
    holds it already takes it again at no cost. Four cold judges holding theirs at once on an
    80 GB H100 crashed or rejected as out of memory seven of eleven shipped kernels
    (evaluations/logs/h100-20261205-sparse-attn-promote-cold-verdicts)."""
    path = lock_path()
    if path is None or _held("limit"):  # a thread that holds it takes it again for free
        _count("limit", 1)
        try:
            yield 0.0
        finally:
            _count("limit", -1)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        with open(path.with_name(path.name + ".limits"), "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # given back when the file closes
            with _holding("limit", what, op, start) as waited:
                yield waited
    finally:
        _give_back_cached()


def _give_back_cached() -> None:
    """Return this process's cached GPU blocks to the host as its limit case ends: freed
    tensors stay reserved by torch's allocator, and a judge keeping a limit case's 37 GB so
    left the next problem's timing 4 GB (evaluations/logs/h100-20261206-kernelbench-memory).
    Reads torch only where the process has it, so the lock stays free of the import."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def waited(folder: Path, op: str) -> float | None:
    """Seconds the operator's takers waited for the lock, from their log; None without one."""
    path = log_file(folder, op)
    if not path.is_file():
        return None
    total = 0.0
    for line in path.read_text().splitlines():
        try:
            total += float(json.loads(line)["waited_s"])
        except (ValueError, KeyError, TypeError):  # a line cut short by a kill
            continue
    return round(total, 3)
