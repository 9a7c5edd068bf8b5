"""The loop's CUDA path (bench, tune, select, promote) on CPU, with the GPU steps faked: the
bookkeeping must be right before a GPU second is spent on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelgen import store
from kernelgen.propose.tune import TuneProposer
from kernelgen.records import (
    BenchRecord,
    Budget,
    Ceilings,
    Environment,
    PeerTime,
    ShapeTiming,
    Verdict,
)
from kernelgen.run import loop, optimize
from kernelgen.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
ENV = Environment(
    device="cuda",
    gpu="NVIDIA H200",
    torch="2.11",
    triton="3.6.0",
    python="3.12",
    host="h",
    interpreter=False,
)
CEIL = Ceilings(
    gpu="NVIDIA H200",
    copy_gbps=4250,
    bf16_tflops=700,
    launch_us=3.3,
    measured="t",
    torch="2.11",
    triton="3.6.0",
)


def bench_record(op: str, label: str, us: float) -> BenchRecord:
    spec = load_spec(op)
    shapes = []
    for b in spec.data.bench:
        cost = spec.cost(b.dims, b.dtype)
        shapes.append(
            ShapeTiming(
                shape=b.name,
                dtype=b.dtype,
                bytes=cost.bytes,
                flops=cost.flops,
                candidate=PeerTime(median_us=us, spread=0.01),
                eager=PeerTime(median_us=100.0, spread=0.01),
                gbps=1.0,
                tflops=1.0,
                limit_pct=50.0,
                floor_us=1.0,
                bound="memory",
            )
        )
    return BenchRecord(
        op=op,
        candidate=label,
        sha256="x",
        label=label,
        shapes=shapes,
        ceilings=CEIL,
        environment=ENV,
    )


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def test_tune_run_on_cuda_keeps_the_faster_and_promotes(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kernelgen.bench as bench
    import kernelgen.package as package
    from kernelgen.bench.worker import TuneResult, VariantShape, VariantTiming

    op = "silu_and_mul"
    spec = load_spec(op)
    timed: list[list[str]] = []

    def fake_bench(op_: str, contenders, peers=True, **_: object):
        timed.append([label for label, _ in contenders])
        # The tuned candidate is twice as fast as whatever it is compared with.
        return [
            bench_record(op_, label, 10.0 if label.endswith("c01") else 20.0)
            for label, _ in contenders
        ]

    def fake_tune(op_: str, sources: list[str], shapes=None, **_: object) -> TuneResult:
        # Variant i takes 100 - i us on every shape: the last config of the space wins.
        return TuneResult(
            variants=[
                VariantTiming(
                    index=i,
                    shapes=[
                        VariantShape(shape=b.name, median_us=100.0 - i) for b in spec.data.bench
                    ],
                )
                for i in range(len(sources))
            ]
        )

    def fake_verify(op_: str, path: Path, *, device: str, seed: int | None = None, **_: object):
        return Verdict(
            op=op_,
            candidate=str(path),
            sha256="x",
            accepted=True,
            device="cuda",
            seed=seed or 0,
            seconds=0.1,
        )

    promoted: list[tuple[str, str, str | None]] = []
    monkeypatch.setattr(bench, "bench_files", fake_bench)
    monkeypatch.setattr(bench, "tune_variants", fake_tune)
    monkeypatch.setattr("kernelgen.verify.verify_candidate", fake_verify)
    monkeypatch.setattr("kernelgen.env.environment", lambda device: ENV)
    monkeypatch.setattr(
        package, "promote_from_run", lambda o, r, c=None: promoted.append((o, r, c)) or project
    )

    proposer = TuneProposer(spec, "cuda")
    runner = loop.start(op, proposer, device="cuda", budget=Budget(rounds=2, candidates=1))
    run = runner.run_loop()
    run.promoted = optimize.maybe_promote(run, runner.observer)

    assert run.seed_bench is not None  # the seed timed against eager/compile first
    assert timed[0] == ["seed"]
    assert timed[1] == ["r01-c01", "best"]  # then the candidate against the best, interleaved
    assert run.best == "r01-c01"
    records = store.load_candidates(op, run.id)
    assert [r.id for r in records] == ["r01-c01"]
    assert records[0].became_best and records[0].speedup == pytest.approx(2.0)
    source = store.candidate_source(op, run.id, "r01-c01")
    # The winning configuration (the space's last) is in the emitted TUNED table.
    from kernelgen import tuning

    space = tuning.space((project / "seeds" / f"{op}.py").read_text())
    assert space is not None
    last = tuning.configs(space)[-1]
    assert str(last["BLOCK_SIZE"]) in source and "TUNED: dict[str, dict[str, int]] = {" in source
    assert "nothing more" in (run.stopped or "")
    assert promoted == [(op, run.id, "r01-c01")] and run.promoted


def _accepting(project: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """silu_and_mul's seed with 8 warps, on a faked H200 whose judge accepts every candidate."""
    monkeypatch.setattr("kernelgen.env.environment", lambda device: ENV)
    monkeypatch.setattr(
        "kernelgen.verify.verify_candidate",
        lambda op_, path, *, device, seed=None, **_: Verdict(
            op=op_, candidate=str(path), sha256="x", accepted=True, device="cuda", seed=0,
            seconds=0.1,
        ),
    )  # fmt: skip
    seed = (project / "seeds" / "silu_and_mul.py").read_text()
    return seed.replace('"num_warps": 4}', '"num_warps": 8}')


class _OneShot:
    """A proposer that offers one candidate (the seed with more warps), then nothing."""

    name = "files"
    model = None

    def __init__(self, source: str):
        from kernelgen.records import Usage

        self.source = source
        self.usage = Usage()
        self.done = False

    def propose(self, ctx, k):  # noqa: ANN001, ANN201
        from kernelgen.propose.base import Proposal

        if self.done:
            return []
        self.done = True
        return [Proposal(source=self.source, name="one")]

    def repair(self, ctx, failed, failure):  # noqa: ANN001, ANN201
        return None


def test_accepted_candidate_gets_a_tuned_child_and_resume_finishes_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kernelgen.bench as bench
    import kernelgen.propose.tune as tune_mod
    from kernelgen.propose.base import Proposal

    op = "silu_and_mul"
    source = (
        (project / "seeds" / f"{op}.py").read_text().replace('"num_warps": 4}', '"num_warps": 8}')
    )
    benched: list[str] = []
    monkeypatch.setattr("kernelgen.env.environment", lambda device: ENV)
    monkeypatch.setattr(
        "kernelgen.verify.verify_candidate",
        lambda op_, path, *, device, seed=None, **_: Verdict(
            op=op_,
            candidate=str(path),
            sha256="x",
            accepted=True,
            device="cuda",
            seed=0,
            seconds=0.1,
        ),
    )

    def fake_bench(op_: str, contenders, peers=True, **_: object):
        benched.append(contenders[0][0])
        speed = {"seed": 20.0, "r01-c01": 10.0, "r01-c01-tuned": 5.0}
        return [bench_record(op_, label, speed.get(label, 20.0)) for label, _ in contenders]

    monkeypatch.setattr(bench, "bench_files", fake_bench)
    # The first optimize dies inside the tuner's child: its record is left pending.
    calls = {"n": 0}

    def tune_then_die(spec, src, timer=None):  # noqa: ANN001, ANN202
        assert timer is None  # one judge in this process: the tuner times here
        calls["n"] += 1
        return Proposal(
            source=src.replace(
                "TUNED: dict[str, dict[str, int]] = {}",
                'TUNED = {"1x1": {"BLOCK_SIZE": 512, "num_warps": 2}}',
            ),
            name="tuned",
        )

    monkeypatch.setattr(tune_mod, "tune_source", tune_then_die)
    real_judge = loop.Loop.judge

    def judge_or_die(self, rec, proposal):  # noqa: ANN001, ANN202
        if rec.id.endswith("-tuned") and calls["n"] == 1:
            raise KeyboardInterrupt  # stands in for kill -9 mid-verification
        return real_judge(self, rec, proposal)

    monkeypatch.setattr(loop.Loop, "judge", judge_or_die)
    runner = loop.start(op, _OneShot(source), device="cuda", budget=Budget(rounds=1, candidates=1))
    with pytest.raises(KeyboardInterrupt):
        runner.run_loop()
    run_id = runner.run.id
    states = {r.id: r.status for r in store.load_candidates(op, run_id)}
    assert states == {"r01-c01": "accepted", "r01-c01-tuned": "pending"}

    calls["n"] = 2
    resumed = loop.resume(op, run_id, _OneShot(source))
    run = resumed.run_loop()
    records = {r.id: r for r in store.load_candidates(op, run_id)}
    assert records["r01-c01-tuned"].status == "accepted"
    assert records["r01-c01-tuned"].parent == "r01-c01"
    assert records["r01-c01-tuned"].proposer == "tune"
    assert run.best == "r01-c01-tuned"
    assert benched.count("r01-c01") == 1  # judged once, before the kill
    assert calls["n"] == 2  # the tuner did not search again on resume


def test_no_tune_keeps_an_accepted_candidate_as_written(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--no-tune (Budget.tune_accepted): a suite on a GPU lease spends it on its problems; the
    accepted candidate is benched, and no tuned child is made, on resume neither."""
    import kernelgen.bench as bench
    import kernelgen.propose.tune as tune_mod

    op = "silu_and_mul"
    source = _accepting(project, monkeypatch)
    monkeypatch.setattr(
        bench,
        "bench_files",
        lambda op_, contenders, peers=True, **_: [
            bench_record(op_, label, 10.0 if label == "r01-c01" else 20.0)
            for label, _ in contenders
        ],
    )

    def no_tuning(spec, src, timer=None):  # noqa: ANN001, ANN202
        raise AssertionError("tuned under --no-tune")

    monkeypatch.setattr(tune_mod, "tune_source", no_tuning)
    budget = Budget(rounds=1, candidates=1, tune_accepted=False)
    run = loop.start(op, _OneShot(source), device="cuda", budget=budget).run_loop()
    assert [r.id for r in store.load_candidates(op, run.id)] == ["r01-c01"]
    assert run.best == "r01-c01" and not run.settings.budget.tune_accepted
    again = loop.resume(op, run.id, _OneShot(source)).run_loop()
    assert [r.id for r in store.load_candidates(op, again.id)] == ["r01-c01"]


@pytest.mark.parametrize("candidate_us, wins", [(10.0, True), (20.0, False)])
def test_promotion_keeps_its_bench_against_the_library(
    project: Path, monkeypatch: pytest.MonkeyPatch, candidate_us: float, wins: bool
) -> None:
    import kernelgen.bench as bench
    import kernelgen.package as package
    import kernelgen.package.catalog as catalog
    from kernelgen.records import PromoteBench, RunRecord, RunSettings

    op = "softmax"
    run = RunRecord(
        id="20261201-000000-agent-0000",
        op=op,
        settings=RunSettings(op=op, proposer="agent", device="cuda", budget=Budget(), seed=1),
        environment=ENV,
        state="finished",
        best="r01-c01",
    )
    store.save_run(run)
    monkeypatch.setattr(
        optimize, "manifest", lambda: {op: {"run_id": "other", "candidate_id": "r01-c01"}}
    )
    monkeypatch.setattr(catalog, "generated_source", lambda op_: ("", project / "lib.py"))
    monkeypatch.setattr(
        bench,
        "bench_files",
        lambda op_, contenders, peers=True, **_: [
            bench_record(op_, "r01-c01", candidate_us),
            bench_record(op_, "generated", 20.0),
        ],
    )
    promoted: list[str] = []
    monkeypatch.setattr(package, "promote_from_run", lambda o, r, c=None: promoted.append(c))
    events: list[str] = []
    observer = type("O", (), {"event": lambda self, m: events.append(m)})()

    assert optimize.maybe_promote(run, observer) is wins
    assert promoted == (["r01-c01"] if wins else [])
    (kept,) = store.run_dir(op, run.id).glob("promote-r01-c01-*.json")
    record = PromoteBench.model_validate_json(kept.read_text())
    assert record.wins is wins and record.candidate.label == "r01-c01"
    assert record.library.label == "generated"
    if not wins:
        assert events[-1] == f"not promoted: {record.why}"


class _Two(_OneShot):
    """Two candidates, k a call as the files proposer hands them out: the seed with 8 warps,
    then with 2."""

    def propose(self, ctx, k):  # noqa: ANN001, ANN201
        from kernelgen.propose.base import Proposal

        if not hasattr(self, "left"):
            other = self.source.replace('"num_warps": 8}', '"num_warps": 2}')
            self.left = [
                Proposal(source=self.source, name="eight"),
                Proposal(source=other, name="two"),
            ]
        batch, self.left = self.left[:k], self.left[k:]
        return batch


def test_a_bench_that_fails_leaves_its_candidate_untimed_and_the_run_going(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bench process out of memory (another job's judge held the GPU's) is one candidate's
    missing time, not the run's end: the next candidate is still judged and timed."""
    import kernelgen.bench as bench
    from kernelgen.errors import KernelgenError

    op = "silu_and_mul"
    source = _accepting(project, monkeypatch)

    def fake_bench(op_: str, contenders, peers=True, **_: object):
        labels = [label for label, _ in contenders]
        if "r01-c01" in labels:
            raise KernelgenError(f"bench {op_}: the benchmark process failed (oom): out of memory")
        return [bench_record(op_, label, 5.0 if label == "r01-c02" else 10.0) for label in labels]

    monkeypatch.setattr(bench, "bench_files", fake_bench)
    budget = Budget(rounds=1, candidates=2, tune_accepted=False)
    run = loop.start(op, _Two(source), device="cuda", budget=budget).run_loop()
    first, second = store.load_candidates(op, run.id)
    assert first.status == "accepted" and first.bench is None
    assert first.reason is not None and first.reason.startswith("not timed: bench silu_and_mul")
    assert second.status == "accepted" and second.bench is not None
    assert store.load_run(op, run.id).best == second.id


@pytest.mark.parametrize("first_right", [True, False])
def test_first_accepted_stops_at_the_first_correct_candidate(
    project: Path, monkeypatch: pytest.MonkeyPatch, first_right: bool
) -> None:
    """--first-accepted, one candidate a round: the proposer's fallback is judged only where
    its first choice is rejected, and a rejected round does not count as stagnation."""
    import kernelgen.bench as bench

    op = "silu_and_mul"
    source = (
        (project / "seeds" / f"{op}.py").read_text().replace('"num_warps": 4}', '"num_warps": 8}')
    )
    wrong = 'num_warps": 8' if not first_right else "never in a source"
    monkeypatch.setattr("kernelgen.env.environment", lambda device: ENV)

    def fake_verify(op_: str, path: Path, *, device: str, seed: int | None = None, **_: object):
        ok = wrong not in Path(path).read_text()
        return Verdict(
            op=op_, candidate=str(path), sha256="x", accepted=ok, device="cuda", seed=0,
            seconds=0.1, category=None if ok else "incorrect", reason=None if ok else "wrong",
        )  # fmt: skip

    monkeypatch.setattr("kernelgen.verify.verify_candidate", fake_verify)
    monkeypatch.setattr(
        bench,
        "bench_files",
        lambda op_, contenders, peers=True, **_: [
            bench_record(op_, label, 5.0 if label.startswith("r0") else 10.0)
            for label, _ in contenders
        ],
    )
    budget = Budget(rounds=4, candidates=1, tune_accepted=False, first_accepted=True)
    run = loop.start(op, _Two(source), device="cuda", budget=budget).run_loop()
    judged = [(r.id, r.status) for r in store.load_candidates(op, run.id)]
    if first_right:
        assert judged == [("r01-c01", "accepted")]
    else:
        assert judged == [("r01-c01", "rejected"), ("r02-c01", "accepted")]
    assert run.stopped == "a candidate was accepted (--first-accepted)"


def test_no_bench_keeps_the_first_accepted_untimed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--no-bench: an accepted candidate is not timed in its run (a KernelBench suite times it
    as KernelBench does), and for an operator without a seed the first accepted is the best."""
    import kernelgen.bench as bench

    def no_bench(*_: object, **__: object):
        raise AssertionError("timed under --no-bench")

    op = "silu_and_mul"
    source = _accepting(project, monkeypatch)
    monkeypatch.setattr(bench, "bench_files", no_bench)
    monkeypatch.setattr(loop, "has_seed", lambda op_: False)
    monkeypatch.setattr("kernelgen.run.judging.has_seed", lambda op_: False)
    budget = Budget(rounds=1, candidates=2, tune_accepted=False, bench_accepted=False)
    run = loop.start(op, _Two(source), device="cuda", budget=budget).run_loop()
    first, second = store.load_candidates(op, run.id)
    assert (first.became_best, second.became_best) == (True, False)
    assert first.bench is None and first.reason == "not timed (--no-bench)"
    assert store.load_run(op, run.id).best == first.id
