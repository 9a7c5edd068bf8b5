"""Local evaluation workers: `--gpus N|all` starts one worker per GPU (a process of its own,
CUDA_VISIBLE_DEVICES naming its GPU; on CPU, N interpreter workers), and `open_pool` makes the
pool `--gpus` or `--ray` asks for (pool.py; Ray actors are ray_pool.py). A worker judges one
job at a time in sandboxes of its own (station.py).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import Environment
from kernelgen.run.pool import (
    START_TIMEOUT_S,
    Pool,
    PoolLost,
    WorkerDied,
    WorkerLost,
    parse_gpus,
)
from kernelgen.run.station import Job, Outcome, Ready, StationConfig

__all__ = ["Pool", "PoolLost", "WorkerLost", "open_pool", "start_local", "local_slots"]

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
