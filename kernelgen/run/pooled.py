"""A run's judging over a pool of workers (`--gpus`, `--ray`; workers.py): judging.py's
interface, as LocalJudging is in this process.

The chains of a round (a candidate, its repairs, its tuned child) run side by side, each in a
thread of this process that hands its jobs to the pool and waits; the workers verify and time,
and this process writes every record, as the single-worker loop does: pending before a job is
sent, its verdict once the job is back. A candidate whose worker died stays pending while the
pool gives its job to another worker.

Timings are compared only when one process took them on one GPU: a worker times a candidate
against the best interleaved, as one judge does. A candidate that wins there is timed again
against the best as it is by then, on one worker of the run's GPU model, and only that second
win makes it the best; new bests are made one at a time, so each is measured against the one
before it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from kernelgen import store
from kernelgen.records import BenchRecord, CandidateRecord, Environment
from kernelgen.run.judging import RunState, with_verdict
from kernelgen.run.pool import Pool, PoolLost, WorkerLost

if TYPE_CHECKING:
    from kernelgen.bench.worker import TuneResult
    from kernelgen.propose.tune import Timer
    from kernelgen.verify.checks import Failure


class PooledJudging:
    """The pool is its maker's (optimize.py) to close: a run does not own the workers."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        # Record id -> set once its verification has ended (with a verdict or without).
        self.done: dict[str, threading.Event] = {}
        self.promoting = threading.Lock()

    def _ended(self, cid: str) -> threading.Event:
        return self.done.setdefault(cid, threading.Event())

    def environment(self, device: str) -> Environment:
        # A pool's figures are measured where its first worker is (a Ray driver may have no
        # GPU of its own).
        return self.pool.environment

    def close(self) -> None:
        pass

    @property
    def timer(self) -> Timer:
        return tuner(self.pool)

    # ---- verdicts ---------------------------------------------------------------------------

    def twin(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord | None:
        """The judged candidate with this source; None when there is none to wait for. As in
        the local judging, the first of equal sources in record order is the one judged: a
        later one waits while an earlier one is still being judged (whichever chain's thread
        got here first), and judges itself only if that one ended without a verdict."""
        from kernelgen.verify import sha256

        digest = sha256(source)
        while True:
            with run.lock:
                found = run.judged_twin(rec, source)
                if found is not None:
                    return found
                ids = [r.id for r in run.records]
                mine = ids.index(rec.id) if rec.id in ids else len(ids)
                first = next(
                    (
                        r
                        for r in run.records[:mine]
                        if r.sha256 == digest
                        and r.status == "pending"
                        and not self._ended(r.id).is_set()
                    ),
                    None,
                )
                if first is None:
                    return None
                event = self._ended(first.id)
            event.wait(0.5)  # and look again: it may have ended as a twin itself, or failed

    def verify(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord:
        path = store.candidate_path(run.op, run.run.id, rec.id)
        run.observer.event(f"verifying {rec.id}")
        try:
            try:
                outcome = self.pool.run(self.pool.job("judge", candidate=rec.id, source=source))
            except WorkerLost as e:
                # Candidates run sandboxed, so a worker does not die of one; a candidate that
                # took down MAX_ATTEMPTS of them is charged with it all the same.
                rec = rec.model_copy(
                    update={"status": "rejected", "category": "crash", "reason": str(e)}
                )
                run.save(rec)
                return rec
            self._note_seed(run, outcome.seed_verdict)
            assert outcome.verdict is not None
            verdict = outcome.verdict.model_copy(update={"candidate": str(path)})
            rec = with_verdict(rec, verdict).model_copy(update={"worker": outcome.worker})
            run.save(rec)
        finally:
            with run.lock:
                self._ended(rec.id).set()
        if rec.status == "accepted" and run.device == "cuda":
            rec = run.bench(rec)
        return rec

    def _note_seed(self, run: RunState, seed_verdict: object) -> None:
        """The first worker's seed verdict is the run's (it set that worker's deadlines)."""
        if seed_verdict is None:
            return
        with run.lock:
            if run.run.seed_verdict is None:
                run.run.seed_verdict = seed_verdict  # type: ignore[assignment]
                store.save_run(run.run)

    # ---- timings ----------------------------------------------------------------------------

    def _timed(
        self, run: RunState, rec: CandidateRecord, gpu: str | None
    ) -> tuple[str, BenchRecord, BenchRecord]:
        with run.lock:
            best_source = run.best_source()
        source = store.candidate_source(run.op, run.run.id, rec.id)
        job = self.pool.job(
            "bench", candidate=rec.id, source=source, best_source=best_source, gpu=gpu
        )
        outcome = self.pool.run(job)
        mine, best = outcome.bench
        return outcome.worker, mine, best

    def bench(self, run: RunState, rec: CandidateRecord) -> CandidateRecord:
        """Time an accepted candidate against the best on any worker; a win there is re-timed
        on one worker of the run's GPU model before the candidate becomes the best."""
        from kernelgen.bench import speedup

        run.observer.event(f"benchmarking {rec.id} against {run.best_id() or 'the seed'}")
        _, mine, best = self._timed(run, rec, None)
        wins, why = decide(mine, best)
        rec = rec.model_copy(
            update={
                "bench": mine,
                "speedup": speedup(mine, best),
                "became_best": False,
                "reason": None if wins else why,
                "compile": mine.compile,
            }
        )
        if not wins:
            run.save(rec)
            return rec
        with self.promoting:  # one new best at a time, each against the one before it
            run.observer.event(f"re-timing {rec.id} against {run.best_id() or 'the seed'}")
            worker, mine, best = self._timed(run, rec, run.run.environment.gpu)
            wins, why = decide(mine, best)
            update: dict[str, object] = {
                "bench": mine,
                "speedup": speedup(mine, best),
                "became_best": wins,
                "reason": None if wins else f"re-timed against the best: {why}",
                "compile": mine.compile,
                "retimed_on": worker,
            }
            with run.lock:
                if wins:
                    update["best_seq"] = run.next_best_seq() or 1
                rec = rec.model_copy(update=update)
                run.save(rec)
        return rec

    def prepare(self, run: RunState) -> None:
        """The seed's timings on one worker of the run's GPU model (the workers judge the seed
        themselves, for their deadlines, before their first candidate)."""
        if run.device != "cuda" or run.run.seed_bench is not None:
            return
        run.observer.event("benchmarking the seed against torch eager and torch.compile")
        outcome = self.pool.run(self.pool.job("seed_bench", gpu=run.run.environment.gpu))
        run.run.seed_bench = outcome.bench[0]
        store.save_run(run.run)

    def sanitize(self, run: RunState, cid: str, path: Path) -> tuple[Failure | None, list[str]]:
        from kernelgen.verify.checks import Failure

        job = self.pool.job("sanitize", candidate=cid, source=path.read_text())
        outcome = self.pool.run(job)
        if outcome.failure_category is None:
            return None, outcome.sanitized
        return Failure(outcome.failure_category, outcome.failure_reason or ""), []

    def promote_bench(
        self, op: str, cand: str, source: Path, library: Path
    ) -> tuple[BenchRecord, BenchRecord]:
        """On one worker of the pool's GPU model (the parent of a Ray run may have no GPU)."""
        job = self.pool.job(
            "bench",
            candidate=cand,
            source=source.read_text(),
            best_source=library.read_text(),
            best_label="generated",
            gpu=self.pool.environment.gpu,
        )
        mine, theirs = self.pool.run(job).bench
        return mine, theirs

    # ---- chains side by side ----------------------------------------------------------------

    def finish_chains(
        self,
        run: RunState,
        chains: list[list[CandidateRecord]],
        round_no: int,
        stop: Callable[[], str | None] | None = None,
    ) -> None:
        """Every chain of a round at once, one thread each (`stop` was asked before they
        started); the pool's queue spreads their jobs over its workers. A lost pool ends the
        round (and the run) once every chain has stopped."""
        if not chains:
            return
        workers = min(len(chains), 32)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chain") as ex:
            futures = [ex.submit(run.finish_chain, chain, round_no) for chain in chains]
        errors = [e for f in futures if (e := f.exception()) is not None]
        if errors:
            lost = next((e for e in errors if isinstance(e, PoolLost)), None)
            raise lost or errors[0]


def comparable(mine: BenchRecord, best: BenchRecord) -> str | None:
    """Why two timings may not be compared, or None: one GPU model, or none."""
    a, b = mine.environment.gpu, best.environment.gpu
    if a != b:
        return f"timed on {a} against the best on {b}: timings compare only on one GPU model"
    return None


def decide(mine: BenchRecord, best: BenchRecord) -> tuple[bool, str]:
    from kernelgen.bench import accepts

    apart = comparable(mine, best)
    return (False, apart) if apart else accepts(mine, best)


# ---- the tuner's search ---------------------------------------------------------------------


def tuner(pool: Pool) -> Timer:
    """A Timer that spreads the variants over the pool's workers of one GPU model, the baseline
    (source 0) timed with each share, so every variant is held against the baseline's time from
    its own process, as one worker's split of a crashed group is (bench.tune_variants)."""

    def timer(op: str, sources: list[str]) -> TuneResult:
        return spread_tune(pool, sources, pool.environment.gpu)

    return timer


def spread_tune(pool: Pool, sources: list[str], gpu: str | None) -> TuneResult:
    from kernelgen.bench.worker import TuneResult, VariantTiming

    base, variants = sources[0], sources[1:]
    n = max(1, min(pool.count(gpu), len(variants)))
    shares = [list(range(1 + k, 1 + len(variants), n)) for k in range(n)]
    futures = [
        pool.submit(pool.job("tune", sources=[base, *(sources[i] for i in share)], gpu=gpu))
        for share in shares
        if share
    ]
    merged: dict[int, VariantTiming] = {}
    environment = None
    for share, future in zip([s for s in shares if s], futures, strict=True):
        outcome = future.result()
        if outcome.error is not None or outcome.tune is None:
            from kernelgen.errors import KernelgenError

            raise KernelgenError(f"worker {outcome.worker}: {outcome.error}")
        part = TuneResult.model_validate_json(outcome.tune)
        environment = environment or part.environment
        numbers = [0, *share]  # the share's local index -> the caller's
        for v in part.variants:
            if v.index == 0 and 0 in merged:
                continue  # the baseline's own row: the first share's
            merged[numbers[v.index]] = v.model_copy(update={"index": numbers[v.index]})
    return TuneResult(
        variants=[merged[i] for i in sorted(merged)],
        environment=environment,
    )
