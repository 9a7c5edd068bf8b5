"""The pure math of benchmarking: floors, bounds, geomeans, the physical floor, acceptance."""

from __future__ import annotations

import math

import pytest

from kernelgen.bench import accepts, roofline
from kernelgen.records import BenchRecord, Ceilings, Environment, PeerTime, ShapeFailure

# Round numbers near an H200's: 4000 GB/s = 4e6 bytes/us, 800 TFLOP/s = 8e8 flops/us.
CEIL = Ceilings(
    gpu="NVIDIA H200",
    copy_gbps=4000.0,
    bf16_tflops=800.0,
    launch_us=3.0,
    measured="2026-11-30T00:00:00+00:00",
    torch="2.11.0",
    triton="3.6.0",
)
ENV = Environment(
    device="cuda", torch="2.11.0", triton="3.6.0", python="3.12.3", host="h", interpreter=False
)


def test_floor_is_the_larger_term() -> None:
    assert roofline.memory_us(4_000_000, CEIL) == pytest.approx(1.0)
    assert roofline.compute_us(800_000_000, CEIL) == pytest.approx(1.0)
    # 64 MB and few flops: bytes decide.
    assert roofline.floor_us(64_000_000, 1000, CEIL) == pytest.approx(16.0)
    # An 8192^3 matmul: flops decide (1.1e12 / 8e8 = 1374 us against 100 us of bytes).
    flops = 2 * 8192**3
    assert roofline.floor_us(400_000_000, flops, CEIL) == pytest.approx(flops / 8e8)


def test_rates_and_limit() -> None:
    assert roofline.gbps(4_000_000, 2.0) == pytest.approx(2000.0)
    assert roofline.tflops(800_000_000, 2.0) == pytest.approx(400.0)
    assert roofline.limit_pct(16.0, 20.0) == pytest.approx(80.0)


def test_bound_classification() -> None:
    assert roofline.bound(64_000_000, 5 * 16_000_000, CEIL) == "memory"
    assert roofline.bound(400_000_000, 2 * 8192**3, CEIL) == "compute"
    # 128 KB moves in 0.03 us: far below two launches (6 us), so launches decide.
    assert roofline.bound(128_000, 160_000, CEIL) == "launch"
    # Just above 2 launch latencies is no longer launch-bound.
    assert roofline.bound(int(6.1 * 4e6), 0, CEIL) == "memory"


def test_geomean() -> None:
    assert roofline.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert roofline.geomean([1.5]) == pytest.approx(1.5)
    assert roofline.geomean(iter([0.5, 2.0])) == pytest.approx(1.0)
    assert roofline.geomean([]) is None
    with pytest.raises(ValueError):
        roofline.geomean([0.0, 1.0])


def test_physical_floor() -> None:
    assert roofline.physical_floor_violation(8.9, 10.0)
    assert not roofline.physical_floor_violation(9.0, 10.0)
    assert not roofline.physical_floor_violation(25.0, 10.0)


def _pt(us: float, spread: float = 0.0) -> PeerTime:
    return PeerTime(median_us=us, spread=spread)


def test_shape_timing_row() -> None:
    row = roofline.shape_timing(
        "4096x4096", "bfloat16", 64_000_000, 80_000_000, _pt(20.0), CEIL,
        eager=_pt(60.0), compiled=_pt(40.0), seed=_pt(30.0),
    )  # fmt: skip
    assert row.floor_us == pytest.approx(16.0)
    assert row.limit_pct == pytest.approx(80.0)
    assert row.gbps == pytest.approx(3200.0)
    assert row.bound == "memory"
    assert (row.speedup_eager, row.speedup_compile, row.speedup_seed) == pytest.approx(
        (3.0, 2.0, 1.5)
    )
    assert row.suspect is None


def test_fp8_flops_run_at_twice_the_bf16_rate() -> None:
    # fp8_gemm 4096x4096x7168 at 800 TFLOP/s bf16: 301 us of bf16 flops, 150 us in fp8. A
    # kernel at 250 us is fast and honest: the bf16 floor calls it impossible (as the H200's
    # did for an honest 309 us on 2026-12-02).
    flops, nbytes = 2 * 4096 * 4096 * 7168, 100_000_000
    assert roofline.floor_us(nbytes, flops, CEIL, "fp8") == pytest.approx(flops / 16e8)
    assert roofline.shape_timing("s", "bfloat16", nbytes, flops, _pt(250.0), CEIL).suspect
    row = roofline.shape_timing("s", "bfloat16", nbytes, flops, _pt(250.0), CEIL, precision="fp8")
    assert row.suspect is None and row.bound == "compute"
    assert row.limit_pct == pytest.approx(flops / 16e8 / 250.0 * 100)
    # below 90% of the fp8 floor is still flagged, against the fp8 ceiling
    low = roofline.shape_timing("s", "bfloat16", nbytes, flops, _pt(120.0), CEIL, precision="fp8")
    assert low.suspect is not None and "1600 fp8" in low.suspect


def test_shape_timing_flags_a_time_below_the_floor() -> None:
    row = roofline.shape_timing("s", "bfloat16", 64_000_000, 0, _pt(10.0), CEIL)
    assert row.suspect is not None and "floor 16.00 us" in row.suspect
    assert row.speedup_eager is None and row.speedup_seed is None


def _record(times: dict[str, tuple[float, float]], **extra: object) -> BenchRecord:
    shapes = [
        roofline.shape_timing(name, "bfloat16", 4_000_000, 0, _pt(us, spread), CEIL)
        for name, (us, spread) in times.items()
    ]
    return BenchRecord(
        op="softmax", candidate="c.py", sha256="0", label="x", shapes=shapes,
        ceilings=CEIL, environment=ENV, **extra,
    )  # fmt: skip


BEST = {"a": (100.0, 0.0), "b": (200.0, 0.0), "c": (50.0, 0.0)}


def test_accepts_a_clear_win() -> None:
    new = _record({"a": (80.0, 0.01), "b": (160.0, 0.01), "c": (40.0, 0.01)})
    ok, why = accepts(new, _record(BEST))
    assert ok, why
    assert "x1.250" in why


def test_rejects_a_gain_under_two_percent() -> None:
    new = _record({n: (us / 1.015, 0.0) for n, (us, _) in BEST.items()})
    ok, why = accepts(new, _record(BEST))
    assert not ok and "does not beat x1.020" in why


def test_noise_raises_the_bar() -> None:
    # 5% faster everywhere: enough with 1% noise (bar 1.03), not with 2% noise (bar 1.06).
    quiet = _record({n: (us / 1.05, 0.01) for n, (us, _) in BEST.items()})
    noisy = _record({n: (us / 1.05, 0.02) for n, (us, _) in BEST.items()})
    assert accepts(quiet, _record(BEST))[0]
    ok, why = accepts(noisy, _record(BEST))
    assert not ok and "x1.060" in why
    # The best's own noise counts too.
    best_noisy = _record({n: (us, 0.02) for n, (us, _) in BEST.items()})
    assert not accepts(quiet, best_noisy)[0]


def test_one_noisy_shape_does_not_set_the_bar() -> None:
    new = _record({"a": (90.0, 0.0), "b": (180.0, 0.0), "c": (45.0, 0.3)})
    ok, why = accepts(new, _record(BEST))
    assert ok, why


def test_rejects_a_regression_beyond_five_percent() -> None:
    # Geomean well above the bar, but shape c is 6% slower.
    new = _record({"a": (50.0, 0.0), "b": (100.0, 0.0), "c": (53.0, 0.0)})
    ok, why = accepts(new, _record(BEST))
    assert not ok and why.startswith("c regresses by 6.0%")
    # 4% slower on one shape is tolerated.
    assert accepts(_record({"a": (50.0, 0.0), "b": (100.0, 0.0), "c": (52.0, 0.0)}),
                   _record(BEST))[0]  # fmt: skip


def test_rejects_failures_suspects_and_missing_shapes() -> None:
    fast = {n: (us / 2, 0.0) for n, (us, _) in BEST.items()}
    failed = _record(
        {"a": fast["a"], "b": fast["b"]},
        failed=[ShapeFailure(shape="c", who="candidate", error="OutOfResources: shared memory")],
    )
    ok, why = accepts(failed, _record(BEST))
    assert not ok and "failed on c: OutOfResources" in why

    missing = _record({"a": fast["a"], "b": fast["b"]})
    ok, why = accepts(missing, _record(BEST))
    assert not ok and "no time on c" in why

    # 4 MB in 1 us is exactly the floor: allowed; in 0.5 us it is physically impossible.
    at_floor = _record({**fast, "a": (1.0, 0.0)})
    assert at_floor.shapes[0].suspect is None
    cheat = _record({**fast, "a": (0.5, 0.0)})
    ok, why = accepts(cheat, _record(BEST))
    assert not ok and "re-check it in a fresh process" in why


def test_a_kernel_to_beat_that_runs_nowhere_loses_to_one_that_runs() -> None:
    """The library's sparse_attn past sm_90's shared memory at the MLA dims its spec now
    benchmarks: the rewrite that runs there is promoted over it."""
    oor = "OutOfResources: shared memory, Required: 655616, Hardware limit: 232448"
    broken = _record({}, failed=[ShapeFailure(shape=n, who="candidate", error=oor) for n in BEST])
    ok, why = accepts(_record(BEST), broken)
    assert ok and "ran at none of the 3 shapes" in why and oor in why
    # Nothing timed on either side is no win.
    ok, why = accepts(_record({}), _record({}))
    assert not ok and "no shape was timed for both" in why
    # Where it ran somewhere, the rule holds there: no faster at a and b is no win.
    partly = _record({"a": BEST["a"], "b": BEST["b"]},
                     failed=[ShapeFailure(shape="c", who="candidate", error=oor)])  # fmt: skip
    ok, why = accepts(_record(BEST), partly)
    assert not ok and "does not beat" in why


def test_a_peer_failure_does_not_block_acceptance() -> None:
    new = _record(
        {n: (us / 2, 0.0) for n, (us, _) in BEST.items()},
        failed=[ShapeFailure(shape="a", who="compile", error="BackendCompilerFailed: x")],
    )
    assert accepts(new, _record(BEST))[0]


def test_geomean_math_in_the_reason() -> None:
    new = _record({"a": (50.0, 0.0), "b": (200.0, 0.0), "c": (50.0, 0.0)})
    ok, why = accepts(new, _record(BEST))
    assert ok and f"x{2 ** (1 / 3):.3f}" in why
    assert math.isclose(roofline.geomean([2.0, 1.0, 1.0]) or 0, 2 ** (1 / 3))


def _launch_record(
    times: dict[str, tuple[float, float]], method: str = "graph", graph: float | None = None
) -> BenchRecord:
    """Decode-sized shapes (a few KB): launch-bound; (headline us, its spread) by `method`."""
    shapes = [
        roofline.shape_timing(
            name, "bfloat16", 8_000, 0,
            PeerTime(median_us=us, spread=spread, method=method,
                     graph_us=us if method == "graph" else graph),
            CEIL,
        )
        for name, (us, spread) in times.items()
    ]  # fmt: skip
    assert all(s.bound == "launch" for s in shapes)
    return BenchRecord(op="softmax", candidate="c.py", sha256="0", label="x", shapes=shapes,
                       ceilings=CEIL, environment=ENV)  # fmt: skip


def test_graph_headlines_decide_launch_bound_shapes_and_count_in_the_noise() -> None:
    # Graph times of decode shapes, 1% spread: 2x faster on both is a clear win.
    best = _launch_record({"d": (4.0, 0.01), "e": (6.0, 0.01)})
    new = _launch_record({"d": (2.0, 0.01), "e": (3.0, 0.01)})
    ok, why = accepts(new, best)
    assert ok and "x2.000 beats x1.030" in why  # the graph spread (1%) set the bar
    # 10% slower on one decode shape is a regression now that the figure is not jitter.
    slower = _launch_record({"d": (4.4, 0.01), "e": (3.0, 0.01)})
    ok, why = accepts(slower, best)
    assert not ok and why.startswith("d regresses by 10.0%")


def test_launch_bound_do_bench_figures_are_jitter_not_the_bar() -> None:
    # Both do_bench (a capture that failed): their 30% spread is each shape's own tolerance, and
    # with only jittery shapes it sets the bar too.
    best = _launch_record({"d": (20.0, 0.3), "e": (25.0, 0.3)}, method="do_bench")
    new = _launch_record({"d": (180.0, 0.3), "e": (24.0, 0.3)}, method="do_bench")
    ok, why = accepts(new, best)
    assert not ok and why.startswith("d regresses")


def test_figures_of_different_methods_are_compared_on_graph_times_or_not_at_all() -> None:
    graph = PeerTime(median_us=4.0, spread=0.01, method="graph", graph_us=4.0)
    old = PeerTime(median_us=20.0, spread=0.3, method="do_bench", graph_us=5.0)
    plain = PeerTime(median_us=20.0, spread=0.3, method="do_bench")
    # A do_bench headline with a graph side figure (an older record): the graph times, with the
    # assumed noise for the one whose graph spread was not recorded.
    assert roofline.comparable(old, graph) == (5.0, 4.0, roofline.GRAPH_NOISE)
    assert roofline.speedup(old, graph) == pytest.approx(1.25)
    # No common figure: no speedup, and the acceptance rule refuses to guess.
    assert roofline.comparable(plain, graph) is None and roofline.speedup(plain, graph) is None
    best = _launch_record({"d": (20.0, 0.3)}, method="do_bench")
    new = _launch_record({"d": (2.0, 0.01)})
    ok, why = accepts(new, best)
    assert (
        not ok and why == "d: no figure measured the same way for both (graph here, do_bench there)"
    )


def test_shape_timing_takes_the_graph_headline_for_rates_and_the_floor() -> None:
    t = PeerTime(median_us=4.0, spread=0.01, method="graph", graph_us=4.0)
    eager = PeerTime(median_us=12.0, spread=0.01, method="graph", graph_us=12.0, cached=True)
    row = roofline.shape_timing("64x18432", "bfloat16", 7_077_888, 0, t, CEIL, eager=eager)
    assert row.gbps == pytest.approx(7_077_888 / 4.0 / 1e3) and row.suspect is None
    assert row.speedup_eager == pytest.approx(3.0)
    # Below 90% of the floor, a graph time is as suspect as a do_bench one.
    fast = t.model_copy(update={"median_us": 1.0, "graph_us": 1.0})
    assert roofline.shape_timing("s", "bfloat16", 7_077_888, 0, fast, CEIL).suspect


def test_a_shape_regresses_only_beyond_its_own_noise() -> None:
    # 20% slower on a shape whose rounds spread 10%: within 3x its noise, so not a regression.
    new = _record({"a": (50.0, 0.0), "b": (100.0, 0.0), "c": (60.0, 0.1)})
    ok, why = accepts(new, _record(BEST))
    assert ok, why


SIX = {n: (100.0, 0.003) for n in "abcdef"}


def test_a_dominant_candidate_wins_under_the_geomean_bar() -> None:
    # As softmax r04-c01 on the H200 (one shape of six 16% faster, the rest within 1.2%, geomean
    # x1.009): 12% on one shape, one other 1.2% slower, geomean x1.019 under the x1.020 bar.
    new = _record({**SIX, "d": (100.0 / 1.12, 0.003), "c": (101.2, 0.003)})
    ok, why = accepts(new, _record(SIX))
    assert ok, why
    assert why.startswith("d x1.120")


def test_domination_needs_every_shape_within_the_geomean_bar() -> None:
    # The same win with one shape 3% slower (more than the 2% a geomean must gain) does not count.
    new = _record({**SIX, "d": (100.0 / 1.12, 0.003), "c": (103.0, 0.003)})
    ok, why = accepts(new, _record(SIX))
    assert not ok and "does not beat x1.020" in why


def test_domination_needs_a_win_beyond_the_regression_bound() -> None:
    # 4% on one shape is within what a shape may lose: not a win on its own.
    new = _record({**SIX, "d": (100.0 / 1.04, 0.003)})
    ok, why = accepts(new, _record(SIX))
    assert not ok and "does not beat" in why


def test_domination_counts_each_shapes_noise() -> None:
    # A 6% win on a shape with 3% noise (bar 9%) is noise, not a win.
    noisy = {**SIX, "d": (100.0, 0.03)}
    new = _record({**SIX, "d": (100.0 / 1.06, 0.03)})
    assert not accepts(new, _record(noisy))[0]
