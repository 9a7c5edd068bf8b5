"""The candidate's process as the judge sees it: started warm, asked one request at a time, each
with its own deadline, killed whole when it overruns, crashes or grows past its memory cap.

A runner is a fresh interpreter (not a fork: the judge's CUDA state and imports stay out of it) in
its own session, so a kill takes whatever threads or processes the candidate started with it.
`Pool` keeps a few runners started ahead (torch imported, CUDA initialised, no candidate loaded),
so a candidate does not pay process and CUDA start; each runner serves one candidate and dies.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pydantic import BaseModel

from kernelgen.records import Category
from kernelgen.verify.protocol import Exit, Reply, Request
from kernelgen.verify.sandbox import (
    _child_setup,
    _describe_exit,
    _out_of_memory,
    _rss_bytes,
    _tail,
)

START_TIMEOUT_S = 180.0  # torch + CUDA start on a loaded host; never a candidate's fault
_POLL_S = 0.05


class Dead(BaseModel):
    """Why there is no reply: the runner overran, ran out of memory or died."""

    category: Category
    reason: str
    stderr_tail: str = ""


class Runner:
    """One sandboxed runner process and its two protocol pipes."""

    def __init__(
        self,
        device: str,
        env: dict[str, str],
        memory_mb: int,
        folder: Path,
        wrapper: list[str] | None = None,
    ):
        self.device = device
        self.memory_mb = memory_mb
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        cap = memory_mb * 1024 * 1024
        self._out = open(folder / "stdout", "wb")  # noqa: SIM115 - lives as long as the child
        self._err = open(folder / "stderr", "wb")  # noqa: SIM115
        command = [sys.executable, "-m", "kernelgen.verify.runner", device, str(req_r), str(rep_w)]
        self.proc = subprocess.Popen(
            [*(wrapper or []), *command],
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            env=env,
            cwd=os.getcwd(),
            pass_fds=(req_r, rep_w),
            start_new_session=True,
            preexec_fn=functools.partial(
                _child_setup, os.getpid(), cap if device == "cpu" and not wrapper else None
            ),
        )
        os.close(req_r)
        os.close(rep_w)
        self._buffer = b""
        self.started = time.monotonic()
        self._ready: Reply | Dead | None = None

    # ---- talking -----------------------------------------------------------------------------

    def ready(self, timeout_s: float = START_TIMEOUT_S) -> Reply | Dead:
        """The runner's first line says it is warm."""
        if self._ready is None:
            self._ready = self._receive(timeout_s, what="start")
        return self._ready

    def ask(self, request: Request, deadline_s: float, what: str = "the call") -> Reply | Dead:
        self.send(request)
        return self.receive(deadline_s, what)

    def send(self, request: Request) -> None:
        """Queue a request without waiting: the runner serves them in order, so the judge can
        check one answer while the runner computes the next (`receive` takes them in turn)."""
        try:
            os.write(self._req_w, (request.model_dump_json() + "\n").encode())
        except OSError:  # the runner is gone: _receive says how it died
            pass

    def receive(self, deadline_s: float, what: str = "the call") -> Reply | Dead:
        """The answer to the oldest request sent and not yet answered."""
        start = self.ready()
        if isinstance(start, Dead):
            return start
        return self._receive(deadline_s, what)

    def _receive(self, deadline_s: float, what: str) -> Reply | Dead:
        end = time.monotonic() + deadline_s
        cap = self.memory_mb * 1024 * 1024
        while b"\n" not in self._buffer:
            left = end - time.monotonic()
            if left <= 0:
                return self._kill(
                    "timeout", f"no answer to {what} after {deadline_s:.0f} s (killed)"
                )
            if self.device == "cpu" and _rss_bytes(self.proc.pid) > cap:
                return self._kill("oom", f"resident memory above the {self.memory_mb} MiB cap")
            ready, _, _ = select.select([self._rep_r], [], [], min(left, _POLL_S * 4))
            if not ready:
                continue
            chunk = os.read(self._rep_r, 1 << 20)
            if not chunk:  # EOF: the runner died without answering
                code = self.proc.wait()
                return self._died(code)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            return Reply.model_validate_json(line)
        except ValueError:
            return self._kill("crash", "the runner's answer was not a protocol message")

    # ---- ending ------------------------------------------------------------------------------

    def _died(self, code: int) -> Dead:
        stderr = self.stderr()
        self.close()
        if oom := _out_of_memory(stderr):
            return Dead(category="oom", reason=oom, stderr_tail=stderr)
        return Dead(category="crash", reason=_describe_exit(code, stderr), stderr_tail=stderr)

    def _kill(self, category: Category, reason: str) -> Dead:
        self.close()
        return Dead(category=category, reason=reason, stderr_tail=self.stderr())

    # The child writes these files itself; this process only reads them back.
    def stderr(self) -> str:
        return _tail(self.folder / "stderr")

    def stdout(self) -> str:
        return _tail(self.folder / "stdout", 20000)

    def finish(self, timeout_s: float) -> int | None:
        """Ask the runner to exit and wait for it (a sanitizer reports at exit)."""
        try:
            os.write(self._req_w, (Exit().model_dump_json() + "\n").encode())
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.close()
            return None

    def stop(self) -> None:
        """Kill it from another thread: the one waiting on its answer sees it die (and closes)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        # Whatever the candidate started in the runner's session goes down with it.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for fd in (self._req_w, self._rep_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._req_w = self._rep_r = -1
        self._out.close()
        self._err.close()


class Pool:
    """Runners started ahead, one candidate each. `take` hands one over and starts its
    replacement at once, so the next candidate finds one warm."""

    def __init__(
        self,
        device: str,
        env: dict[str, str],
        memory_mb: int,
        size: int,
        root: Path | None = None,
        replenish: bool = True,
    ):
        self.device, self.env, self.memory_mb, self.size = device, env, memory_mb, size
        self.replenish = replenish
        self.root = root or Path(tempfile.mkdtemp(prefix="kernelgen-runners-"))
        self._idle: list[Runner] = []
        self._count = 0
        self._lock = threading.Lock()
        for _ in range(size):
            self._idle.append(self._start())

    def _start(self) -> Runner:
        with self._lock:
            self._count += 1
            n = self._count
        return Runner(self.device, self.env, self.memory_mb, self.root / f"runner-{n}")

    def take(self) -> Runner:
        runner = self._idle.pop(0) if self._idle else self._start()
        if self.replenish:
            self._idle.append(self._start())
        return runner

    def take_many(self, n: int) -> list[Runner]:
        return [self.take() for _ in range(n)]

    def grow(self, size: int) -> None:
        """At least `size` runners from now on, the new ones started now."""
        for _ in range(size - self.size):
            self._idle.append(self._start())
        self.size = max(self.size, size)

    def close(self) -> None:
        for runner in self._idle:
            runner.close()
        self._idle.clear()
