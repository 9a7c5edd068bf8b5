"""scripts/bench_library.py and scripts/host_overhead.py without a GPU: which shapes the bench
times, how its summary compares kernelgen_ops with the best peer and the routed call with the
noise, and how both scripts pair their host timings by round."""

import contextlib
import sys
from pathlib import Path

import pytest

from kernelgen.spec import load_spec

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where scripts_module.py lives
from scripts_module import script  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    return script("bench_library")


@pytest.fixture(scope="module")
def worker():
    return script("bench_library_worker")


def test_decode_shapes_come_first_then_the_specs(worker) -> None:
    spec = load_spec("rms_norm")
    shapes = worker.shapes(spec)
    names = [s.name for s, _ in shapes]
    added = ["16x4096", "64x4096", "1x7168", "16x7168"]
    # 1, 16 and 64 rows at the widths the spec benchmarks with few rows (4096 and 7168), without
    # the spec's own qwen3_8b_1x4096 and deepseek_v3_64x7168; then every benchmark shape of the
    # spec, in its order.
    assert names[: len(added)] == added
    assert names[len(added) :] == [b.name for b in spec.data.bench]
    # Decode: every shape of 64 rows or fewer, the spec's own among them.
    decode = [s.name for s, d in shapes if d]
    assert decode == [*added, *[b.name for b in spec.data.bench if b.dims["rows"] <= 64]]
    assert {"deepseek_v3_64x7168", "qwen3_8b_1x4096", "deepseek_v3_8x7168"} <= set(decode)
    assert "qwen3_8b_4096x4096" not in decode
    assert all(s.dtype == "bfloat16" for s, _ in shapes)
    d = [s for s, _ in worker.shapes(load_spec("silu_and_mul"))]
    assert {"rows": 16, "d": 14336} in [s.dims for s in d]


def _m(bench, shape: str, impl: str, device: float, host: float, decode: bool = False):
    return bench.Measurement(
        op="softmax",
        shape=shape,
        dims={"rows": 1, "cols": 1},
        dtype="bfloat16",
        decode=decode,
        impl=impl,
        device_us=device,
        host_us=host,
    )


def test_the_summary_takes_the_best_peer_per_shape(bench) -> None:
    ms = [
        _m(bench, "a", "kernelgen_ops", 10, 20, decode=True),
        _m(bench, "a", "eager", 20, 10, decode=True),
        _m(bench, "a", "compile", 40, 40, decode=True),
        _m(bench, "b", "kernelgen_ops", 30, 30),
        _m(bench, "b", "eager", 60, 60),
        _m(bench, "b", "liger", 10, 15),
        _m(bench, "b", "flaggems", 0, 0).model_copy(update={"error": "raised"}),
        _m(bench, "c", "eager", 1, 1),  # no kernelgen_ops figure: not in the ratios
    ]
    got = {(r.metric, r.impl, r.against): r for r in bench.summarize(ms)}
    device = got[("device_us", "kernelgen_ops", "best_peer")]
    assert device.shapes == 2
    assert device.geomean == pytest.approx((10 / 20 * 30 / 10) ** 0.5, abs=1e-4)
    assert (device.worst, device.worst_shape) == (3.0, "b")  # liger wins b; flaggems raised
    assert device.decode_geomean == 0.5
    host = got[("host_us", "kernelgen_ops", "best_peer")]
    assert (host.worst, host.worst_shape) == (2.0, "a")  # eager's host time beats ours on a
    assert got[("host_us", "kernelgen_ops", "eager")].geomean == pytest.approx((2 * 0.5) ** 0.5)
    assert ("device_us", "routed", "eager") not in got  # no routed figures


def test_the_host_target_is_eagers_host_time_plus_two_us(bench) -> None:
    ms = [
        _m(bench, "1x4096", "kernelgen_ops", 3, 9.5, decode=True),
        _m(bench, "1x4096", "eager", 3, 8.0, decode=True),
        _m(bench, "16x4096", "kernelgen_ops", 3, 12.5, decode=True),
        _m(bench, "16x4096", "eager", 3, 10.0, decode=True),
        _m(bench, "4096x4096", "kernelgen_ops", 30, 90.0),  # not a decode shape
        _m(bench, "4096x4096", "eager", 30, 30.0),
    ]
    (target,) = bench.host_targets(ms)
    assert (target.impl, target.decode_shapes) == ("kernelgen_ops", 2)
    assert (target.worst_excess_us, target.worst_shape, target.met) == (2.5, "16x4096", False)
    ms[2] = _m(bench, "16x4096", "kernelgen_ops", 3, 11.0, decode=True)
    assert bench.host_targets(ms)[0].met


def test_a_routed_call_is_judged_against_the_noise_of_its_shape(bench) -> None:
    def m(shape, impl, device, host, decode, spread, rounds=None, again=None):
        row = _m(bench, shape, impl, device, host, decode=decode)
        update = {"device_spread": spread, "host_spread": spread, "host_rounds_us": rounds}
        return row.model_copy(update=update | {"device_again_us": again})

    ms = [
        # Host: paired by round, the routed call is 0.4 us slower in the median round (0.4, 0.6,
        # 0.2), while a slow spell in round 2 moved both: the medians alone differ by 1.0.
        m("1x4096", "routed", 3.0, 11.0, True, 0.02, rounds=[10.4, 14.6, 11.0]),
        m("1x4096", "eager", 3.0, 10.0, True, 0.05, rounds=[10.0, 14.0, 10.8]),  # noise 0.5 us
        # Device: 1 us slower; noise 0.01 x 30, plus 30 x the farthest eager's second timing
        # moved at any shape of the op (1/150 at 4096x4096, more than 1x4096's 0.01/3) = 0.5 us.
        m("4096x4096", "routed", 31.0, 90.0, False, 0.01),
        m("4096x4096", "eager", 30.0, 30.0, False, 0.01, again=30.2),
    ]
    ms[1] = ms[1].model_copy(update={"device_again_us": 3.01})
    got = {c.metric: c for c in bench.routed_checks(ms)}
    host, device = got["host_us"], got["device_us"]
    # Host time counts at decode shapes only: 4096x4096's 60 us more is not judged.
    assert (host.shapes, host.worst_shape, host.met) == (1, "1x4096", True)
    assert host.worst_excess == pytest.approx(0.4) and host.noise_there == pytest.approx(0.5)
    assert (device.shapes, device.over_noise, device.met) == (2, ["4096x4096"], False)
    assert (device.worst_excess, device.noise_there) == (pytest.approx(1.0), pytest.approx(0.5))
    ms[2] = m("4096x4096", "routed", 30.4, 90.0, False, 0.01)
    assert all(c.met for c in bench.routed_checks(ms))
    # How far eager moved at one shape is the noise at every shape of the op: 2% at 1x4096
    # (3.06 against 3.0) puts 4096x4096's at (0.01 + 0.02) x 30 = 0.9 us, over its 0.85.
    ms[1] = ms[1].model_copy(update={"device_again_us": 3.06})
    ms[2] = m("4096x4096", "routed", 30.85, 90.0, False, 0.01)
    device = next(c for c in bench.routed_checks(ms) if c.metric == "device_us")
    assert device.met and device.noise_there == pytest.approx(0.9)
    # Without rounds on both sides, the host excess is the difference of the medians.
    ms[0] = m("1x4096", "routed", 3.0, 11.0, True, 0.02)
    assert bench.routed_checks(ms)[1].worst_excess == pytest.approx(1.0)


def test_a_routed_call_s_host_noise_is_how_far_eager_moved_between_its_two_places(bench) -> None:
    """Eager is timed twice a round; the farthest its two places differed (paired median,
    relative) at any decode shape of the op is added to the spread at every shape."""

    def m(shape, impl, host, rounds, again=None, decode=True):
        row = _m(bench, shape, impl, 3.0, host, decode=decode)
        update = {"host_spread": 0.01, "host_rounds_us": rounds, "host_again_rounds_us": again}
        return row.model_copy(update=update)

    ms = [
        m("1x4096", "routed", 10.6, [10.6, 10.6, 10.6]),
        m("1x4096", "eager", 10.0, [10.0, 10.0, 10.0], again=[10.1, 10.1, 10.0]),
        m("16x4096", "routed", 20.0, [20.0, 20.0, 20.0]),
        # Eager's second place was 0.8 us (4%) off its first here: 1x4096's noise is
        # (0.01 + 0.04) x 10 = 0.5 us, under its 0.6.
        m("16x4096", "eager", 20.0, [20.0, 20.0, 20.0], again=[20.8, 20.8, 20.0]),
        # Not a decode shape: its two places do not count.
        m("4096x4096", "eager", 90.0, [90.0] * 3, again=[99.0] * 3, decode=False),
    ]
    host = next(c for c in bench.routed_checks(ms) if c.metric == "host_us")
    assert (host.worst_shape, host.over_noise, host.met) == ("1x4096", ["1x4096"], False)
    assert host.noise_there == pytest.approx(0.5)
    ms[3] = m("16x4096", "eager", 20.0, [20.0, 20.0, 20.0], again=[21.2, 21.2, 20.0])  # 6%
    host = next(c for c in bench.routed_checks(ms) if c.metric == "host_us")
    assert host.met and host.noise_there == pytest.approx(0.7)


def test_host_rounds_time_eager_twice(worker, monkeypatch) -> None:
    order: list[str] = []
    monkeypatch.setattr(worker.timing, "host_us", lambda call, n: order.append(call()) or 1.0)
    impls = [worker.Impl(n, fn=None) for n in ("eager", "routed")]
    timed = [(i, lambda n=i.name: n, 5.0) for i in impls]
    got = worker.host_rounds(timed)
    assert set(got) == {"eager", "routed", worker.AGAIN}
    rounds = order[2:]  # after the warm-up of each implementation
    assert rounds[:3] == ["eager", "routed", "eager"]
    assert len(rounds) == 3 * worker.HOST_RUNS


def test_host_rounds_time_each_implementation_once_a_round_in_turn(worker, monkeypatch) -> None:
    order: list[tuple[str, int]] = []
    entered: list[str] = []

    def host_us(call, n: int) -> float:
        name = call()
        order.append((name, n))
        return {"a": 10.0, "b": 20.0, "c": 30.0}[name]

    def context(name: str):
        @contextlib.contextmanager
        def entering():
            entered.append(name)
            yield

        return entering

    monkeypatch.setattr(worker.timing, "host_us", host_us)
    impls = [worker.Impl(n, fn=None, context=context(n)) for n in "abc"]
    devices = (5.0, 5.0, 80.0)
    timed = [(i, lambda n=i.name: n, d) for i, d in zip(impls, devices, strict=True)]
    got = worker.host_rounds(timed)
    assert got == {n: [v] * worker.HOST_RUNS for n, v in (("a", 10.0), ("b", 20.0), ("c", 30.0))}
    warm, rounds = order[:3], order[3:]
    # Launch-bound shapes (device time under 30 us) take at least 1000 calls a round.
    assert warm == [("a", 100), ("b", 100), ("c", 20)]
    assert [n for n, _ in rounds[:9]] == [*"abc", *"bca", *"cab"]
    assert len(rounds) == 3 * worker.HOST_RUNS
    assert entered.count("a") == 1 + worker.HOST_RUNS  # every timing inside its own context


def test_host_overhead_pairs_the_public_call_with_eager_by_round(monkeypatch) -> None:
    host = script("host_overhead")
    order: list[str] = []
    monkeypatch.setattr(host, "per_call_us", lambda fn: fn())

    def call(name: str, rounds: list[float]):
        return lambda: order.append(name) or rounds[order.count(name) - 1]

    # Round 1 is a slow spell of the host for both calls: the pairs still differ by 1 us.
    got = host.side_by_side(call("public", [11.0, 16.0, 11.5]), call("eager", [10, 15, 10.5]), 3)
    assert order == ["public", "eager", "eager", "public", "public", "eager"]
    assert (got["first"], got["second"]) == (11.5, 10.5)
    assert (got["diff"], got["diff_low"], got["diff_high"]) == (1.0, 1.0, 1.0)
