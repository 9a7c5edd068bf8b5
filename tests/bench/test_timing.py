"""The timing protocol with its GPU primitives faked: which method a shape gets, how rounds and
the spread are computed, where the L2 flush sits, what the host time counts, the graph pool."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from kernelgen.bench import timing


def test_rotating_cycles_through_the_input_sets() -> None:
    seen: list[int] = []
    call = timing.rotating(seen.append, [[0], [1], [2]])
    for _ in range(7):
        call()
    assert seen == [0, 1, 2, 0, 1, 2, 0]


def test_rotated_order() -> None:
    assert timing.rotated(["a", "b", "c"], 0) == ["a", "b", "c"]
    assert timing.rotated(["a", "b", "c"], 4) == ["b", "c", "a"]
    assert timing.rotated([], 3) == []


def test_spread_is_the_trimmed_range() -> None:
    # 5 rounds: floor(5/4) = 1 dropped at each end, so 9 and 11 do not count: (10.5 - 10) / 10.
    med, spread = timing.summarize([10.0, 11.0, 9.0, 10.0, 10.5])
    assert med == 10.0 and spread == pytest.approx(0.05)
    # 7 rounds, one of them a host hiccup at 3x: the fastest and that one are dropped, and the
    # range of the other five is 10.0 to 10.2.
    med, spread = timing.summarize([10.0, 10.1, 9.9, 30.0, 10.0, 10.2, 10.0])
    assert med == 10.0 and spread == pytest.approx(0.02)
    # Two outliers of 8 are dropped (floor(8/4) = 2 at each end); three slow ones are not.
    assert timing.summarize([10.0] * 6 + [1.0, 40.0])[1] == 0.0
    assert timing.summarize([10.0] * 5 + [40.0, 40.0, 40.0])[1] == pytest.approx(3.0)
    # 3 rounds (the tuner's floor): nothing dropped, the full range.
    assert timing.summarize([9.0, 10.0, 11.0]) == (10.0, pytest.approx(0.2))
    assert timing.summarize([4.0]) == (4.0, 0.0)


def test_calls_per_replay_and_per_host_sample() -> None:
    assert timing.graph_calls(3.85) == 51  # ~200 us of work per replay
    assert timing.graph_calls(0.0) == timing.GRAPH_CALLS[1]
    assert timing.graph_calls(40.0) == timing.GRAPH_CALLS[0]
    assert timing.host_calls(1e6) == timing.HOST_CALLS[0]
    assert timing.host_calls(2.0) == timing.HOST_CALLS[1]


class _Timer:
    """A stand-in for GraphTimer: per-call time by the label the call returns."""

    per_call: dict[str, float] = {}
    made: list[tuple[str, int]] = []
    closed: int = 0

    def __init__(self, call: timing.Call, n: int):
        label = call()
        if label.startswith("nograph"):
            raise RuntimeError("operation not permitted when stream is capturing")
        self.label = label
        _Timer.made.append((label, n))

    def time_us(self, replays: int = timing.GRAPH_REPLAYS) -> float:
        return _Timer.per_call[self.label]

    def close(self) -> None:
        _Timer.closed += 1


@pytest.fixture(autouse=True)
def _fresh_timer() -> None:
    _Timer.per_call, _Timer.made, _Timer.closed = {}, [], 0


def _calls(*labels: str) -> dict[str, timing.Call]:
    return {label: (lambda label=label: label) for label in labels}


def test_a_shape_under_50_us_is_graph_timed() -> None:
    _Timer.per_call = {"a": 3.85, "b": 49.0}
    method, n = timing.choose_method(_calls("a", "b"), graph_timer=_Timer)
    # Calls per replay follow the fastest, so both labels replay the same number of calls.
    assert (method, n) == ("graph", timing.graph_calls(3.85))
    assert _Timer.made == [("a", timing.GRAPH_PROBE_CALLS), ("b", timing.GRAPH_PROBE_CALLS)]
    assert _Timer.closed == 2  # the probes give their graphs back


def test_a_shape_at_or_above_50_us_keeps_do_bench() -> None:
    _Timer.per_call = {"a": 50.0, "b": 400.0}
    assert timing.choose_method(_calls("a", "b"), graph_timer=_Timer) == ("do_bench", 0)


def test_a_contender_that_cannot_be_captured_keeps_the_shape_on_do_bench() -> None:
    _Timer.per_call = {"a": 3.0}
    method, _ = timing.choose_method(_calls("a", "nograph"), graph_timer=_Timer)
    assert method == "do_bench"
    assert timing.choose_method({}, graph_timer=_Timer) == ("do_bench", 0)


def _no_bench(call: timing.Call) -> float:
    raise AssertionError(f"do_bench ran for {call()} on a graph-timed shape")


def test_graph_timing_replays_the_pool_and_times_the_host_apart() -> None:
    _Timer.per_call = {"pool-a": 3.0, "pool-b": 6.0}
    host_seen: list[tuple[str, int]] = []

    def host(call: timing.Call, n: int) -> float:
        host_seen.append((call(), n))
        return 25.0

    plain = _calls("a", "b")
    pool = {"a": lambda: "pool-a", "b": lambda: "pool-b"}
    times, errors = timing.interleaved(
        plain, rounds=7, method="graph", n_calls=51, replay_calls=pool, bench=_no_bench,
        graph_timer=_Timer, host_timer=host,
    )  # fmt: skip
    assert not errors
    # One capture per label, of the pool's rotation, with the shape's call count.
    assert sorted(_Timer.made) == [("pool-a", 51), ("pool-b", 51)] and _Timer.closed == 2
    a = times["a"]
    assert (a.method, a.median_us, a.graph_us, a.spread, a.rounds) == ("graph", 3.0, 3.0, 0.0, 7)
    assert a.host_us == 25.0 and not a.cached
    # The host is timed on the plain calls, as many as the headline asks for.
    assert ("a", timing.host_calls(3.0)) in host_seen
    assert {label for label, _ in host_seen} == {"a", "b"}


def test_a_label_that_cannot_be_captured_falls_back_to_do_bench_and_says_so() -> None:
    _Timer.per_call = {"a": 3.0}
    times, errors = timing.interleaved(
        _calls("a", "nograph"), rounds=3, method="graph", bench=lambda c: 20.0,
        graph_timer=_Timer, host=False,
    )  # fmt: skip
    assert not errors
    assert times["a"].method == "graph"
    assert (times["nograph"].method, times["nograph"].median_us) == ("do_bench", 20.0)
    assert times["nograph"].graph_us is None and times["nograph"].host_us is None


def _never_graph(call: timing.Call, n: int) -> None:
    raise AssertionError("a do_bench shape captured a graph")


def test_do_bench_rounds_rotate_and_stop_once_quiet() -> None:
    order: list[str] = []

    def bench(call: timing.Call) -> float:
        order.append(call())
        return 100.0

    times, _ = timing.interleaved(
        _calls("a", "b", "c"), rounds=7, bench=bench, graph_timer=_never_graph, host=False
    )
    assert order[:3] == ["a", "b", "c"] and order[3:6] == ["b", "c", "a"]
    assert len(order) == 21  # 7 rounds: every spread is 0, under the target
    assert times["a"].method == "do_bench" and times["a"].rounds == 7


def test_noisy_rounds_go_on_up_to_max_rounds() -> None:
    figures = iter([100.0, 130.0] * 20)
    times, _ = timing.interleaved(
        _calls("a"), rounds=7, max_rounds=11, bench=lambda c: next(figures), host=False
    )
    assert times["a"].rounds == 11 and times["a"].spread > timing.SPREAD_TARGET

    # Two slow rounds of 7 are one more than the trimmed range drops; an eighth round drops
    # two at each end, and the rounds stop there.
    seq = iter([100.0, 110.0, 100.0, 110.0, 100.0, 100.0, 100.0] + [100.0] * 10)
    times, _ = timing.interleaved(
        _calls("a"), rounds=7, max_rounds=15, bench=lambda c: next(seq), host=False
    )
    assert times["a"].rounds == 8 and times["a"].spread == 0.0


def test_a_failing_label_drops_out_with_one_line() -> None:
    def boom() -> str:
        raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore")

    times, errors = timing.interleaved(
        {"a": lambda: "a", "bad": boom}, rounds=3, bench=lambda c: c() and 5.0, host=False
    )
    assert errors == {"bad": "RuntimeError: CUDA error: an illegal memory access was encountered"}
    assert set(times) == {"a"}


def test_describe_error_is_one_line() -> None:
    assert timing.describe_error(ValueError("")) == "ValueError"
    assert timing.describe_error(KeyError("k")) == "KeyError: 'k'"


class _Event:
    def __init__(self, log: list[str], name: str, clock: list[float]):
        self.log, self.name, self.clock = log, name, clock
        self.at = 0.0

    def record(self) -> None:
        self.log.append(self.name)
        self.at = self.clock[0]

    def elapsed_time(self, end: _Event) -> float:  # milliseconds, as torch's
        return end.at - self.at


def test_the_flush_runs_before_each_replay_outside_its_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: list[str] = []
    clock = [0.0]
    names = iter(["start", "end"] * 10)
    monkeypatch.setattr(torch.cuda, "Event", lambda enable_timing: _Event(log, next(names), clock))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))

    class _Graph:
        def replay(self) -> None:
            log.append("replay")
            clock[0] += 0.1  # 100 us of work per replay

    def flush() -> None:
        log.append("flush")
        clock[0] += 5.0  # a slow flush: it must not show in the figure

    timer = object.__new__(timing.GraphTimer)
    timer.graph, timer.flush, timer.n_calls = _Graph(), flush, 50
    per_call = timer.time_us(replays=3)
    assert log == ["flush", "start", "replay", "end"] * 3 + ["sync"]  # one sync, at the end
    assert per_call == pytest.approx(100.0 / 50)


def test_host_time_is_back_to_back_calls_synced_once(monkeypatch: pytest.MonkeyPatch) -> None:
    syncs: list[int] = []
    calls: list[int] = []
    ticks = iter([1.0, 1.0 + 40e-6 * 8])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: syncs.append(len(calls)))
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(ticks))
    us = timing.host_us(lambda: calls.append(1), 8)
    assert us == pytest.approx(40.0)
    assert syncs == [0, 8]  # before the first call and after the last, none between


def test_graph_pool_copies_inputs_to_distinct_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    base = torch.randn(4, 16)
    padded = base[:, :8]  # a non-dense view: its copy must keep the row stride of 16
    sets = [[padded, 0.5], [torch.randn(4, 8), 0.5]]
    pool = timing.graph_pool(sets)
    assert len(pool) == timing.GRAPH_CALLS[1]  # tiny sets: one per call of the longest replay
    third = pool[2][0]
    assert third.stride() == padded.stride() and torch.equal(third, padded)
    assert third.data_ptr() != padded.data_ptr() and pool[2][1] == 0.5
    assert len({s[0].data_ptr() for s in pool}) == len(pool)

    # Large sets: copies only until COLD_BYTES of them (here 1 KiB for 256-byte sets).
    monkeypatch.setattr(timing, "COLD_BYTES", 1024)
    small: list[list[object]] = [[torch.randn(64)]]
    assert len(timing.graph_pool(small)) == 4
    many: list[list[object]] = [[torch.randn(64)] for _ in range(6)]
    assert len(timing.graph_pool(many)) == 6  # never fewer than the drawn sets


def _pt(us: float) -> Callable[[timing.Call], float]:
    return lambda call: us


def test_interleaved_with_no_calls() -> None:
    assert timing.interleaved({}, bench=_pt(1.0)) == ({}, {})
