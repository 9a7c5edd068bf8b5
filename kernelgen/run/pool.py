"""The pool of evaluation workers: one queue of jobs, each worker bound to one device and taking
one job at a time; what they find flows back to the parent, the one writer of the run's store.
Its workers are local processes (workers.py) or Ray actors (ray_pool.py), behind one protocol.

Faults: a worker that dies mid-job loses nothing. Its job goes back to the front of the queue
for another worker (the candidate's record stays pending meanwhile); a job that has taken down
MAX_ATTEMPTS workers is lost (WorkerLost: the loop records it as a crash), and when no worker is
left the pool is lost (PoolLost): the run stops there, resumable.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import Environment
from kernelgen.run.station import Job, Outcome

START_TIMEOUT_S = 300.0  # torch import on a loaded host, and CUDA start
MAX_ATTEMPTS = 3


class WorkerDied(Exception):
    """Raised by Worker.call: the worker is gone, its job unanswered."""


class WorkerLost(KernelgenError):
    """A job that took down MAX_ATTEMPTS workers."""


class PoolLost(KernelgenError):
    """No worker is left (or none that may take a job): the run stops, resumable."""


class Worker(Protocol):
    name: str
    gpu: str | None
    environment: Environment

    def call(self, job: Job) -> Outcome:
        """The job's outcome; raises WorkerDied when the worker is gone."""
        ...

    def close(self) -> None: ...


def parse_gpus(value: str, device: str) -> int | None:
    """`--gpus N|all` as a worker count; None for 'all'. One clear line for a bad value."""
    text = value.strip().lower()
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise UsageError(
            f"--gpus {value}: expected a number of GPUs (1, 2, ...) or 'all'"
        ) from None
    if n < 1:
        raise UsageError(f"--gpus {value}: expected at least 1 GPU, or 'all'")
    return n


# ---- the pool -------------------------------------------------------------------------------


@dataclass
class _Item:
    job: Job
    future: Future[Outcome] = field(default_factory=Future)
    attempts: int = 0
    lost_on: list[str] = field(default_factory=list)


class Pool:
    """Workers fed from one queue, one job each at a time; `run` blocks a caller's thread until
    its job's outcome is back, so the loop judges as many candidates at once as there are
    workers by judging each chain of candidates in a thread of its own."""

    def __init__(self, workers: list[Worker], what: str = "the workers"):
        if not workers:
            raise PoolLost(f"{what}: no worker started")
        self.workers = list(workers)
        self.what = what
        self._queue: deque[_Item] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._alive = {w.name for w in workers}
        self._busy: dict[str, tuple[Job, float]] = {}
        self._ids = itertools.count(1)
        self.deaths: list[str] = []
        self.requeued: list[str] = []  # candidate ids (or job ids) given to another worker
        self.lost_reason: str | None = None
        self.on_close: list[Callable[[], None]] = []  # e.g. the local workers' log folder
        self._threads = [
            threading.Thread(target=self._serve, args=(w,), name=f"pool-{w.name}", daemon=True)
            for w in workers
        ]
        for t in self._threads:
            t.start()

    # ---- what callers see --------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._alive)

    @property
    def environment(self) -> Environment:
        """The first worker's: where the run's figures are measured (its GPU model)."""
        return self.workers[0].environment

    def count(self, gpu: str | None = None) -> int:
        """Live workers with this GPU model (any, for None)."""
        return sum(
            1 for w in self.workers if w.name in self._alive and (gpu is None or w.gpu == gpu)
        )

    def busy(self) -> dict[str, tuple[Job, float]]:
        """Worker name -> (job, seconds on it), for the jobs in flight now."""
        with self._cond:
            now = time.monotonic()
            return {n: (j, now - t) for n, (j, t) in self._busy.items()}

    def worker(self, name: str) -> Worker:
        return next(w for w in self.workers if w.name == name)

    def job(self, kind: str, **fields: object) -> Job:
        return Job(kind=kind, id=f"j{next(self._ids)}", **fields)  # type: ignore[arg-type]

    def submit(self, job: Job) -> Future[Outcome]:
        item = _Item(job)
        with self._cond:
            if self.lost_reason is not None:
                raise PoolLost(self.lost_reason)
            self._check_takeable(job)
            self._queue.append(item)
            self._cond.notify_all()
        return item.future

    def run(self, job: Job) -> Outcome:
        outcome = self.submit(job).result()
        if outcome.error is not None:
            raise KernelgenError(f"worker {outcome.worker}: {outcome.error}")
        return outcome

    def close(self) -> None:
        with self._cond:
            self._closed = True
            for item in self._queue:
                item.future.cancel()
            self._queue.clear()
            self._cond.notify_all()
        for w in self.workers:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - closing what may be dead already
                pass
        for fn in self.on_close:
            fn()

    # ---- inside ------------------------------------------------------------------------------

    def _check_takeable(self, job: Job) -> None:
        if job.gpu is None:
            return
        if not any(w.gpu == job.gpu for w in self.workers if w.name in self._alive):
            raise PoolLost(f"{self.what}: no live worker has a {job.gpu} for {job.kind}")

    def _next_for(self, worker: Worker) -> _Item | None:
        for item in self._queue:
            if item.job.gpu is None or item.job.gpu == worker.gpu:
                self._queue.remove(item)
                return item
        return None

    def _serve(self, worker: Worker) -> None:
        while True:
            with self._cond:
                item = None
                while not self._closed and (item := self._next_for(worker)) is None:
                    self._cond.wait()
                if self._closed or item is None:
                    return
                self._busy[worker.name] = (item.job, time.monotonic())
            try:
                outcome = worker.call(item.job)
            except WorkerDied as e:
                self._died(worker, item, str(e))
                return
            except BaseException as e:  # noqa: BLE001 - the caller's, not this thread's
                with self._cond:
                    self._busy.pop(worker.name, None)
                item.future.set_exception(e)
                continue
            with self._cond:
                self._busy.pop(worker.name, None)
            item.future.set_result(outcome)

    def _died(self, worker: Worker, item: _Item, why: str) -> None:
        with self._cond:
            self._busy.pop(worker.name, None)
            self._alive.discard(worker.name)
            self.deaths.append(worker.name)
            item.attempts += 1
            item.lost_on.append(worker.name)
            if self._closed:
                item.future.cancel()
                return
            if item.attempts >= MAX_ATTEMPTS:
                item.future.set_exception(
                    WorkerLost(
                        f"{item.job.candidate or item.job.id}: {item.attempts} workers died "
                        f"while judging it ({', '.join(item.lost_on)})"
                    )
                )
            else:
                self._queue.appendleft(item)  # next in line for the first worker free
                self.requeued.append(item.job.candidate or item.job.id)
            if not self._alive:
                self.lost_reason = f"{self.what}: every worker died (last: {why})"
                for waiting in self._queue:
                    waiting.future.set_exception(PoolLost(self.lost_reason))
                self._queue.clear()
            else:
                # A job no live worker may take (its GPU model is gone) fails now, not never.
                for waiting in list(self._queue):
                    try:
                        self._check_takeable(waiting.job)
                    except PoolLost as e:
                        self._queue.remove(waiting)
                        waiting.future.set_exception(e)
            self._cond.notify_all()
