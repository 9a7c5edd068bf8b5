"""The optimize loop: propose -> gate -> verify -> (repair) -> tune -> bench -> select.

State lives in the store, not in memory: every candidate is written 'pending' (with its source and
transcript) before it is judged and rewritten with its verdict after, and the run's best is derived
from the candidates' records. So a run killed at any point resumes where it stopped: pending
candidates are judged, judged ones are not judged again, and the proposer is asked only for what
the interrupted round still lacks.
"""

from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from kernelgen import store, tuning
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.propose.base import Context, HistoryItem, Proposal, Proposer
from kernelgen.records import (
    BenchRecord,
    Budget,
    CandidateRecord,
    RunRecord,
    RunSettings,
    Usage,
)
from kernelgen.run import stops
from kernelgen.run.judging import Judging, LocalJudging, Observer, first_best
from kernelgen.spec import OpSpec, ScalarInput, TensorInput, has_seed, load_spec, seed_path

HARDWARE = (
    "NVIDIA H200 (Hopper, sm_90): 132 SMs, 228 KB shared memory per SM, 60 MB L2, HBM3e at "
    "about 4.8 TB/s (about 4.3 TB/s measured copy), about 990 dense bf16 TFLOP/s (about 710-790 "
    "measured); TMA and wgmma are reachable through Triton (tl.dot, tensor descriptors)."
)
_FIX = re.compile(r"-fix(\d+)$")
# What a proposer reads in the seed's place for an operator without one (an imported problem).
NO_SEED = (
    "# No seed: this operator starts from torch eager, its reference, which is the baseline.\n"
    "# The first accepted candidate becomes the best.\n"
)


class _Silent:
    def event(self, message: str) -> None:
        pass

    def candidate(self, record: CandidateRecord, run: RunRecord) -> None:
        pass


@dataclass
class Loop:
    spec: OpSpec
    run: RunRecord
    proposer: Proposer
    observer: Observer = field(default_factory=_Silent)
    records: list[CandidateRecord] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    # What a resumed run spent before it was resumed, so budgets count the whole run.
    usage_at_start: Usage = field(default_factory=Usage)
    elapsed_at_start: float = 0.0
    # How candidates are judged: one judge in this process, or a pool of workers (pooled.py).
    # Either way this process is the one writer of the store, its writes serialized by `lock`.
    judging: Judging = field(default_factory=LocalJudging)
    lock: threading.RLock = field(default_factory=threading.RLock)
    asking: threading.Lock = field(default_factory=threading.Lock)

    # ---- state derived from the store -------------------------------------------------------

    @property
    def op(self) -> str:
        return self.run.op

    @property
    def budget(self) -> Budget:
        return self.run.settings.budget

    @property
    def device(self) -> str:
        return self.run.settings.device

    def save(
        self, rec: CandidateRecord, source: str | None = None, proposal: Proposal | None = None
    ) -> None:
        with self.lock:
            self._save_locked(rec, source, proposal)

    def _save_locked(
        self, rec: CandidateRecord, source: str | None, proposal: Proposal | None
    ) -> None:
        store.save_candidate(
            self.op, self.run.id, rec, source, proposal.transcript if proposal else None
        )
        for i, old in enumerate(self.records):
            if old.id == rec.id:
                self.records[i] = rec
                break
        else:
            self.records.append(rec)
        self.run.best = self.best_id()
        self.run.elapsed_s = round(self._elapsed(), 1)
        store.save_run(self.run)
        self.observer.candidate(rec, self.run)

    def _elapsed(self) -> float:
        return self.elapsed_at_start + time.monotonic() - self.started

    def best_id(self) -> str | None:
        if any(r.best_seq is not None for r in self.records):  # a pool's, out of order
            bests = [r for r in self.records if r.became_best and r.best_seq is not None]
            return max(bests, key=lambda r: r.best_seq or 0).id if bests else None
        best = None
        for rec in self.records:
            if rec.became_best:
                best = rec.id
        return best

    def best_source(self) -> str:
        best = self.best_id()
        if best is None:
            return seed_source(self.op)
        return store.candidate_source(self.op, self.run.id, best)

    def best_path(self) -> Path:
        best = self.best_id()
        return (
            seed_path(self.op) if best is None else store.candidate_path(self.op, self.run.id, best)
        )

    def best_bench(self) -> BenchRecord | None:
        best = self.best_id()
        if best is None:
            return self.run.seed_bench
        return next(r.bench for r in self.records if r.id == best)

    # ---- context -----------------------------------------------------------------------------

    def context(self, round_no: int) -> Context:
        bench = self.best_bench()
        failures = [r for r in self.records if r.status == "rejected"]
        last = failures[-1] if failures else None
        detail = None
        if last is not None:
            detail = f"{last.id} (parent {last.parent}): {last.category}: {last.reason}"
        return Context(
            op=self.op,
            round=round_no,
            device=self.device,
            spec=render_spec(self.spec),
            reference_source=self.spec.path.read_text(),
            seed_source=seed_source(self.op),
            best_source=self.best_source(),
            best_id=self.best_id(),
            timings=bench.shapes if bench else [],
            compile=bench.compile if bench else [],
            history=[HistoryItem.model_validate(r, from_attributes=True) for r in self.records],
            last_failure=detail,
            profile=self._best_profile(),
            hardware=HARDWARE,
            software=f"torch {self.run.environment.torch}, Triton {self.run.environment.triton}",
        )

    def _best_profile(self) -> str | None:
        """The stored Nsight Compute summary of the best at its worst shape; never profiled
        here (ncu takes seconds per kernel): `kernelgen agent profile` stores it."""
        from kernelgen.bench.profile import load_result, worst_shape

        shape = worst_shape(self.best_bench())
        if shape is None:
            return None
        path = store.profile_path(self.op, self.run.id, self.best_id() or "seed", shape)
        return load_result(path).summary if path.is_file() else None

    # ---- budget ------------------------------------------------------------------------------

    def out_of_budget(self) -> str | None:
        return stops.out_of_budget(self.budget, self.run.usage, self._elapsed())

    # ---- judging one candidate --------------------------------------------------------------

    def _sync_usage(self) -> None:
        self.run.usage = self.usage_at_start + self.proposer.usage

    def judge(self, rec: CandidateRecord, proposal: Proposal) -> CandidateRecord:
        """Verify (and on CUDA bench) one candidate whose pending record is already stored."""
        if proposal.source is None:
            rec = rec.model_copy(
                update={
                    "status": "rejected",
                    "category": "no_code",
                    "reason": proposal.error or "the reply held no code",
                }
            )
            self.save(rec)
            return rec
        twin = self.judging.twin(self, rec, proposal.source)
        if twin is not None:
            # LLMs repeat themselves: the same source is judged (and timed) once per run.
            self.observer.event(f"{rec.id} is {twin.id} again: not judged twice")
            rec = rec.model_copy(
                update={
                    "status": twin.status,
                    "category": twin.category,
                    "reason": f"same source as {twin.id}"
                    + (f": {twin.reason}" if twin.reason else ""),
                    "verdict": twin.verdict.model_copy(update={"duplicate_of": twin.id})
                    if twin.verdict
                    else None,
                    "bench": twin.bench,
                    "speedup": twin.speedup,
                    "compile": twin.compile,
                    "became_best": False,
                }
            )
            self.save(rec)
            return rec
        return self.judging.verify(self, rec, proposal.source)

    def judged_twin(self, rec: CandidateRecord, source: str) -> CandidateRecord | None:
        """An earlier judged candidate of this run with the same source."""
        digest = _sha(source)
        return next(
            (
                r
                for r in self.records
                if r.id != rec.id and r.status != "pending" and r.sha256 == digest
            ),
            None,
        )

    def sanitize_best(self) -> str | None:
        """Before promotion: the best's small cases under compute-sanitizer (memcheck and
        racecheck). Records the tools that ran clean in its verdict; returns why not, if not."""
        best = self.best_id()
        if best is None:
            return "no candidate beat the seed"
        rec = next(r for r in self.records if r.id == best)
        if rec.verdict is None:
            return f"{best} has no verdict"
        self.observer.event(f"running {best}'s small cases under compute-sanitizer")
        path = store.candidate_path(self.op, self.run.id, best)
        failure, tools = self.judging.sanitize(self, best, path)
        verdict = rec.verdict.model_copy(update={"sanitized": tools})
        if failure is None:
            self.save(rec.model_copy(update={"verdict": verdict}))
            return None
        verdict = verdict.model_copy(
            update={"accepted": False, "outcome": "rejected", "category": failure.category,
                    "reason": failure.reason}
        )  # fmt: skip
        self.save(
            rec.model_copy(
                update={"verdict": verdict, "status": "rejected", "category": failure.category,
                        "reason": failure.reason, "became_best": False}
            )
        )  # fmt: skip
        return f"{best}: {failure.category}: {failure.reason}"

    def close(self) -> None:
        self.judging.close()

    def bench(self, rec: CandidateRecord) -> CandidateRecord:
        """Time an accepted candidate against the best, interleaved; keep it if it wins. A bench
        process that fails (out of GPU memory beside another job's judge, a crash) leaves it
        accepted and untimed, with why, and the run goes on (a resumed round times it again);
        a bad request or a missing GPU is the run's error, not the candidate's."""
        if not self.budget.bench_accepted:  # as on the CPU: untimed, it beats no seed
            return self._untimed(rec, "not timed (--no-bench)", first_best(self))
        try:
            return self.judging.bench(self, rec)
        except UsageError:
            raise
        except KernelgenError as e:
            self.observer.event(f"{rec.id}: not timed: {e}")
            return self._untimed(rec, f"not timed: {e}", False)

    def _untimed(self, rec: CandidateRecord, why: str, best: bool) -> CandidateRecord:
        rec = rec.model_copy(update={"reason": why, "became_best": best})
        self.save(rec)
        return rec

    def next_best_seq(self) -> int | None:
        """The best_seq a new best takes: None in a run no pool has judged (its best is the
        last to become best in record order)."""
        seqs = [r.best_seq for r in self.records if r.best_seq is not None]
        return max(seqs) + 1 if seqs else None

    # ---- one round ---------------------------------------------------------------------------

    def chains(self, round_no: int) -> list[list[CandidateRecord]]:
        """This round's candidates grouped as [base, fix1, fix2, ...]; -tuned children apart."""
        groups: dict[str, list[CandidateRecord]] = {}
        for rec in self.records:
            if rec.round != round_no or rec.id.endswith("-tuned"):
                continue
            base = _FIX.sub("", rec.id)
            groups.setdefault(base, []).append(rec)
        return [sorted(g, key=lambda r: _fix_no(r.id)) for g in groups.values()]

    def _stored_proposal(self, rec: CandidateRecord) -> Proposal:
        path = store.candidate_path(self.op, self.run.id, rec.id)
        return Proposal(
            source=path.read_text() if path.is_file() else None,
            transcript=store.load_transcript(self.op, self.run.id, rec.id),
            name=rec.id,
            error=rec.reason,
        )

    def finish_chain(self, chain: list[CandidateRecord], round_no: int) -> None:
        """Judge a pending candidate, run the repair turns of a rejected one, tune an accepted
        one: whatever the chain still lacks."""
        last = chain[-1]
        if last.status == "pending":
            last = self.judge(last, self._stored_proposal(last))
        elif last.status == "accepted" and self.device == "cuda" and last.bench is None:
            last = self.bench(last)
        while last.status == "rejected" and _fix_no(last.id) < self.budget.repairs:
            if self.out_of_budget():
                return
            failed = self._stored_proposal(last)
            failure = f"{last.category}: {last.reason}"
            self.observer.event(f"asking for a repair of {last.id}")
            # Chains judged side by side (a pool) ask one at a time, each with the history as
            # it stands; the store's writes go on meanwhile.
            with self.asking:
                with self.lock:
                    ctx = self.context(round_no)
                fix = self.proposer.repair(ctx, failed, failure)
                with self.lock:
                    self._sync_usage()
            if fix is None:
                return
            rec = self.new_record(
                f"{_FIX.sub('', last.id)}-fix{_fix_no(last.id) + 1}", round_no, last.id, fix
            )
            last = self.judge(rec, fix)
        tunes = self.budget.tune_accepted and self.proposer.name != "tune"
        if last.status == "accepted" and self.device == "cuda" and tunes:
            self.tune_child(last, round_no)

    def tune_child(self, parent: CandidateRecord, round_no: int) -> None:
        """Tune the declared meta-parameters of a correct candidate, as a child candidate."""
        source = store.candidate_source(self.op, self.run.id, parent.id)
        if tuning.space(source) is None:
            return
        cid = f"{parent.id}-tuned"
        existing = next((r for r in self.records if r.id == cid), None)
        if existing is not None:  # a resumed run: finish what the kill interrupted
            if existing.status == "pending":
                self.judge(existing, self._stored_proposal(existing))
            elif existing.status == "accepted" and existing.bench is None:
                self.bench(existing)
            return
        from kernelgen.propose.tune import tune_source

        self.observer.event(f"tuning {parent.id}")
        tuned = tune_source(self.spec, source, timer=self.judging.timer)
        if tuned is None or tuned.source == source:
            return
        rec = self.new_record(cid, round_no, parent.id, tuned, proposer="tune")
        self.judge(rec, tuned)

    def new_record(
        self,
        cid: str,
        round_no: int,
        parent: str | None,
        proposal: Proposal,
        proposer: str | None = None,
    ) -> CandidateRecord:
        rec = CandidateRecord(
            id=cid,
            round=round_no,
            parent=parent,
            proposer=proposer or self.proposer.name,
            model=self.proposer.model if proposer is None else None,
            status="pending",
            sha256=_sha(proposal.source) if proposal.source is not None else None,
        )
        self.save(rec, proposal.source, proposal)
        return rec

    def play_round(self, round_no: int) -> bool:
        """Returns False when the proposer had nothing more to offer."""
        chains = self.chains(round_no)
        if chains and not self.out_of_budget():
            self.judging.finish_chains(self, chains, round_no, stop=self.out_of_budget)
        missing = self.budget.candidates - len(chains)
        if missing <= 0:
            return True
        if self.out_of_budget():
            return True
        parent = self.best_id() or "seed"
        self.observer.event(f"round {round_no}: asking {self.proposer.name} for {missing}")
        proposals = self.proposer.propose(self.context(round_no), missing)
        self._sync_usage()
        if not proposals and not chains:
            return False
        records = [
            self.new_record(f"r{round_no:02d}-c{len(chains) + i + 1:02d}", round_no, parent, p)
            for i, p in enumerate(proposals)
        ]
        # Proposals already paid for are judged even when the budget ran out meanwhile; the
        # budget stops the next request, not the judging of what arrived.
        self.judging.finish_chains(self, [[rec] for rec in records], round_no)
        return True

    def prepare(self) -> None:
        """What a run needs before its first round: on CUDA the seed's verdict (deadlines) and
        its timings (what the first candidate is benched and shown against)."""
        self.judging.prepare(self)

    def run_loop(self) -> RunRecord:
        self.prepare()
        stopped = None
        stale_rounds = 0
        for round_no in range(self.run.rounds_done + 1, self.budget.rounds + 1):
            stopped = (
                self.out_of_budget()
                or stops.target_reached(self.budget, self.best_bench())
                or stops.first_accepted(self.budget, self.records)
            )
            if stopped:
                break
            best_before = self.best_id()
            if not self.play_round(round_no):
                note = getattr(self.proposer, "note", None)
                stopped = f"{self.proposer.name} had nothing more to propose" + (
                    f": {note}" if note else ""
                )
                break
            stopped = self.out_of_budget()
            if stopped:
                break
            self.run.rounds_done = round_no
            store.save_run(self.run)
            stale_rounds = stale_rounds + 1 if self.best_id() == best_before else 0
            # Under --first-accepted every round before the stop is one without a gain; the
            # next round's first check stops it.
            stagnates = self.device == "cuda" and not self.budget.first_accepted
            if stagnates and stale_rounds >= self.budget.stagnation:
                stopped = f"no gain in {stale_rounds} rounds"
                break
        n = self.budget.rounds
        self.run.stopped = stopped or f"all {n} round{'s' if n != 1 else ''} done"
        self.run.state = "finished"
        self.run.elapsed_s = round(self._elapsed(), 1)
        store.save_run(self.run)
        self.observer.event(f"stopped: {self.run.stopped}")
        return self.run


def seed_source(op: str) -> str:
    """seeds/<op>.py, or NO_SEED for an operator without one."""
    return seed_path(op).read_text() if has_seed(op) else NO_SEED


def _fix_no(cid: str) -> int:
    m = _FIX.search(cid)
    return int(m.group(1)) if m else 0


def _sha(source: str) -> str:
    from kernelgen.verify import sha256

    return sha256(source)


def render_spec(spec: OpSpec) -> str:
    """The operator's contract as a proposer reads it."""
    d = spec.data

    def describe(i: TensorInput | ScalarInput) -> str:
        if isinstance(i, ScalarInput):
            drawn = f", drawn per run in [{i.draw[0]:g}, {i.draw[1]:g}]" if i.draw else ""
            if i.dim is not None:
                return f"scalar = the size's {i.dim!r}"
            return f"scalar = {i.value!r}{drawn}"
        return f"tensor {i.shape}"

    inputs = ", ".join(f"{i.name}: {describe(i)}" for i in d.inputs)
    sizes = "; ".join(
        f"{s.name} {s.dims}{' ' + s.layout if s.layout != 'contiguous' else ''}" for s in d.sizes
    )
    bench = "; ".join(f"{b.name} {b.dtype}" for b in d.bench)
    return (
        f"operator {spec.name}({', '.join(spec.arg_names)}); inputs: {inputs}\n"
        f"dtypes: {', '.join(d.dtypes)}; value distributions: {', '.join(d.dists)}\n"
        f"correctness sizes: {sizes}\n"
        f"benchmark shapes: {bench}\n"
        f"tuned-config bucket dims: {', '.join(d.bucket) or 'none'}"
    )


def start(
    op: str,
    proposer: Proposer,
    *,
    device: str,
    budget: Budget,
    source: str | None = None,
    base_url: str | None = None,
    observer: Observer | None = None,
    judging: Judging | None = None,
) -> Loop:
    spec = load_spec(op)
    if device == "cpu" and not any(c.interpreter for c in spec.cases):
        # A verdict with no case run is no evidence (an imported problem whose shapes are
        # literals: GPU-only), and such an operator's first accepted candidate becomes its best.
        raise UsageError(f"{op} has no case the CPU interpreter can run: use --device cuda")
    judging = judging or LocalJudging()
    settings = RunSettings(
        op=op,
        proposer=proposer.name,
        model=proposer.model,  # type: ignore[arg-type]
        base_url=base_url,
        device=device,  # type: ignore[arg-type]
        source=source,
        budget=budget,
        seed=random.SystemRandom().randrange(2**31),
    )
    run = RunRecord(
        id=store.new_run_id(proposer.name),
        op=op,
        settings=settings,
        environment=judging.environment(device),
        state="running",
    )
    store.save_run(run)
    return _attach(spec, run, proposer, observer, [], judging)


def resume(
    op: str,
    run_id: str,
    proposer: Proposer,
    observer: Observer | None = None,
    judging: Judging | None = None,
) -> Loop:
    spec = load_spec(op)
    run = store.load_run(op, run_id)
    records = store.load_candidates(op, run_id)
    run.state = "running"
    run.stopped = None
    return _attach(spec, run, proposer, observer, records, judging)


def _attach(
    spec: OpSpec,
    run: RunRecord,
    proposer: Proposer,
    observer: Observer | None,
    records: list[CandidateRecord],
    judging: Judging | None,
) -> Loop:
    return Loop(
        spec=spec,
        run=run,
        proposer=proposer,
        observer=observer or _Silent(),
        records=records,
        usage_at_start=run.usage,
        elapsed_at_start=run.elapsed_s,
        judging=judging or LocalJudging(),
    )


def taken(records: list[CandidateRecord]) -> int:
    """How many proposals a replay or files proposer already supplied (for resume)."""
    return sum(1 for r in records if not _FIX.search(r.id) and not r.id.endswith("-tuned"))


__all__ = ["Loop", "Observer", "start", "resume", "taken", "render_spec", "Usage"]
