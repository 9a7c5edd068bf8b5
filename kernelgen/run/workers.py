"""A pool of evaluation workers, each bound to one device, fed from one queue of jobs; what they
find flows back to the parent, the one writer of the run's store.

`--gpus N|all` starts one local worker per GPU (a process of its own, CUDA_VISIBLE_DEVICES naming
its GPU; on CPU, N interpreter workers); `--ray ADDRESS` makes them Ray actors (ray_pool.py),
the same interface. A worker judges one job at a time in sandboxes of its own (station.py).

Faults: a worker that dies mid-job loses nothing. Its job goes back to the front of the queue
for another worker (the candidate's record stays pending meanwhile); a job that has taken down
MAX_ATTEMPTS workers is lost (WorkerLost: the loop records it as a crash), and when no worker is
left the pool is lost (PoolLost): the run stops there, resumable.
"""

from __future__ import annotations

import functools
import itertools
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import Environment
from kernelgen.run.station import Job, Outcome, Ready, StationConfig

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


# ---- --gpus ---------------------------------------------------------------------------------


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES would name them to a child."""
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    named = os.environ.get("CUDA_VISIBLE_DEVICES")
    if named is not None and named.strip():
        ids = [d.strip() for d in named.split(",") if d.strip()]
        return ids[:count]
    return [str(i) for i in range(count)]


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


def local_slots(value: str, device: str) -> list[str]:
    """CUDA_VISIBLE_DEVICES of each local worker for `--gpus value`: one GPU each on CUDA; on
    CPU, N interpreter workers that see no GPU ('' each)."""
    n = parse_gpus(value, device)
    if device != "cuda":
        if n is None:
            raise UsageError(
                "--gpus all: no GPU is used on --device cpu; --gpus N starts N interpreter workers"
            )
        return [""] * n
    gpus = visible_gpus()
    if not gpus:
        raise UsageError(f"--gpus {value}: no CUDA device is visible here")
    if n is None:
        return gpus
    if n > len(gpus):
        seen = os.environ.get("CUDA_VISIBLE_DEVICES")
        where = f" (CUDA_VISIBLE_DEVICES={seen})" if seen is not None else ""
        plural = "GPU is" if len(gpus) == 1 else "GPUs are"
        raise UsageError(f"--gpus {value}: only {len(gpus)} {plural} visible here{where}")
    return gpus[:n]


# ---- a local worker -------------------------------------------------------------------------


class LocalWorker:
    """A `python -m kernelgen.run.station` process and its two protocol pipes."""

    def __init__(self, name: str, visible: str, config: StationConfig, folder: Path):
        from kernelgen.verify.sandbox import _child_setup

        self.name = name
        folder.mkdir(parents=True, exist_ok=True)
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible, "KERNELGEN_ROOT": config.root}
        self._err = open(folder / f"{name}.stderr", "wb")  # noqa: SIM115 - lives as the worker
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kernelgen.run.station", name, str(req_r), str(rep_w)],
            stdin=subprocess.DEVNULL,
            stdout=self._err,
            stderr=self._err,
            env=env,
            pass_fds=(req_r, rep_w),
            # Dies with the parent (kill -9 included): its runners die with it in turn.
            preexec_fn=functools.partial(_child_setup, os.getpid(), None),
        )
        os.close(req_r)
        os.close(rep_w)
        self._inbox = os.fdopen(self._rep_r, "r", encoding="utf-8")
        self.folder = folder
        self._send(config.model_dump_json())
        self.pid = self.proc.pid
        self.gpu: str | None = None
        self.environment: Environment | None = None  # type: ignore[assignment]

    def _send(self, line: str) -> None:
        try:
            os.write(self._req_w, (line + "\n").encode())
        except OSError:
            raise WorkerDied(f"{self.name}: its pipe is closed") from None

    def _line(self) -> str:
        line = self._inbox.readline()  # blocks until the worker answers or dies (EOF)
        if not line:
            code = self.proc.wait()
            raise WorkerDied(f"{self.name} exited ({code}): {self.stderr_tail()}")
        return line

    def start(self) -> Ready:
        ready = Ready.model_validate_json(self._line())
        self.gpu, self.environment = ready.gpu, ready.environment
        return ready

    def call(self, job: Job) -> Outcome:
        self._send(job.model_dump_json())
        return Outcome.model_validate_json(self._line())

    def stderr_tail(self) -> str:
        try:
            text = (self.folder / f"{self.name}.stderr").read_bytes()[-2000:]
        except OSError:
            return ""
        lines = [ln for ln in text.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else "no output"

    def close(self) -> None:
        for fd in (self._req_w,):
            try:
                os.close(fd)  # EOF: the worker closes its evaluator and exits
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._inbox.close()
        self._err.close()


def worker_names(slots: list[str]) -> list[str]:
    """gpu<N> for a worker on GPU N, cpu<i> for the i-th slot on the CPU; a second and third
    worker on one GPU (scripts/shared_workers.py) are gpu<N>.1, gpu<N>.2. Named before they start:
    a worker puts its name on every outcome it sends."""
    base = [f"gpu{v}" if v else f"cpu{i}" for i, v in enumerate(slots)]
    return [b if base.index(b) == i else f"{b}.{base[:i].count(b)}" for i, b in enumerate(base)]


def start_local(config: StationConfig, slots: list[str], folder: Path) -> list[LocalWorker]:
    """One worker per slot, started side by side (each imports torch: seconds)."""
    names = worker_names(slots)
    workers = [LocalWorker(n, v, config, folder) for n, v in zip(names, slots, strict=True)]
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        for w in workers:
            _start_within(w, deadline)
    except BaseException:
        for w in workers:
            w.proc.kill()
        raise
    return workers


def _start_within(worker: LocalWorker, deadline: float) -> None:
    result: list[Ready | BaseException] = []
    t = threading.Thread(target=lambda: result.append(_try(worker.start)), daemon=True)
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    if not result:
        raise KernelgenError(f"worker {worker.name} did not start in {START_TIMEOUT_S:.0f} s")
    if isinstance(result[0], BaseException):
        raise KernelgenError(f"worker {worker.name} failed to start: {result[0]}")


def _try(fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except BaseException as e:  # noqa: BLE001 - handed to the caller
        return e


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


# ---- making a pool --------------------------------------------------------------------------


def open_pool(
    config: StationConfig,
    gpus: str | None = None,
    ray: str | None = None,
    folder: Path | None = None,
) -> Pool:
    """The pool `--gpus` / `--ray` ask for: Ray actors on a cluster, or local workers."""
    if ray is not None:
        from kernelgen.run import ray_pool  # only here: Ray is an optional extra

        return ray_pool.open_ray_pool(config, ray, gpus)
    assert gpus is not None
    import tempfile

    slots = local_slots(gpus, config.device)
    own = folder is None
    folder = folder or Path(tempfile.mkdtemp(prefix="kernelgen-workers-"))
    workers = start_local(config, slots, folder)
    pool = Pool(workers, f"{len(workers)} local workers")  # type: ignore[arg-type]
    if own:
        import shutil

        pool.on_close.append(lambda: shutil.rmtree(folder, ignore_errors=True))
    return pool
