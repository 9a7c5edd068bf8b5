"""The pipeline's own benchmark (issue [E]): how long kernelgen takes to judge, time and tune, on
the machine it runs on. Per operator:

- verify of the seed, cold (an empty Triton cache: everything compiled) and warm (the cache the
  cold run filled, a fresh judge: what a second run of the same kernels pays);
- bench of the seed with fresh peers (fills the peer cache) and again with cached peers, and the
  worst timing spread over the bench shapes;
- tune of the seed's declared space over every bucket (the `tune` proposer's search);
- a batch of tuner candidates (at least --batch): the seed's space crossed with num_stages until
  the batch is big enough, compiled ahead in parallel and timed in one worker: candidates judged
  per GPU-minute is the batch size over the wall minutes of compile + timing;
- one optimize round as the loop plays it (`files` proposer, one candidate: the seed under
  another hash): the candidate verified and benched against the best, its tuned child searched,
  verified and benched. The run's preparation (the seed's verdict and bench, paid once per run)
  is timed apart from the round.

Writes one JSON record (evaluations/pipeline/bench-<time>.json, or --out), re-written after every
step so a call cut short keeps what it measured, and prints a table last.
    python scripts/bench_pipeline.py [--ops softmax rms_norm silu_and_mul] [--batch 40]
"""

from __future__ import annotations

import argparse
import faulthandler
import itertools
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class OpFigures(BaseModel):
    op: str
    verify_cold_s: float | None = None
    verify_warm_s: float | None = None
    verify_phases_cold: dict[str, Any] = Field(default_factory=dict)
    verify_phases_warm: dict[str, Any] = Field(default_factory=dict)
    verify_in_run_s: float | None = None
    verify_phases_in_run: dict[str, Any] = Field(default_factory=dict)
    verify_outcome: str | None = None
    bench_fresh_peers_s: float | None = None
    bench_cached_peers_s: float | None = None
    worst_spread: float | None = None
    worst_spread_shape: str | None = None
    spreads: dict[str, float] = Field(default_factory=dict)
    tune_space: int | None = None
    tune_s: float | None = None
    tune_note: str | None = None
    batch: int | None = None
    batch_compile_s: float | None = None
    batch_timing_s: float | None = None
    batch_per_gpu_minute: float | None = None
    round_prepare_s: float | None = None
    round_s: float | None = None
    round_run: str | None = None
    round_candidates: dict[str, str] = Field(default_factory=dict)
    round_events: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class PipelineBench(BaseModel):
    created: str
    environment: dict[str, str | bool | None]
    command: str
    ops: list[OpFigures] = Field(default_factory=list)


def _batch(op: str, source: str, size: int) -> list[str]:
    """At least `size` variants of the seed: its declared space, crossed with num_stages as far
    as needed (distinct compiles and timings, which is what a throughput figure needs)."""
    from kernelgen import tuning

    space = dict(tuning.space(source) or {"num_warps": [4]})
    stages = [1, 2, 3, 4, 5, 6, 7, 8]
    configs = tuning.configs(space)
    if len(configs) < size and "num_stages" not in space:
        need = -(-size // len(configs))
        space["num_stages"] = stages[: max(1, min(len(stages), need))]
        configs = tuning.configs(space)
    from kernelgen.propose.tune import _any_key
    from kernelgen.spec import load_spec

    key = _any_key(load_spec(op))
    return [tuning.with_tuned(source, {key: c}) for c in itertools.islice(configs, max(size, 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", nargs="*", default=["softmax", "rms_norm", "silu_and_mul"])
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--skip", nargs="*", default=[], help="steps to skip: verify bench tune batch round"
    )
    args = parser.parse_args()
    os.chdir(ROOT)

    from kernelgen.env import environment
    from kernelgen.spec import seed_path

    env = environment("cuda")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or ROOT / "evaluations" / "pipeline" / f"bench-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = PipelineBench(
        created=stamp,
        environment=env.model_dump(),
        command="python scripts/bench_pipeline.py " + " ".join(sys.argv[1:]),
    )

    def save() -> None:
        tmp = out.with_suffix(".tmp")
        tmp.write_text(record.model_dump_json(indent=2))
        tmp.replace(out)

    for op in args.ops:
        fig = OpFigures(op=op)
        record.ops.append(fig)
        seed = seed_path(op)
        if "verify" not in args.skip:
            _verify(op, seed, fig)
            save()
        if "bench" not in args.skip:
            _bench(op, seed, fig)
            save()
        if "tune" not in args.skip:
            _tune(op, seed, fig)
            save()
        if "batch" not in args.skip:
            _batch_rate(op, seed, args.batch, fig)
            save()
        if "round" not in args.skip:
            _round(op, seed, fig)
            save()
    print(f"record: {out}")
    _table(record)
    # A process that outlives its work is a bug to find, not to wait for: on the H200 this
    # script stayed up after its table (2026-12-03). In 60 s every thread's stack is printed
    # to stderr and the process exits.
    faulthandler.dump_traceback_later(60, exit=True)


def _verify(op: str, seed: Path, fig: OpFigures) -> None:
    """Cold: a fresh judge and an empty Triton cache (everything compiled). Warm: a fresh judge
    on the cache the cold run filled (what a second run of the same kernels pays). In-run: a
    second candidate of the warm judge's run, the seed again under another hash (truth, runners
    and compiles reused; what the loop pays per candidate)."""
    from kernelgen.verify import Evaluator, verify_candidate

    cache = Path(tempfile.mkdtemp(prefix="kernelgen-cold-cache-"))
    old = os.environ.get("KERNELGEN_TRITON_CACHE")
    os.environ["KERNELGEN_TRITON_CACHE"] = str(cache)
    twin = cache.parent / f"{cache.name}-{op}_twin.py"
    twin.write_text(seed.read_text() + "\n# the seed again, another candidate of the run\n")
    try:
        start = time.monotonic()
        v = verify_candidate(op, seed, device="cuda")
        fig.verify_cold_s = round(time.monotonic() - start, 2)
        fig.verify_phases_cold = v.phases.model_dump() if v.phases else {}
        _said(fig, op, "cold", fig.verify_cold_s, v)
        start = time.monotonic()
        with Evaluator(op, "cuda") as ev:
            for label, path in (("warm", seed), ("in-run", twin)):
                v = verify_candidate(op, path, device="cuda", evaluator=ev)
                wall = round(time.monotonic() - start, 2)
                phases = v.phases.model_dump() if v.phases else {}
                if label == "warm":
                    fig.verify_warm_s, fig.verify_phases_warm = wall, phases
                    ev.calibrate(v)
                else:
                    fig.verify_in_run_s, fig.verify_phases_in_run = wall, phases
                _said(fig, op, label, wall, v)
                start = time.monotonic()
    except Exception as e:  # a figure missing is reported, the other steps still run
        fig.errors.append(f"verify: {type(e).__name__}: {e}")
    finally:
        if old is None:
            os.environ.pop("KERNELGEN_TRITON_CACHE", None)
        else:
            os.environ["KERNELGEN_TRITON_CACHE"] = old
        shutil.rmtree(cache, ignore_errors=True)
        twin.unlink(missing_ok=True)


def _said(fig: OpFigures, op: str, label: str, wall: float, v: Any) -> None:
    fig.verify_outcome = v.outcome if v.accepted else f"{v.category}: {v.reason}"
    phases = v.phases.model_dump() if v.phases else {}
    print(f"{op} verify {label}: {wall} s {fig.verify_outcome} {phases}", flush=True)


def _bench(op: str, seed: Path, fig: OpFigures) -> None:
    from kernelgen.bench import bench_files, save_bench

    try:
        for peers, attr in ((True, "bench_fresh_peers_s"), ("cached", "bench_cached_peers_s")):
            start = time.monotonic()
            (rec,) = bench_files(op, [("seed", seed)], peers=peers)
            setattr(fig, attr, round(time.monotonic() - start, 2))
            print(f"{op} bench peers={peers}: {getattr(fig, attr)} s", flush=True)
        save_bench(rec, op)
        worst = None
        for s in rec.shapes:
            for who, t in (("seed", s.candidate), ("eager", s.eager), ("compile", s.compile)):
                if t is None or t.cached:
                    continue
                fig.spreads[f"{s.shape}/{who}"] = round(t.spread, 4)
                if worst is None or t.spread > worst[0]:
                    worst = (t.spread, f"{s.shape}/{who}")
        if worst:
            fig.worst_spread, fig.worst_spread_shape = round(worst[0], 4), worst[1]
    except Exception as e:  # noqa: BLE001
        fig.errors.append(f"bench: {type(e).__name__}: {e}")


def _tune(op: str, seed: Path, fig: OpFigures) -> None:
    from kernelgen import tuning
    from kernelgen.propose.tune import search
    from kernelgen.spec import load_spec

    try:
        source = seed.read_text()
        fig.tune_space = len(tuning.configs(tuning.space(source) or {}))
        start = time.monotonic()
        found = search(load_spec(op), source)
        fig.tune_s = round(time.monotonic() - start, 2)
        fig.tune_note = found.note
        print(
            f"{op} tune of {fig.tune_space} configs: {fig.tune_s} s ({fig.tune_note})", flush=True
        )
    except Exception as e:  # noqa: BLE001
        fig.errors.append(f"tune: {type(e).__name__}: {e}")


def _batch_rate(op: str, seed: Path, size: int, fig: OpFigures) -> None:
    from kernelgen.bench import tune_variants

    try:
        sources = [seed.read_text(), *_batch(op, seed.read_text(), size)]
        fig.batch = len(sources) - 1
        start = time.monotonic()
        result = tune_variants(op, sources, baseline=0)
        wall = time.monotonic() - start
        fig.batch_compile_s = result.compile_seconds
        fig.batch_timing_s = result.seconds
        timed = sum(1 for v in result.variants[1:] if any(r.median_us for r in v.shapes))
        fig.batch_per_gpu_minute = round(timed / (wall / 60), 1)
        print(
            f"{op} batch of {fig.batch}: {wall:.1f} s (compile {result.compile_seconds} s, "
            f"timing {result.seconds} s), {timed} timed, {fig.batch_per_gpu_minute}/GPU-min",
            flush=True,
        )
    except Exception as e:  # noqa: BLE001
        fig.errors.append(f"batch: {type(e).__name__}: {e}")


class _Clock:
    """The loop's events with the seconds since the step began: where a round's time goes."""

    def __init__(self, op: str, fig: OpFigures):
        self.op, self.fig, self.start = op, fig, time.monotonic()

    def event(self, message: str) -> None:
        line = f"{time.monotonic() - self.start:7.2f} s  {message}"
        self.fig.round_events.append(line)
        print(f"{self.op} round: {line}", flush=True)

    def candidate(self, record: Any, run: Any) -> None:
        pass


def _round(op: str, seed: Path, fig: OpFigures, device: str = "cuda") -> None:
    """device="cpu" plays the same round without a GPU (verify only): how this step is tried
    here before it spends device time."""
    from kernelgen.propose.files import FilesProposer
    from kernelgen.records import Budget
    from kernelgen.run import loop

    folder = Path(tempfile.mkdtemp(prefix="kernelgen-round-"))
    (folder / f"{op}_twin.py").write_text(
        seed.read_text() + "\n# the seed again, under another hash: a candidate to judge\n"
    )
    clock = _Clock(op, fig)
    # A run like any other, stored under evaluations/<op>/ and named in the record.
    played = loop.start(
        op,
        FilesProposer(folder),
        device=device,
        budget=Budget(rounds=1, candidates=1, repairs=0),
        observer=clock,
    )
    fig.round_run = played.run.id
    try:
        start = time.monotonic()
        played.prepare()
        fig.round_prepare_s = round(time.monotonic() - start, 2)
        clock.event("prepared: the round starts")
        start = time.monotonic()
        played.play_round(1)
        fig.round_s = round(time.monotonic() - start, 2)
        clock.event("round done")
        fig.round_candidates = {
            r.id: r.status + (f" x{r.speedup:.3f}" if r.speedup else "") for r in played.records
        }
    except Exception as e:  # noqa: BLE001
        fig.errors.append(f"round: {type(e).__name__}: {e}")
    finally:
        played.close()
        shutil.rmtree(folder, ignore_errors=True)


def _table(record: PipelineBench) -> None:
    cols = ["op", "verify cold", "verify warm", "verify in-run", "bench", "bench cached",
            "worst spread", "tune (space)", "batch/GPU-min", "round (prepare)"]  # fmt: skip
    print(" | ".join(cols))
    for f in record.ops:
        row = [
            f.op,
            f"{f.verify_cold_s}",
            f"{f.verify_warm_s}",
            f"{f.verify_in_run_s}",
            f"{f.bench_fresh_peers_s}",
            f"{f.bench_cached_peers_s}",
            f"{f.worst_spread} ({f.worst_spread_shape})",
            f"{f.tune_s} ({f.tune_space})",
            f"{f.batch_per_gpu_minute} ({f.batch})",
            f"{f.round_s} ({f.round_prepare_s})",
        ]
        print(" | ".join(row))
        for e in f.errors:
            print(f"  error: {e[:300]}")


if __name__ == "__main__":
    main()
