"""A pool's CUDA bookkeeping on CPU, with in-process fake workers: a winner is re-timed against
the best on one worker of the run's GPU model before it becomes the best, timings of two GPU
models are never compared, and the tuner's search is spread over the workers and merged."""

from __future__ import annotations

import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_loop_cuda import ENV, bench_record  # noqa: E402

from kernelgen import store, tuning  # noqa: E402
from kernelgen.bench.worker import TuneResult, VariantShape, VariantTiming  # noqa: E402
from kernelgen.propose.tune import search  # noqa: E402
from kernelgen.records import Verdict  # noqa: E402
from kernelgen.run import (
    optimize,  # noqa: E402
    pooled,  # noqa: E402
)
from kernelgen.run.station import Job, Outcome  # noqa: E402
from kernelgen.run.workers import Pool  # noqa: E402
from kernelgen.spec import load_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OP = "silu_and_mul"
H200, H100 = "NVIDIA H200", "NVIDIA H100"


def speed(source: str | None) -> float:
    """A fake kernel's time: `# us: N` in its source, else the seed's 20 us."""
    m = re.search(r"# us: ([\d.]+)", source or "")
    return float(m.group(1)) if m else 20.0


class FakeWorker:
    """Judges everything accepted; times by the `# us:` comment, or by `liar_us` when it lies."""

    def __init__(self, name: str, gpu: str, liar_us: float | None = None):
        self.name, self.gpu, self.liar_us = name, gpu, liar_us
        self.environment = ENV.model_copy(update={"gpu": gpu})
        self.jobs: list[Job] = []
        self.lock = threading.Lock()

    def _record(self, label: str, us: float):
        rec = bench_record(OP, label, us)
        return rec.model_copy(update={"environment": self.environment})

    def call(self, job: Job) -> Outcome:
        with self.lock:
            self.jobs.append(job)
        out = Outcome(job=job.id, worker=self.name, gpu=self.gpu)
        if job.kind == "judge":
            out.verdict = Verdict(
                op=OP,
                candidate="source.py",
                sha256="x",
                accepted=True,
                outcome="accepted",
                device="cuda",
                seed=1,
                seconds=0.1,
            )
        elif job.kind == "bench":
            mine = self.liar_us if self.liar_us is not None else speed(job.source)
            out.bench = [
                self._record(job.candidate or "c", mine),
                self._record(job.best_label, speed(job.best_source)),
            ]
        elif job.kind == "seed_bench":
            out.bench = [self._record("seed", 20.0)]
        elif job.kind == "tune":
            # Variant sources carry their config in TUNED; time = 100 - BLOCK_SIZE / 64.
            rows = []
            for i, src in enumerate(job.sources):
                table = _tuned(src)
                us = 100.0 - (next(iter(table.values()))["BLOCK_SIZE"] / 64 if table else 0.0)
                rows.append((i, us))
            base = rows[0][1]
            spec = load_spec(OP)
            out.tune = TuneResult(
                variants=[
                    VariantTiming(
                        index=i,
                        shapes=[
                            VariantShape(
                                shape=b.name,
                                median_us=us,
                                spread=0.0,
                                method="graph",
                                baseline_us=None if i == 0 else base,
                                baseline_spread=None if i == 0 else 0.0,
                            )
                            for b in spec.data.bench
                        ],
                    )
                    for i, us in rows
                ],
                environment=self.environment,
            ).model_dump_json()
        return out

    def close(self) -> None:
        pass


def _tuned(source: str) -> dict:
    import ast

    node = tuning.assignment(ast.parse(source), "TUNED")
    return ast.literal_eval(node.value) if node is not None and node.value is not None else {}


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


class _Quiet:
    def event(self, message: str) -> None:
        pass

    def candidate(self, record, run) -> None:  # noqa: ANN001
        pass


def test_a_winner_is_retimed_on_one_worker_before_it_becomes_best(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = (project / "seeds" / f"{OP}.py").read_text()
    folder = project / "mine"
    folder.mkdir()
    (folder / "a.py").write_text(seed + "\n# us: 10\n")
    (folder / "b.py").write_text(seed + "\n# us: 15\n")
    (folder / "c.py").write_text(seed + "\n# us: 30\n")  # slower than the seed
    honest, other = FakeWorker("w0", H200), FakeWorker("w1", H200)
    pool = Pool([honest, other])
    monkeypatch.setattr(optimize, "maybe_promote", lambda run, observer, judging=None: False)
    opts = optimize.OptimizeOptions(
        proposer="files", source=str(folder), rounds=1, candidates=3, repairs=0, device="cuda"
    )
    try:
        summary = optimize.optimize_op(OP, opts, _Quiet(), pool=pool)
    finally:
        pool.close()
    records = {r.id: r for r in store.load_candidates(OP, summary.run_id)}
    assert summary.best == "r01-c01"  # a at 10 us beats b at 15 and the seed at 20
    bests = [r for r in records.values() if r.became_best]
    assert bests and all(r.retimed_on in ("w0", "w1") and r.best_seq for r in bests)
    assert records["r01-c03"].became_best is False and records["r01-c03"].retimed_on is None
    assert all(r.worker in ("w0", "w1") for r in records.values())
    run = store.load_run(OP, summary.run_id)
    assert run.seed_bench is not None and run.environment.gpu == H200
    # Every re-time asked for the run's GPU model.
    retimes = [j for w in (honest, other) for j in w.jobs if j.kind == "bench" and j.gpu]
    assert retimes and {j.gpu for j in retimes} == {H200}


def test_two_gpu_models_are_never_compared(project: Path) -> None:
    mine = bench_record(OP, "c", 10.0).model_copy(
        update={"environment": ENV.model_copy(update={"gpu": H100})}
    )
    best = bench_record(OP, "best", 20.0)
    wins, why = pooled.decide(mine, best)
    assert not wins and "compare only on one GPU model" in why
    # A job for the run's model goes only to a worker of that model, idle others or not.
    liar, honest = FakeWorker("h100", H100, liar_us=1.0), FakeWorker("h200", H200)
    pool = Pool([liar, honest])
    try:
        for _ in range(4):
            outcome = pool.run(
                pool.job("bench", candidate="c", source="# us: 30", best_source="x", gpu=H200)
            )
            assert outcome.worker == "h200"
            first, second = outcome.bench
            assert pooled.decide(first, second)[0] is False  # 30 us against 20
    finally:
        pool.close()


def test_the_tuners_search_is_spread_and_merged(project: Path) -> None:
    spec = load_spec(OP)
    source = (project / "seeds" / f"{OP}.py").read_text()
    space = tuning.space(source)
    assert space is not None
    workers = [FakeWorker(f"w{i}", H200) for i in range(3)]
    pool = Pool(workers)
    try:
        found = search(spec, source, timer=pooled.tuner(pool))
    finally:
        pool.close()
    jobs = [j for w in workers for j in w.jobs if j.kind == "tune"]
    assert len(jobs) == min(3, len(tuning.configs(space)))
    # The baseline (the source as it is) opens every share; the variants are shared out once.
    assert all(j.sources[0] == source for j in jobs)
    variants = [s for j in jobs for s in j.sources[1:]]
    assert len(variants) == len(set(variants)) == len(tuning.configs(space))
    # The largest BLOCK_SIZE is the fastest in the fake: it wins every bucket.
    assert found.proposal is not None
    top = max(space["BLOCK_SIZE"])
    assert {c["BLOCK_SIZE"] for c in _tuned(found.proposal.source).values()} == {top}


def test_the_first_of_equal_sources_is_judged_whichever_thread_comes_first(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = (project / "seeds" / f"{OP}.py").read_text()
    folder = project / "same"
    folder.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (folder / name).write_text(seed)
    real = pooled.PooledJudging.twin

    def late_first(self, run, rec, source):  # noqa: ANN001, ANN202
        if rec.id == "r01-c01":  # the later equal sources reach the check before it
            time.sleep(0.5)
        return real(self, run, rec, source)

    monkeypatch.setattr(pooled.PooledJudging, "twin", late_first)
    worker = FakeWorker("w0", H200)
    pool = Pool([worker, FakeWorker("w1", H200)])
    opts = optimize.OptimizeOptions(
        proposer="files", source=str(folder), rounds=1, candidates=3, repairs=0, device="cpu"
    )
    try:
        summary = optimize.optimize_op(OP, opts, _Quiet(), pool=pool)
    finally:
        pool.close()
    records = {r.id: r for r in store.load_candidates(OP, summary.run_id)}
    assert records["r01-c01"].verdict.duplicate_of is None
    for later in ("r01-c02", "r01-c03"):
        assert records[later].verdict.duplicate_of == "r01-c01"
        assert records[later].reason == "same source as r01-c01"
