"""The timing protocol: do_bench medians, CUDA-graph replays, host wall time, interleaved rounds.

- `bench_us`: `triton.testing.do_bench` median with its L2 flush before every call; the GPU time of
  one call on cold caches. This is the headline figure.
- `GraphTimer`: many calls captured in one CUDA graph and replayed; per-call time without launch
  gaps, for kernels short enough (under ~10 us) that the gaps dominate a single-call timing.
- `host_us`: perf_counter around call + synchronize: what a Python caller waits, launch overhead
  included (it decides decode-sized shapes).
- `interleaved`: every implementation timed once per round, in a rotated order, for several rounds,
  so clock and thermal drift land on all of them alike; the spread of the round medians is the
  noise that the acceptance rule compares speedups against.

Callables passed here take no arguments: `rotating` cycles one function through several pre-made
input sets, so repeated calls do not measure one set sitting in cache.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from kernelgen.records import PeerTime

Call = Callable[[], Any]

ROUNDS = 5
WARMUP_MS = 10  # do_bench's warmup and rep are milliseconds of calls, not counts
REP_MS = 40
GRAPH_BELOW_US = 30.0  # decode-sized shapes: ~20 us of host launch cost on the H200 machine
GRAPH_SPAN_US = 2000.0  # one replay covers about this much work...
GRAPH_CALLS = (20, 1000)  # ...within these bounds on the number of captured calls
GRAPH_REPLAYS = 5
HOST_SPAN_US = 20000.0
HOST_CALLS = (5, 100)


def rotating(fn: Callable[..., Any], arg_sets: Sequence[Sequence[Any]]) -> Call:
    """A zero-argument call that runs fn on the next input set each time."""
    state = {"i": 0}

    def call() -> Any:
        args = arg_sets[state["i"] % len(arg_sets)]
        state["i"] += 1
        return fn(*args)

    return call


def rotated(labels: Sequence[str], round_index: int) -> list[str]:
    """Round r starts at label r (mod n): no implementation always runs first or last."""
    if not labels:
        return []
    k = round_index % len(labels)
    return list(labels[k:]) + list(labels[:k])


def summarize(samples: Sequence[float]) -> tuple[float, float]:
    """Median and spread, (max - min) / median, of per-round figures."""
    med = statistics.median(samples)
    spread = (max(samples) - min(samples)) / med if med > 0 else 0.0
    return med, spread


def _calls_for(span_us: float, per_call_us: float, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    if per_call_us <= 0:
        return hi
    return max(lo, min(hi, int(span_us / per_call_us)))


def graph_calls(per_call_us: float) -> int:
    return _calls_for(GRAPH_SPAN_US, per_call_us, GRAPH_CALLS)


def host_calls(per_call_us: float) -> int:
    return _calls_for(HOST_SPAN_US, per_call_us, HOST_CALLS)


def describe_error(exc: BaseException) -> str:
    """One line: the exception's type and the first line of its message."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def bench_us(call: Call, warmup_ms: float = WARMUP_MS, rep_ms: float = REP_MS) -> float:
    """Median GPU time of one call in microseconds, L2 flushed before each call."""
    from triton.testing import do_bench

    return float(do_bench(call, warmup=warmup_ms, rep=rep_ms, return_mode="median")) * 1e3


class GraphTimer:
    """Captures n calls into one CUDA graph (as torch's docs say: warm up on a side stream, then
    capture) and times its replays; per call = replay time / n."""

    def __init__(self, call: Call, n_calls: int):
        import torch

        self.n_calls = n_calls
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            for _ in range(n_calls):
                call()
        torch.cuda.synchronize()
        self.graph.replay()  # the first replay uploads the graph; keep it out of the figures
        torch.cuda.synchronize()

    def time_us(self, replays: int = GRAPH_REPLAYS) -> float:
        import torch

        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        per_call = []
        for _ in range(replays):
            start.record()
            self.graph.replay()
            end.record()
            end.synchronize()
            per_call.append(start.elapsed_time(end) * 1e3 / self.n_calls)
        return statistics.median(per_call)

    def close(self) -> None:
        self.graph.reset()  # gives the graph's private memory pool back


def host_us(call: Call, n_calls: int) -> float:
    """Median wall time of call + synchronize, from an idle device, in microseconds."""
    import torch

    torch.cuda.synchronize()
    samples = []
    for _ in range(n_calls):
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def interleaved(
    calls: dict[str, Call],
    rounds: int = ROUNDS,
    *,
    graph_below_us: float | None = GRAPH_BELOW_US,
    host: bool = True,
    bench: Callable[[Call], float] = bench_us,
    graph_timer: Callable[[Call, int], Any] = GraphTimer,
    host_timer: Callable[[Call, int], float] = host_us,
) -> tuple[dict[str, PeerTime], dict[str, str]]:
    """Time every call once per round, in a rotated order, for `rounds` rounds.

    Returns per label a PeerTime (median of the round medians, their spread) and, apart, the
    labels that raised with the error. Graph timing starts after the first round, for every label,
    when any label's first median is under `graph_below_us`: all labels of a shape are measured
    the same way. A label whose capture fails keeps its other figures (graph_us None).
    """
    labels = list(calls)
    medians: dict[str, list[float]] = {label: [] for label in labels}
    graph_samples: dict[str, list[float]] = {label: [] for label in labels}
    host_samples: dict[str, list[float]] = {label: [] for label in labels}
    graphs: dict[str, Any] = {}
    no_graph: set[str] = set()
    errors: dict[str, str] = {}
    use_graph = False
    try:
        for r in range(rounds):
            for label in rotated(labels, r):
                if label in errors:
                    continue
                call = calls[label]
                try:
                    t = bench(call)
                    medians[label].append(t)
                    if host:
                        host_samples[label].append(host_timer(call, host_calls(t)))
                except Exception as e:  # one implementation failing must not end the others
                    errors[label] = describe_error(e)
                    continue
                if use_graph and label not in no_graph:
                    try:
                        if label not in graphs:
                            graphs[label] = graph_timer(call, graph_calls(t))
                        graph_samples[label].append(graphs[label].time_us())
                    except Exception:  # capture is a bonus figure, not a verdict
                        no_graph.add(label)
            if r == 0 and graph_below_us is not None:
                firsts = [m[0] for m in medians.values() if m]
                use_graph = bool(firsts) and min(firsts) < graph_below_us
    finally:
        for g in graphs.values():
            g.close()
    times: dict[str, PeerTime] = {}
    for label in labels:
        if label in errors or not medians[label]:
            continue
        med, spread = summarize(medians[label])
        times[label] = PeerTime(
            median_us=med,
            graph_us=statistics.median(graph_samples[label]) if graph_samples[label] else None,
            host_us=statistics.median(host_samples[label]) if host_samples[label] else None,
            spread=spread,
        )
    return times, errors
