"""How a run judges its candidates: the one interface the loop goes through (`Judging`), and its
implementation in this process (`LocalJudging`: one judge, one GPU). The pooled implementation,
over workers of `--gpus` or `--ray`, is pooled.py.

A judging verifies, times and sanitizes; the run (the loop) decides what to judge and writes
every record. So a judging gets the run as a `RunState`, the part of the loop it may use: the
records, the store writes, the best so far, and the run's lock around them.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kernelgen import store
from kernelgen.records import BenchRecord, CandidateRecord, Environment, RunRecord, Verdict
from kernelgen.spec import has_seed, seed_path

if TYPE_CHECKING:
    from kernelgen.propose.tune import Timer
    from kernelgen.verify import Evaluator
    from kernelgen.verify.checks import Failure


class Observer(Protocol):
    """What the CLI shows while a run goes on (the loop and its judging print nothing)."""

    def event(self, message: str) -> None: ...

    def candidate(self, record: CandidateRecord, run: RunRecord) -> None: ...


class RunState(Protocol):
    """The part of a run (run.loop.Loop) that a judging reads and writes through."""

    run: RunRecord
    records: list[CandidateRecord]
    observer: Observer
    lock: threading.RLock

    @property
    def op(self) -> str: ...

    @property
    def device(self) -> str: ...

    def save(self, rec: CandidateRecord) -> None: ...

    def best_id(self) -> str | None: ...

    def best_source(self) -> str: ...

    def best_path(self) -> Path: ...

    def next_best_seq(self) -> int | None: ...

    def judged_twin(self, rec: CandidateRecord, source: str) -> CandidateRecord | None: ...

    def bench(self, rec: CandidateRecord) -> CandidateRecord:
        """The judging's bench, a failed one recorded on the candidate (loop.Loop.bench)."""
        ...

    def finish_chain(self, chain: list[CandidateRecord], round_no: int) -> None: ...


class Judging(Protocol):
    """Verify, time and sanitize the candidates of one run."""

    def environment(self, device: str) -> Environment:
        """Where the run's figures are measured."""
        ...

    def prepare(self, run: RunState) -> None:
        """What the first round needs: on CUDA the seed's verdict (deadlines) and timings."""
        ...

    def twin(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord | None:
        """The judged candidate of the run with this source, which `rec` takes its verdict from."""
        ...

    def verify(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord:
        """The verdict of a stored pending candidate; on CUDA an accepted one is also timed."""
        ...

    def bench(self, run: RunState, rec: CandidateRecord) -> CandidateRecord:
        """Time an accepted candidate against the best, interleaved; it is kept if it wins."""
        ...

    def sanitize(self, run: RunState, cid: str, path: Path) -> tuple[Failure | None, list[str]]:
        """A candidate's small cases under compute-sanitizer: a failure, or the tools run clean."""
        ...

    def promote_bench(
        self, op: str, cand: str, source: Path, library: Path
    ) -> tuple[BenchRecord, BenchRecord]:
        """A run's best against the library's kernel, interleaved, before promotion."""
        ...

    def finish_chains(
        self,
        run: RunState,
        chains: list[list[CandidateRecord]],
        round_no: int,
        stop: Callable[[], str | None] | None = None,
    ) -> None:
        """Finish each chain (run.finish_chain); `stop` says when to start no more of them."""
        ...

    @property
    def timer(self) -> Timer | None:
        """What the tuner times its variants with (None: in this process)."""
        ...

    def close(self) -> None: ...


def with_verdict(rec: CandidateRecord, verdict: Verdict) -> CandidateRecord:
    return rec.model_copy(
        update={
            "status": "accepted" if verdict.accepted else "rejected",
            "category": verdict.category,
            "reason": verdict.reason,
            "verdict": verdict,
        }
    )


def first_best(run: RunState) -> bool:
    """An operator without a seed, and no best yet: torch eager is the baseline, and the first
    accepted candidate becomes the best (there is nothing of its own kind to beat)."""
    return run.best_id() is None and not has_seed(run.op)


class LocalJudging:
    """One judge in this process, made on first use and kept for the run: its ground truth, warm
    runners, compile cache and per-case deadlines serve every candidate."""

    def __init__(self, evaluator: Evaluator | None = None) -> None:
        self.evaluator = evaluator

    def environment(self, device: str) -> Environment:
        from kernelgen.env import environment

        return environment(device)

    def judge_of_run(self, run: RunState) -> Evaluator:
        """The run's evaluator. On CUDA the seed is judged first, so its per-case times set the
        deadlines that find a hanging candidate fast (and the run holds the seed's CUDA
        verdict). On CPU the interpreter's seed run costs as much as a candidate's and the
        deadline cap (50 s) already finds a hang within a minute, so the seed is not re-run."""
        from kernelgen.verify import Evaluator, target, verify_candidate

        if self.evaluator is None:
            self.evaluator = Evaluator(
                run.op,
                run.device,
                seed=random.SystemRandom().randrange(2**31),
                # On CPU an accepted candidate is compiled for the H200 too: the interpreter
                # accepts kernels its compiler refuses, and the device time is the scarce one.
                gpu_target=target.DEFAULT,
            )
            if run.device != "cuda":
                return self.evaluator
            if not has_seed(run.op):
                run.observer.event("no seed: torch eager is the baseline; deadlines stay at caps")
                return self.evaluator
            run.observer.event("judging the seed (sets the per-case deadlines)")
            seed_verdict = verify_candidate(
                run.op, seed_path(run.op), device=run.device, evaluator=self.evaluator
            )
            self.evaluator.calibrate(seed_verdict)
            run.run.seed_verdict = seed_verdict
            store.save_run(run.run)
            if not seed_verdict.accepted:
                run.observer.event(
                    f"the seed itself was rejected ({seed_verdict.category}: "
                    f"{seed_verdict.reason}); deadlines stay at their caps"
                )
        return self.evaluator

    def prepare(self, run: RunState) -> None:
        if run.device != "cuda":
            return
        # The seed is judged first: its times set the deadlines, and its compile ahead covers
        # the bench shapes, so the seed's benchmark below loads them from the cache.
        self.judge_of_run(run)
        if run.run.seed_bench is None and has_seed(run.op):
            from kernelgen.bench import bench_files

            run.observer.event("benchmarking the seed against torch eager and torch.compile")
            (run.run.seed_bench,) = bench_files(run.op, [("seed", seed_path(run.op))], peers=True)
            store.save_run(run.run)

    def twin(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord | None:
        return run.judged_twin(rec, source)

    def verify(self, run: RunState, rec: CandidateRecord, source: str) -> CandidateRecord:
        from kernelgen.verify import verify_candidate

        path = store.candidate_path(run.op, run.run.id, rec.id)
        run.observer.event(f"verifying {rec.id}")
        verdict = verify_candidate(
            run.op, path, device=run.device, evaluator=self.judge_of_run(run)
        )
        rec = with_verdict(rec, verdict)
        ran = any(c.status == "passed" for c in verdict.cases)
        if rec.status == "accepted" and run.device != "cuda" and ran and first_best(run):
            rec = rec.model_copy(update={"became_best": True})
        run.save(rec)
        if rec.status == "accepted" and run.device == "cuda":
            rec = run.bench(rec)
        return rec

    def bench(self, run: RunState, rec: CandidateRecord) -> CandidateRecord:
        from kernelgen.bench import accepts, bench_files, speedup

        path = store.candidate_path(run.op, run.run.id, rec.id)
        if first_best(run):
            run.observer.event(f"benchmarking {rec.id} against torch eager (no seed)")
            (mine,) = bench_files(run.op, [(rec.id, path)], peers="cached")
            wins, why, gain = True, None, mine.geomean_eager
        else:
            run.observer.event(f"benchmarking {rec.id} against {run.best_id() or 'the seed'}")
            mine, best = bench_files(
                run.op, [(rec.id, path), ("best", run.best_path())], peers="cached"
            )
            (wins, why), gain = accepts(mine, best), speedup(mine, best)
        rec = rec.model_copy(
            update={
                "bench": mine,
                "speedup": gain,
                "became_best": wins,
                "reason": why if not wins else None,
                "compile": mine.compile,
            }
        )
        if wins and run.next_best_seq() is not None:  # a run a pool judged before
            rec = rec.model_copy(update={"best_seq": run.next_best_seq()})
        run.save(rec)
        return rec

    def sanitize(self, run: RunState, cid: str, path: Path) -> tuple[Failure | None, list[str]]:
        return self.judge_of_run(run).sanitize_only(path)

    def promote_bench(
        self, op: str, cand: str, source: Path, library: Path
    ) -> tuple[BenchRecord, BenchRecord]:
        from kernelgen.bench import bench_files

        mine, theirs = bench_files(op, [(cand, source), ("generated", library)], peers=False)
        return mine, theirs

    def finish_chains(
        self,
        run: RunState,
        chains: list[list[CandidateRecord]],
        round_no: int,
        stop: Callable[[], str | None] | None = None,
    ) -> None:
        for chain in chains:
            if stop is not None and stop():
                return
            run.finish_chain(chain, round_no)

    @property
    def timer(self) -> Timer | None:
        return None

    def close(self) -> None:
        if self.evaluator is not None:
            self.evaluator.close()
            self.evaluator = None
