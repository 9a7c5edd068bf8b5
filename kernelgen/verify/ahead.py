"""Compile ahead: every Triton specialization that a set of argument layouts needs, compiled in
parallel by sandboxed compile-only runners into Triton's cache, before the GPU waits on it.

A compile-only runner runs the candidate's launcher with each launch turned into a compile
(Triton's warmup): the launcher code is the candidate's, so it runs sandboxed like any call, but
no kernel runs and no output is read. The judging runner, the benchmark and the tuner then only
load binaries from the cache. Values never matter to a compile, so a job is a layout (shapes,
strides, dtypes, scalars), not a tensor.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelgen import gpulock
from kernelgen.spec import BenchShape, OpSpec, TensorInput, resolve_dim
from kernelgen.verify.protocol import Compile, Failed, Load, TensorMeta
from kernelgen.verify.sandbox import sandbox_env
from kernelgen.verify.session import Dead, Pool, Runner

DEADLINE_S = 240.0  # one layout: a huge whole-row block can take minutes to compile
Layout = list[TensorMeta | float | int | bool]


@dataclass(eq=False)  # a job is itself: two of the same layout are two compiles
class Job:
    path: Path
    layout: Layout
    name: str  # the case or bench shape, for the report
    seconds: float | None = None  # how long its compile took, once done
    later: bool = False  # a bench shape's: after every case's, which the judge waits on
    done: threading.Event = field(default_factory=threading.Event)  # compiled, or missed
    miss: Miss | None = None


@dataclass
class Miss:
    """A job whose compile failed: the candidate's error, or why the runner gave no answer."""

    job: Job
    error: Failed | None
    dead: Dead | None


def workers() -> int:
    """Compile runners of one judge: the host's cores less two, at most 12; or
    KERNELGEN_COMPILE_WORKERS where several judges share the host (a suite's --jobs)."""
    given = os.environ.get(gpulock.COMPILERS_ENV)
    if given and given.isdigit():
        return max(1, int(given))
    return max(1, min(12, (os.cpu_count() or 2) - 2))


def compile_pool(
    memory_mb: int,
    size: int,
    root: Path,
    env: dict[str, str] | None = None,
    warm: bool = False,
    device: str = "cuda",
) -> Pool:
    """Compile-only runners. (On CPU there is nothing to compile: the interpreter's launches
    just run, which the protocol's tests use.)"""
    base = env if env is not None else sandbox_env(device)
    return Pool(device, {**base, "KERNELGEN_COMPILE_ONLY": "1"}, memory_mb, size, root, warm)


def _size(job: Job) -> int:
    """A compile's expected cost: a kernel sized to its input (a whole-row block) compiles
    longest for the largest one, so those go first and the short ones fill in behind them."""
    return max((a.storage for a in job.layout if isinstance(a, TensorMeta)), default=0)


class Feed:
    """The compile runners' one shared queue, open to jobs that become known while they work
    (a case's layout once its ground truth is drawn): each runner takes the next job as it
    finishes the last, and stops when the feed is closed and empty. Fixed shares left the wall
    time to the unluckiest share: 10 s where the slowest compile took 3.5, on the H200."""

    def __init__(self, jobs: list[Job] | None = None):
        self._queue = deque(sorted(jobs or [], key=_size, reverse=True))
        self._later: deque[Job] = deque()
        self._cv = threading.Condition()
        self._closed = False

    def put(self, job: Job) -> None:
        with self._cv:
            (self._later if job.later else self._queue).append(job)
            self._cv.notify()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    def promote(self, job: Job) -> None:
        """A later job that a case turns out to need (its layout a bench shape's): with the
        cases' now, if not taken yet."""
        with self._cv:
            if job in self._later:
                self._later.remove(job)
                job.later = False
                self._queue.append(job)

    def drop(self) -> None:
        """Close it with nothing left to take: the runners stop after the compile in hand."""
        with self._cv:
            self._queue.clear()
            self._later.clear()
            self._closed = True
            self._cv.notify_all()

    def take(self) -> Job | None:
        with self._cv:
            if not self._ready():
                return None
            return self._queue.popleft() if self._queue else self._later.popleft()

    def wait(self) -> bool:
        """Whether there is anything to compile: blocks until a job is put or the feed closes."""
        with self._cv:
            return self._ready()

    def _ready(self) -> bool:
        # Called with the lock held, so that a job seen here is still there for take's pop.
        while not self._queue and not self._later and not self._closed:
            self._cv.wait()
        return bool(self._queue or self._later)


def specialization(layout: Layout) -> str:
    """What of a layout a compile depends on: per tensor its dtype and shape (a launcher sizes
    its blocks from it), and for each stride and the data pointer only what Triton specializes
    on (equal to 1, divisible by 16); ints whole, floats not at all. Two runs' padded layouts
    differ in their padding (drawn per run), mostly not in this."""
    out: list[object] = []
    for m in layout:
        if isinstance(m, TensorMeta):
            size = getattr(torch, m.dtype).itemsize
            out.append(
                (
                    m.dtype,
                    m.shape,
                    [(s == 1, s % 16 == 0) for s in m.stride],
                    m.offset * size % 16 == 0,
                )
            )
        else:
            out.append("float" if isinstance(m, float) else m)
    return repr(out)


class Compiled:
    """The specializations one source has been compiled ahead for, kept in the Triton cache
    they went into: a later run of the same source (a seed, a kept candidate) compiles ahead
    only what is new, and with nothing new starts no compile runner. On the H200 a fresh judge
    of a cached seed started 12 compile runners to load 55 binaries, and their start held the
    judging runner back 13 s. Only the compile-ahead trusts this index: a specialization it
    wrongly calls done is compiled by the judging runner at its first call, within the call's
    compile allowance. Written by the judge (candidates cannot write files)."""

    def __init__(self, cache: Path, digest: str):
        self.path = cache / "kernelgen-ahead" / f"{digest}.json"
        try:
            self.keys: set[str] = set(json.loads(self.path.read_text()))
        except (OSError, ValueError, TypeError):  # none yet, or unreadable: compile it all
            self.keys = set()

    def new(self, job: Job) -> bool:
        return specialization(job.layout) not in self.keys

    def add(self, jobs: list[Job]) -> None:
        keys = self.keys | {specialization(j.layout) for j in jobs}
        if keys == self.keys:
            return
        self.keys = keys
        partial = self.path.with_suffix(f".{os.getpid()}.part")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(sorted(keys)))
            partial.replace(self.path)
        except OSError:  # a cache it cannot write to: the next run compiles ahead again
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)


def compile_ahead(
    spec: OpSpec,
    pool: Pool,
    jobs: list[Job] | Feed,
    runners: int | None = None,
    deadline_s: float = DEADLINE_S,
    replace_dead: bool = False,
    taken: list[Runner] | None = None,
) -> tuple[float, list[Miss]]:
    """Compile the jobs on the pool's runners, `runners` of them at most (a list: all known
    now; a Feed: until it is closed); returns the wall seconds and the jobs that failed. Each
    job is marked done (with its miss, if any) as it ends. A job past `deadline_s` is a miss
    whose runner is gone; with `replace_dead` (the tuner, whose budget per compile is short on
    purpose) a fresh runner takes over its share. `taken` gets the runners as they are taken,
    for a caller that may stop them (Background)."""
    n = min(pool.size, runners or pool.size)
    if isinstance(jobs, list):
        if not jobs:
            return 0.0, []
        feed, n = Feed(jobs), min(n, len(jobs))
        feed.close()
    else:
        feed = jobs
    start = time.monotonic()
    runners = pool.take_many(n)
    if taken is not None:
        taken.extend(runners)
    take = feed.take

    def missed(misses: list[Miss], job: Job, error: Failed | None, dead: Dead | None) -> None:
        job.miss = Miss(job, error, dead)
        misses.append(job.miss)
        job.done.set()

    def work(runner: Runner) -> list[Miss]:
        misses: list[Miss] = []
        loaded: Path | None = None
        try:
            while (job := take()) is not None:
                if job.path != loaded:  # each load re-imports the module: rare, one source
                    load = Load(path=str(job.path), entry=spec.name, arg_names=spec.arg_names)
                    reply = runner.ask(load, DEADLINE_S, f"loading {job.path.name}")
                    if isinstance(reply, Dead):  # this runner is gone; the others go on
                        missed(misses, job, None, reply)
                        return misses
                    if not reply.ok:
                        missed(misses, job, reply.error, None)
                        continue
                    loaded = job.path
                mark = time.monotonic()
                reply = runner.ask(Compile(layouts=[job.layout]), deadline_s, job.name)
                job.seconds = time.monotonic() - mark
                if isinstance(reply, Dead):
                    missed(misses, job, None, reply)
                    if not replace_dead:
                        return misses
                    runner.close()
                    runner, loaded = pool.take(), None
                    if taken is not None:
                        taken.append(runner)
                elif not reply.ok:
                    missed(misses, job, reply.error, None)
                else:
                    job.done.set()
            return misses
        finally:
            runner.close()

    with ThreadPoolExecutor(len(runners)) as ex:
        found = [m for share in ex.map(work, runners) for m in share]
    return time.monotonic() - start, found


class Background:
    """compile_ahead on a thread of its own, beside the judging: the judge waits for a case's
    compile only when it reaches the case, small cases first, so a candidate wrong on one is
    rejected before the big layouts' compiles end (a whole-row block of 262144 took 94 s on an
    H100's host, and a cheat wrong at 64 columns waited for it). What is left when the
    candidate is rejected is stopped: its runners killed, their compiles of no use."""

    def __init__(self, spec: OpSpec, pool: Pool, feed: Feed, runners: int):
        self.feed = feed
        self.seconds = 0.0
        self.misses: list[Miss] = []
        self._start = time.monotonic()
        self._runners: list[Runner] = []
        self._thread = threading.Thread(target=self._run, args=(spec, pool, runners), daemon=True)
        self._thread.start()

    def _run(self, spec: OpSpec, pool: Pool, runners: int) -> None:
        try:
            self.seconds, self.misses = compile_ahead(
                spec, pool, self.feed, runners, taken=self._runners
            )
        except Exception:  # noqa: BLE001 - runners torn down under it by stop(): nothing to say
            self.seconds = time.monotonic() - self._start

    def wait(self, job: Job) -> Miss | None:
        """The job's miss once it is done (None: compiled); None too where the compiles ended
        without it (stopped, or its runner gone): the judging runner then compiles it."""
        while not job.done.wait(0.1):
            if not self._thread.is_alive():
                return None
        return job.miss

    def running(self) -> bool:
        return self._thread.is_alive()

    def finish(self) -> None:
        self._thread.join()

    def stop(self) -> None:
        self.feed.drop()
        for runner in list(self._runners):
            runner.stop()
        self._thread.join()


def bench_layout(spec: OpSpec, shape: BenchShape, device: str = "cpu") -> Layout:
    """The layout of a bench shape's arguments, described without making its (large) tensors.
    An operator with its own input maker draws them on the meta device where the maker runs
    there; one that needs values (a page table read back) draws once, on `device` (on the H200's
    CPU, decode_attn's took 6.7 s a run). On the GPU beside other judges, KernelBench's level-1
    problems at their own sizes (6 GiB an input) ran the host out of memory drawing them for
    real, before any lock was taken (evaluations/logs/h100-20261206-kernelbench-memory)."""
    import torch

    from kernelgen.spec.inputs import make_inputs, torch_dtype
    from kernelgen.verify.tensors import meta

    if spec.make_inputs is not None:
        try:
            with torch.device("meta"):  # factories on meta; the generator's draws are no-ops
                return meta(list(spec.make_inputs(shape, shape.dtype, "normal", torch.Generator())))
        except Exception:  # noqa: BLE001 - a maker that reads values: drawn for real below
            return meta(make_inputs(spec, shape, shape.dtype, "normal", 0, device))
    out: Any = []
    for item in spec.data.inputs:
        if not isinstance(item, TensorInput):
            out.append(item.value_for(shape.dims))
            continue
        dims = shape.shapes.get(item.name) or [resolve_dim(d, shape.dims) for d in item.shape]
        dtype = torch_dtype(shape.dtype if item.dtype == "case" else item.dtype)
        out.extend(meta([torch.empty(dims, dtype=dtype, device="meta")]))
    return out
