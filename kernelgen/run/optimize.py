"""`kernelgen optimize`: choose the proposer, start or resume a run, promote the winner."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kernelgen import paths, store
from kernelgen.config import load_settings
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.package.catalog import manifest
from kernelgen.propose.base import Proposer
from kernelgen.records import (
    Budget,
    CandidateRecord,
    Category,
    Outcome,
    PromoteBench,
    RunRecord,
)
from kernelgen.run import loop
from kernelgen.run.judging import Judging, LocalJudging
from kernelgen.run.pooled import PooledJudging
from kernelgen.spec import has_seed, known_ops, load_spec

if TYPE_CHECKING:
    from kernelgen.run.pool import Pool


class OptimizeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    proposer: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    rounds: int = 4
    candidates: int = 2
    repairs: int = 2
    device: str = "cpu"
    max_tokens_total: int | None = None
    max_cost_usd: float | None = None
    time_limit_s: float | None = None
    target_pct: float | None = None
    resume: str | None = None
    source: str | None = None
    gpus: str | None = None  # --gpus N|all: one evaluation worker per GPU (workers.py)
    ray: str | None = None  # --ray ADDRESS|auto: the workers as Ray actors (ray_pool.py)
    # --no-promote: the run's best stays in its run (a suite's problems are measured, not shipped);
    # the compute-sanitizer pass, a gate of promotion only, is skipped with it.
    promote: bool = True
    # --no-tune: accepted candidates are not tuned; a suite on a GPU lease spends its time on
    # problems, and tunes its winners after (`--proposer tune` on a run's best).
    tune: bool = True
    # --first-accepted: the run stops at its first accepted candidate (a suite on a GPU lease,
    # the agent's files in its order of preference: the fallbacks are judged only if needed).
    first_accepted: bool = False
    # --no-bench: accepted candidates are not timed in the run (a KernelBench suite times each
    # as KernelBench does, after the run: the pipeline's own bench would time it twice).
    bench: bool = True


class CandidateSummary(BaseModel):
    id: str
    round: int
    status: str
    outcome: Outcome | None = Field(
        None, description="the verdict's word: accepted-partial where some cases were not run"
    )
    category: Category | None
    reason: str | None
    speedup: float | None
    created: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _outcome_of_record(cls, data: Any) -> Any:
        # Made from a CandidateRecord (from_attributes), whose outcome is its verdict's.
        if isinstance(data, CandidateRecord):
            fields = {k: getattr(data, k) for k in cls.model_fields if hasattr(data, k)}
            return fields | {"outcome": data.verdict.outcome if data.verdict else None}
        return data


class OptimizeSummary(BaseModel):
    """The --json line of `kernelgen optimize`, one per operator."""

    op: str
    run_id: str
    proposer: str
    device: str
    stopped: str
    candidates: list[CandidateSummary]
    best: str | None
    promoted: bool
    tokens: int
    cost_usd: float | None


def resolve_ops(ops: list[str], all_ops: bool, resume: str | None) -> list[str]:
    known = known_ops()
    names = known if all_ops else ops
    if not names:
        raise UsageError("name an operator (known: " + ", ".join(known) + ") or pass --all")
    for name in names:
        load_spec(name)  # unknown -> UsageError listing the known ones
    if resume and len(names) != 1:
        raise UsageError("--resume continues one run: name exactly one operator")
    return names


def make_proposer(
    name: str,
    op: str,
    options: OptimizeOptions,
    records: list[CandidateRecord],
    judging: Judging | None = None,
) -> Proposer:
    skip = loop.taken(records)
    if name == "llm":
        settings = load_settings(
            model=options.model, base_url=options.base_url, api_key=options.api_key
        )
        if not settings.llm_configured:
            raise UsageError(
                "--proposer llm needs a model and an endpoint: --model and "
                "--base-url, or KERNELGEN_MODEL / OPENAI_BASE_URL"
            )
        if options.max_cost_usd is not None and (
            settings.price_in_per_mtok is None or settings.price_out_per_mtok is None
        ):
            # Without prices the cost is unknown, and a money budget would never stop the run.
            raise UsageError(
                "--max-cost needs prices: set KERNELGEN_PRICE_IN_PER_MTOK and "
                "KERNELGEN_PRICE_OUT_PER_MTOK (USD per million tokens), or price-in-per-mtok / "
                "price-out-per-mtok under [tool.kernelgen]"
            )
        from kernelgen.propose.llm import LLMProposer

        return LLMProposer(
            model=settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            timeout_s=settings.request_timeout_s,
            max_retries=settings.max_retries,
            price_in_per_mtok=settings.price_in_per_mtok,
            price_out_per_mtok=settings.price_out_per_mtok,
        )
    if name == "tune":
        from kernelgen.propose.tune import TuneProposer

        timer = judging.timer if judging is not None else None
        return TuneProposer(load_spec(op), options.device, skip=skip, timer=timer)
    if name == "agent":
        # An agent pushes its candidates (kernelgen agent submit): resuming asks it for nothing.
        from kernelgen.propose.agent import AgentProposer

        return AgentProposer()
    if not options.source:
        raise UsageError(
            f"--proposer {name} needs --from ({'a run id' if name == 'replay' else 'a folder'})"
        )
    if name == "replay":
        from kernelgen.propose.replay import ReplayProposer

        run_id = Path(options.source).name  # accepts evaluations/<op>/<id> too
        store.load_run(op, run_id)
        return ReplayProposer(op, run_id, skip=skip)
    from kernelgen.propose.files import FilesProposer

    return FilesProposer(Path(options.source), skip=skip)


def default_proposer(options: OptimizeOptions) -> str:
    if options.proposer:
        return options.proposer
    settings = load_settings(
        model=options.model, base_url=options.base_url, api_key=options.api_key
    )
    return "llm" if settings.llm_configured else "tune"


def open_workers(op: str, device: str, options: OptimizeOptions) -> Pool | None:
    """The pool --gpus / --ray ask for, or None (one judge in this process, as before)."""
    if options.gpus is None and options.ray is None:
        return None
    if not has_seed(op):
        # A pool's workers judge and time against the seed; an operator without one is judged
        # by the one judge of this process, against torch eager.
        raise UsageError(f"{op} has no seed: run it without --gpus or --ray")
    import random

    from kernelgen import paths
    from kernelgen.run.station import StationConfig
    from kernelgen.run.workers import open_pool
    from kernelgen.verify import target

    config = StationConfig(
        op=op,
        device=device,  # type: ignore[arg-type]
        seed=random.SystemRandom().randrange(2**31),
        root=str(paths.root()),
        # As the single-worker loop's judge: on CPU an accepted candidate is compiled for the
        # H200 too.
        gpu_target=target.DEFAULT if device == "cpu" else None,
    )
    return open_pool(config, gpus=options.gpus, ray=options.ray)


def optimize_op(
    op: str, options: OptimizeOptions, observer: loop.Observer, pool: Pool | None = None
) -> OptimizeSummary:
    """One operator's run. `pool` (tests, scripts) judges on given workers; without one,
    --gpus / --ray open a pool for the run and close it after."""
    run = store.load_run(op, options.resume) if options.resume else None
    device = run.settings.device if run is not None else options.device
    own = pool is None
    if pool is None:
        if options.gpus is not None or options.ray is not None:
            observer.event("starting the evaluation workers")
        pool = open_workers(op, device, options)
    judging: Judging = PooledJudging(pool) if pool is not None else LocalJudging()
    try:
        return _optimize(op, options, observer, run, judging)
    finally:
        if own and pool is not None:
            pool.close()


def _optimize(
    op: str,
    options: OptimizeOptions,
    observer: loop.Observer,
    run: RunRecord | None,
    judging: Judging,
) -> OptimizeSummary:
    if run is not None:
        opts = options.model_copy(
            update={
                "proposer": run.settings.proposer,
                "model": run.settings.model,
                "base_url": run.settings.base_url or options.base_url,
                "device": run.settings.device,
                "source": run.settings.source,
            }
        )
        records = store.load_candidates(op, run.id)
        proposer = make_proposer(run.settings.proposer, op, opts, records, judging)
        runner = loop.resume(op, run.id, proposer, observer, judging)
    else:
        name = default_proposer(options)
        proposer = make_proposer(name, op, options, [], judging)
        budget = Budget(
            rounds=options.rounds,
            candidates=options.candidates,
            repairs=options.repairs,
            max_tokens_total=options.max_tokens_total,
            max_cost_usd=options.max_cost_usd,
            time_limit_s=options.time_limit_s,
            target_pct=options.target_pct,
            tune_accepted=options.tune,
            first_accepted=options.first_accepted,
            bench_accepted=options.bench,
        )
        runner = loop.start(
            op,
            proposer,
            device=options.device,
            budget=budget,
            source=options.source,
            base_url=options.base_url,
            observer=observer,
            judging=judging,
        )
    # Named before the first step, which on CUDA takes minutes (the seed is judged and timed).
    folder = store.run_dir(op, runner.run.id).relative_to(paths.root())
    observer.event(f"run {runner.run.id} {'resumed' if run is not None else 'started'}: {folder}/")
    from kernelgen.run.pool import PoolLost

    try:
        run = runner.run_loop()
        if not options.promote:
            if run.settings.device == "cuda" and run.best is not None:
                observer.event("not promoted: --no-promote")
        elif run.settings.device == "cuda" and run.best is not None:
            why = runner.sanitize_best()
            if why is not None:
                observer.event(f"not promoted: {why}")
            run = runner.run
        run.promoted = options.promote and maybe_promote(run, observer, judging)
    except PoolLost as e:
        # Every record is as the workers left it (a candidate in flight stays pending), so the
        # run resumes where it stopped, on whatever workers the resume is given.
        with runner.lock:
            runner.run.state = "failed"
            runner.run.stopped = f"the evaluation workers were lost: {e}"
            store.save_run(runner.run)
        raise KernelgenError(
            f"{e}; run {runner.run.id} stopped, resumable: kernelgen optimize {op} "
            f"--resume {runner.run.id} (with --gpus or --ray again)"
        ) from None
    finally:
        runner.close()
    store.save_run(run)
    return summarize(run, runner.records)


def maybe_promote(run: RunRecord, observer: loop.Observer, judging: Judging | None = None) -> bool:
    """A CUDA run whose best beats the library's kernel (or the seed) goes into generated/."""
    if run.settings.device != "cuda" or run.best is None:
        return False
    entry = manifest().get(run.op)
    if isinstance(entry, dict) and entry.get("run_id") and entry.get("candidate_id"):
        from kernelgen.bench import accepts
        from kernelgen.package.catalog import generated_source

        _, lib_path = generated_source(run.op)
        best_path = store.candidate_path(run.op, run.id, run.best)
        observer.event("benchmarking the best against the library's kernel")
        mine, theirs = (judging or LocalJudging()).promote_bench(
            run.op, run.best, best_path, lib_path
        )
        wins, why = accepts(mine, theirs)
        # The decision's evidence, kept beside the run whichever way it went: both records of
        # the interleaved bench, and the rule's words.
        store.write_atomic(
            store.run_dir(run.op, run.id) / f"promote-{run.best}-{store.stamp()}.json",
            PromoteBench(wins=wins, why=why, candidate=mine, library=theirs).model_dump_json(
                indent=2
            ),
        )
        if not wins:
            observer.event(f"not promoted: {why}")
            return False
    from kernelgen.package import promote_from_run

    promote_from_run(run.op, run.id, run.best)
    return True


def summarize(run: RunRecord, records: list[CandidateRecord]) -> OptimizeSummary:
    return OptimizeSummary(
        op=run.op,
        run_id=run.id,
        proposer=run.settings.proposer,
        device=run.settings.device,
        stopped=run.stopped or "",
        best=run.best,
        promoted=run.promoted,
        tokens=run.usage.tokens,
        cost_usd=run.usage.cost_usd,
        candidates=[CandidateSummary.model_validate(r, from_attributes=True) for r in records],
    )
