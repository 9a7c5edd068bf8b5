"""One evaluation worker's side: a judge bound to one device, taking jobs and returning what it
found. It never writes the run's store: the parent (workers.py) is the one writer.

A station lives in a process of its own, a local worker (`python -m kernelgen.run.station`, started
by workers.py with CUDA_VISIBLE_DEVICES naming its one GPU) or a Ray actor (ray_pool.py, where
Ray names the GPU), so "cuda" in it is its GPU and nothing else. It keeps one Evaluator for its
life (ground truth, warm runners, compile cache, deadlines): each worker judges its candidates in
sandboxes of its own. Candidates arrive as source text, not paths, since a Ray worker may sit on
another host: the station writes each into its scratch folder as `source.py` (the name a store
path has, so reasons that quote a file name read the same), and the parent puts the store's path
back into the verdict.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.records import BenchRecord, Category, Environment, Verdict


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StationConfig(_Msg):
    """What every worker of a pool is made with: the same operator, device and seed, so each
    draws the same inputs and the workers' verdicts are one judge's."""

    op: str
    device: Literal["cpu", "cuda"]
    seed: int
    root: str = Field(description="the project (references/, seeds/) on the worker's host")
    gpu_target: str | None = Field(None, description="CPU: the GPU to compile accepted ones for")
    deadline_s: float | None = None
    sanitize: bool = False
    calibrate: bool = Field(
        True, description="CUDA: judge the seed first, so its case times set the deadlines"
    )


JobKind = Literal["judge", "bench", "seed_bench", "sanitize", "tune"]


class Job(_Msg):
    kind: JobKind
    id: str = Field(description="unique within the pool")
    candidate: str | None = Field(None, description="the candidate's id in the run")
    source: str | None = None
    filename: str = Field(
        "source.py", description="the name it is judged under (reasons may quote it)"
    )
    best_source: str | None = Field(None, description="bench: the contender to beat")
    best_label: str = Field("best", description="bench: its label (generated: the library's)")
    sources: list[str] = Field(default_factory=list, description="tune: baseline first")
    gpu: str | None = Field(
        None, description="only a worker with this GPU model may take it (timings compared)"
    )


class Ready(_Msg):
    """A worker's first word: up, and on what."""

    name: str
    gpu: str | None
    environment: Environment
    pid: int


class Outcome(_Msg):
    job: str
    worker: str
    gpu: str | None
    verdict: Verdict | None = None
    bench: list[BenchRecord] = Field(default_factory=list, description="as the contenders")
    seed_verdict: Verdict | None = Field(
        None, description="the worker's seed verdict, the first time it judged (CUDA)"
    )
    failure_category: Category | None = Field(None, description="sanitize: why not clean")
    failure_reason: str | None = None
    sanitized: list[str] = Field(default_factory=list)
    tune: str | None = Field(None, description="tune: the TuneResult as JSON")
    error: str | None = Field(
        None, description="kernelgen's own error in the worker (a bench process that failed)"
    )
    seconds: float = 0.0


class Station:
    """The judge of one worker."""

    def __init__(self, config: StationConfig, name: str):
        self.config = config
        self.name = name
        os.environ["KERNELGEN_ROOT"] = config.root
        self.scratch = Path(tempfile.mkdtemp(prefix=f"kernelgen-{name}-"))
        self.evaluator = None
        self.seed_reported = False
        self.seed_verdict: Verdict | None = None
        self.count = 0
        self.gpu: str | None = None

    def ready(self) -> Ready:
        from kernelgen.env import environment

        env = environment(self.config.device)
        self.gpu = env.gpu
        return Ready(name=self.name, gpu=env.gpu, environment=env, pid=os.getpid())

    # ---- jobs --------------------------------------------------------------------------------

    def handle(self, job: Job) -> Outcome:
        from kernelgen.errors import KernelgenError

        start = time.monotonic()
        out = Outcome(job=job.id, worker=self.name, gpu=self.gpu)
        try:
            getattr(self, f"_{job.kind}")(job, out)
        except KernelgenError as e:
            out.error = str(e)
        except Exception as e:  # noqa: BLE001 - kernelgen's own bug: the parent stops the run
            out.error = f"{type(e).__name__}: {e}"
        if self.seed_verdict is not None and not self.seed_reported:
            out.seed_verdict, self.seed_reported = self.seed_verdict, True
        out.seconds = round(time.monotonic() - start, 3)
        return out

    def _file(self, label: str, source: str, name: str = "source.py") -> Path:
        self.count += 1
        path = self.scratch / f"{self.count:04d}-{label}" / name
        path.parent.mkdir(parents=True)
        path.write_text(source)
        return path

    def judge_of_worker(self):  # -> Evaluator
        """This worker's evaluator, made on first use; on CUDA the seed is judged first, as
        the single-worker loop does, so its case times set this worker's deadlines."""
        if self.evaluator is None:
            from kernelgen.spec import seed_path
            from kernelgen.verify import Evaluator, verify_candidate

            c = self.config
            self.evaluator = Evaluator(
                c.op,
                c.device,
                seed=c.seed,
                deadline_s=c.deadline_s,
                sanitize=c.sanitize,
                gpu_target=c.gpu_target,
            )
            if c.device == "cuda" and c.calibrate:
                seed = verify_candidate(
                    c.op, seed_path(c.op), device=c.device, evaluator=self.evaluator
                )
                self.evaluator.calibrate(seed)
                self.seed_verdict = seed
        return self.evaluator

    def _judge(self, job: Job, out: Outcome) -> None:
        from kernelgen.verify import verify_candidate

        assert job.source is not None and job.candidate is not None
        path = self._file(job.candidate, job.source, job.filename)
        # The verdict only: the parent stores it before it asks for a bench (a bench that
        # fails must not take the verdict with it).
        out.verdict = verify_candidate(
            self.config.op, path, device=self.config.device, evaluator=self.judge_of_worker()
        )

    def _bench(self, job: Job, out: Outcome) -> None:
        """The candidate against `best_source`, interleaved in one process on this GPU: the
        only pairing of timings the acceptance rule may compare."""
        from kernelgen.bench import bench_files

        assert job.source is not None and job.candidate is not None
        assert job.best_source is not None
        path = self._file(job.candidate, job.source)
        best = self._file(job.best_label, job.best_source)
        peers: bool | Literal["cached"] = False if job.best_label == "generated" else "cached"
        out.bench = bench_files(
            self.config.op, [(job.candidate, path), (job.best_label, best)], peers=peers
        )

    def _seed_bench(self, job: Job, out: Outcome) -> None:
        from kernelgen.bench import bench_files
        from kernelgen.spec import seed_path

        out.bench = bench_files(self.config.op, [("seed", seed_path(self.config.op))], peers=True)

    def _sanitize(self, job: Job, out: Outcome) -> None:
        assert job.source is not None and job.candidate is not None
        path = self._file(job.candidate, job.source)
        failure, out.sanitized = self.judge_of_worker().sanitize_only(path)
        if failure is not None:
            out.failure_category, out.failure_reason = failure.category, failure.reason

    def _tune(self, job: Job, out: Outcome) -> None:
        from kernelgen.bench import tune_variants

        result = tune_variants(self.config.op, job.sources, baseline=0)
        out.tune = result.model_dump_json()

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()
            self.evaluator = None
        shutil.rmtree(self.scratch, ignore_errors=True)


# ---- a local worker's process ---------------------------------------------------------------


def serve(requests: int, replies: int) -> None:
    """`python -m kernelgen.run.station NAME REQUEST_FD REPLY_FD`: the config on the first line,
    then one job a line; a Ready line, then one Outcome a line. Pipes, not stdout, carry the
    protocol: what the judge's libraries print cannot be read as an answer."""
    inbox = os.fdopen(requests, "r", encoding="utf-8")
    outbox = os.fdopen(replies, "w", encoding="utf-8")
    config = StationConfig.model_validate_json(inbox.readline())
    station = Station(config, sys.argv[1])

    def send(msg: BaseModel) -> None:
        outbox.write(msg.model_dump_json() + "\n")
        outbox.flush()

    send(station.ready())
    try:
        for line in inbox:
            send(station.handle(Job.model_validate_json(line)))
    finally:
        station.close()


if __name__ == "__main__":
    serve(int(sys.argv[2]), int(sys.argv[3]))
