"""The tuner's choice with the timing faked: a configuration replaces the current one in a bucket
only when it beats it, timed beside it, on every shape of the bucket beyond the noise."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelgen import tuning
from kernelgen.bench.worker import TuneResult, VariantShape, VariantTiming
from kernelgen.propose import tune
from kernelgen.spec import BenchShape, OpSpec, load_spec

ROOT = Path(__file__).resolve().parents[2]
SEED = (ROOT / "seeds" / "rms_norm.py").read_text()  # num_warps in [2, 4, 8, 16, 32]; default 4
CONFIGS = tuning.configs(tuning.space(SEED) or {})


@pytest.fixture()
def spec(monkeypatch: pytest.MonkeyPatch) -> OpSpec:
    """rms_norm with a second shape in the 4096x4096 bucket, so a bucket has two shapes."""
    monkeypatch.chdir(ROOT)
    s = load_spec("rms_norm")
    extra = BenchShape(name="4000x4000", dims={"rows": 4000, "cols": 4000})
    s.data = s.data.model_copy(update={"bench": [*s.data.bench, extra]})
    assert s.bucket_key(extra.dims) == "4096x4096"
    return s


def _fake_tune(
    monkeypatch: pytest.MonkeyPatch,
    spec: OpSpec,
    times: dict[int, dict[str, float]],
    spread: float = 0.0,
) -> list[tuple[list[str], int | None]]:
    """tune_variants faked: source i takes times[i][shape] us (100 us where not given); each
    variant row carries the baseline's time from the same 'process', as the worker's do."""
    import kernelgen.bench as bench

    seen: list[tuple[list[str], int | None]] = []

    def fake(
        op: str,
        sources: list[str],
        shapes: list[str] | None = None,
        baseline: int | None = None,
        **_: object,
    ) -> TuneResult:
        seen.append((sources, baseline))
        names = _names(spec)

        def t(i: int, n: str) -> float:
            return times.get(i, {}).get(n, 100.0)

        return TuneResult(
            variants=[
                VariantTiming(
                    index=i,
                    shapes=[
                        VariantShape(
                            shape=n, median_us=t(i, n), spread=spread, method="graph",
                            baseline_us=None if i == baseline else t(baseline, n),
                            baseline_spread=None if i == baseline else spread,
                        )
                        for n in names
                    ],
                )
                for i in range(len(sources))
            ]
        )  # fmt: skip

    monkeypatch.setattr(bench, "tune_variants", fake)
    return seen


def _table(source: str) -> dict[str, dict[str, int]]:
    node = tuning.assignment(ast.parse(source), "TUNED")
    assert node is not None and node.value is not None
    return ast.literal_eval(node.value)


def _warps(n: int) -> int:
    """The source number of the config with num_warps = n (source 0 is the baseline)."""
    return CONFIGS.index({"num_warps": n}) + 1


def test_the_baseline_is_timed_first_among_the_configs(
    spec: OpSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _fake_tune(monkeypatch, spec, {})
    tune.search(spec, SEED)
    ((sources, baseline),) = seen
    assert baseline == 0 and sources[0] == SEED and len(sources) == len(CONFIGS) + 1
    assert [_table(s) for s in sources[1:]] == [{"1x1": c} for c in CONFIGS]


def test_a_config_that_loses_to_the_seed_on_one_shape_is_refused(
    spec: OpSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In the 4096x4096 bucket: 8 warps is 30% faster on qwen3_8b_4096x4096 but 2% slower on
    # 4000x4000; 16 warps is 10% faster on both. 8 warps has the better geomean and still loses
    # the bucket.
    _fake_tune(
        monkeypatch,
        spec,
        {
            _warps(8): {"qwen3_8b_4096x4096": 70.0, "4000x4000": 102.0},
            _warps(16): {"qwen3_8b_4096x4096": 90.0, "4000x4000": 90.0},
            _warps(32): {"qwen3_8b_1x4096": 50.0},
        },
    )
    found = tune.search(spec, SEED)
    assert found.proposal is not None and found.proposal.source
    table = _table(found.proposal.source)
    assert table["4096x4096"] == {"num_warps": 16}
    assert table["1x4096"] == {"num_warps": 32}
    # Buckets nothing won keep the seed's configuration (its DEFAULT_CONFIG), written out.
    assert table["16384x8192"] == {"num_warps": 4} and table["8x8192"] == {"num_warps": 4}
    assert "2 of 6 buckets changed" in (found.proposal.name or "")


def test_a_win_within_the_noise_is_no_win(spec: OpSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    # 2% faster everywhere, with 3% spreads: not beyond the noise, so nothing changes.
    _fake_tune(monkeypatch, spec, {_warps(8): {n: 98.0 for n in _names(spec)}}, spread=0.03)
    found = tune.search(spec, SEED)
    assert found.proposal is None and "beat the current one beyond the noise" in found.note
    assert tune.tune_source(spec, SEED) is None  # what the loop calls: nothing to judge


def test_nothing_proposed_when_the_best_config_is_the_current_one(
    spec: OpSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The seed's own config (4 warps) measured faster than the seed: the same code, so no change.
    _fake_tune(monkeypatch, spec, {_warps(4): {n: 80.0 for n in _names(spec)}})
    assert tune.search(spec, SEED).proposal is None


def test_the_baseline_time_of_the_same_process_is_preferred(spec: OpSpec) -> None:
    # Config 1 ran in a process whose baseline took 120 us; the baseline's own row (another
    # process) says 90. Against its own process it wins.
    names = _names(spec)
    rows = {
        0: [VariantShape(shape=n, median_us=90.0, spread=0.0) for n in names],
        1: [VariantShape(shape=n, median_us=100.0, spread=0.0, baseline_us=120.0) for n in names],
        2: [VariantShape(shape=n, median_us=95.0, spread=0.0) for n in names],  # no baseline_us
    }
    result = TuneResult(variants=[VariantTiming(index=i, shapes=r) for i, r in rows.items()])
    chosen = tune.pick(result, spec, n_configs=2)
    assert set(chosen.values()) == {1}  # config 2 lost to the baseline's own row (90 us)


def test_a_config_without_a_time_on_a_shape_of_the_bucket_is_out(spec: OpSpec) -> None:
    names = _names(spec)
    rows = {
        0: [VariantShape(shape=n, median_us=100.0) for n in names],
        1: [
            VariantShape(shape=n, median_us=None if n == "4000x4000" else 50.0, error="OOR")
            for n in names
        ],
    }
    result = TuneResult(variants=[VariantTiming(index=i, shapes=r) for i, r in rows.items()])
    chosen = tune.pick(result, spec, n_configs=1)
    assert chosen["4096x4096"] is None and chosen["1x4096"] == 1


def test_resolved_config_follows_the_launcher_convention() -> None:
    assert tune.resolved_config(SEED, "4096x4096") == {"num_warps": 4}  # TUNED empty: default
    tuned = tuning.with_tuned(SEED, {"1x4096": {"num_warps": 2}, "4096x4096": {"num_warps": 16}})
    assert tune.resolved_config(tuned, "1x8192") == {"num_warps": 2}
    assert tune.resolved_config(tuned, "2048x4096") == {"num_warps": 16}
    assert tune.resolved_config("x = 1\n", "1x1") is None


def test_the_proposer_says_why_it_proposes_nothing(
    spec: OpSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.propose.base import Context

    _fake_tune(monkeypatch, spec, {})  # every config as fast as the seed
    proposer = tune.TuneProposer(spec, "cuda")
    ctx = Context(
        op="rms_norm", round=1, device="cuda", spec="", reference_source="", seed_source=SEED,
        best_source=SEED, best_id=None, hardware="H200",
    )  # fmt: skip
    assert proposer.propose(ctx, 1) == []
    assert proposer.note and "beat the current one" in proposer.note


def _names(spec: OpSpec) -> list[str]:
    return [b.name for b in spec.data.bench]
