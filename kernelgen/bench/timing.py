"""The timing protocol: one method per shape, interleaved rounds, a robust spread, host time.

Method, chosen per shape by `choose_method` and the same for every implementation of the shape:

- graph, for kernels under GRAPH_BELOW_US: a single launch timed by do_bench measures the host's
  launch gap as much as the kernel (a 64x18432 silu_and_mul on the H200: 14.9 us by do_bench with
  a 162% spread, 3.85 us inside a CUDA graph). As SGLang's MoE tuner does, n calls are captured in
  one CUDA graph and each replay is timed with CUDA events; per call = replay time / n.
- do_bench, above it: `triton.testing.do_bench` median with its L2 flush before every call; the
  launch gap is a negligible part of a long kernel.

Rounds: every implementation is timed once per round, in a rotated order, so clock and thermal
drift land on all of them alike; at least `rounds` rounds, more (up to `max_rounds`) while some
implementation's spread is above SPREAD_TARGET. The figure is the median of the rounds; the
spread (`summarize`) is the noise the acceptance rule compares speedups against.

Host time: wall clock of n back-to-back calls / n, synchronized once at the end: what a Python
caller pays per call, launch overhead included (it decides decode-sized shapes).

Callables passed here take no arguments: `rotating` cycles one function through several input
sets, so repeated calls do not measure one set sitting in cache.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from kernelgen.records import PeerTime

Call = Callable[[], Any]
Method = Literal["do_bench", "graph"]

# Bump when the protocol changes what a figure means: cached peer times of another protocol are
# not comparable with this one's and are timed again.
PROTOCOL = 2

ROUNDS = 7  # at least this many rounds: the trimmed range then drops one round at each end
MAX_ROUNDS = 15
SPREAD_TARGET = 0.03
WARMUP_MS = 10  # do_bench's warmup and rep are milliseconds of calls, not counts
REP_MS = 40

GRAPH_BELOW_US = 50.0
GRAPH_SPAN_US = 200.0  # one replay covers about this much work (events resolve ~0.5 us)...
GRAPH_CALLS = (10, 200)  # ...within these bounds on the number of captured calls
GRAPH_REPLAYS = 20  # timed replays per round; the round's figure is their median
GRAPH_PROBE_CALLS = 10
GRAPH_PROBE_REPLAYS = 3
# L2 for graph replays (the H200's is ~60 MB), two measures, both needed:
# 1. FLUSH_BYTES are written before each replay, outside the timed region: the start event follows
#    the flush in stream order, and the flush keeps the GPU busy (~60 us) while the host enqueues
#    the replay, so neither the flush nor a launch gap is timed. Without it the first calls of a
#    replay read what the previous replay left in L2.
# 2. The n calls of one replay rotate over a pool of input copies (`graph_pool`): distinct sets
#    for up to GRAPH_CALLS[1] calls, or COLD_BYTES of them when sets are large, so no call reads
#    inputs an earlier call of the same replay pulled into L2. Without it, calls 2..n of a decode
#    shape run from L2 and can even pass below the DRAM floor.
# Rotation alone would take 256 MB / set size calls per replay (30,000 for a 1x4096 row).
FLUSH_BYTES = 256 * 1024**2
COLD_BYTES = 256 * 1024**2

HOST_SPAN_US = 20000.0
HOST_CALLS = (10, 200)


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
    """Median and spread of per-round figures. The spread is a trimmed range: (max - min) /
    median once the floor(n/4) lowest and highest rounds are dropped (one of 7 rounds at each
    end; none of 3). One outlying round (a clock step, a host hiccup) does not set the noise;
    a quarter of them would. It is an interquartile range by order statistics, kept in the
    (max - min) / median form of earlier records."""
    xs = sorted(samples)
    med = statistics.median(xs)
    k = len(xs) // 4
    spread = (xs[len(xs) - 1 - k] - xs[k]) / med if med > 0 else 0.0
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


def _copy(arg: Any) -> Any:
    """A tensor at a new address with the same values and the same strides (a padded view stays
    padded: the kernel must see the layout it was verified on); anything else as it is."""
    import torch

    if not isinstance(arg, torch.Tensor):
        return arg
    out = torch.empty_strided(arg.size(), arg.stride(), dtype=arg.dtype, device=arg.device)
    return out.copy_(arg)


def graph_pool(sets: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The input sets for graph replays: the given ones, then copies of them until the calls of
    one replay touch distinct inputs (up to GRAPH_CALLS[1]) or COLD_BYTES of them."""
    import torch

    size = sum(a.nbytes for a in sets[0] if isinstance(a, torch.Tensor))
    want = max(len(sets), min(GRAPH_CALLS[1], math.ceil(COLD_BYTES / max(size, 1))))
    pool = [list(s) for s in sets]
    while len(pool) < want:
        pool.append([_copy(a) for a in sets[len(pool) % len(sets)]])
    return pool


def bench_us(call: Call, warmup_ms: float = WARMUP_MS, rep_ms: float = REP_MS) -> float:
    """Median GPU time of one call in microseconds, L2 flushed before each call."""
    from triton.testing import do_bench

    return float(do_bench(call, warmup=warmup_ms, rep=rep_ms, return_mode="median")) * 1e3


@functools.cache
def _flush_buffer() -> Any:
    import torch

    return torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")


def flush_l2() -> None:
    """Evict L2 by writing a buffer several times its size (what do_bench does per call)."""
    _flush_buffer().zero_()


class GraphTimer:
    """Captures n calls into one CUDA graph (as torch's docs say: warm up on a side stream, then
    capture) and times its replays, L2 flushed before each; per call = replay time / n."""

    def __init__(self, call: Call, n_calls: int, flush: Call = flush_l2):
        import torch

        self.n_calls = n_calls
        self.flush = flush
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        # Outputs are dropped as they come: the graph's pool reuses their memory, so a graph of
        # 200 calls holds one or two outputs, not 200 (the flush evicts them between replays).
        with torch.cuda.graph(self.graph):
            for _ in range(n_calls):
                call()
        torch.cuda.synchronize()
        self.graph.replay()  # the first replay uploads the graph; keep it out of the figures
        torch.cuda.synchronize()

    def time_us(self, replays: int = GRAPH_REPLAYS) -> float:
        """Median per-call time of `replays` replays, each timed alone between its own events."""
        return statistics.median(self.samples_us(replays))

    def samples_us(self, replays: int = GRAPH_REPLAYS) -> list[float]:
        """Per-call time of each of `replays` replays, each timed alone between its own events."""
        import torch

        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(replays)
        ]
        for start, end in events:
            self.flush()
            start.record()
            self.graph.replay()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) * 1e3 / self.n_calls for s, e in events]

    def close(self) -> None:
        self.graph.reset()  # gives the graph's private memory pool back


def host_us(call: Call, n_calls: int) -> float:
    """Wall time per call of n back-to-back calls, synchronized once at the end, in us."""
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n_calls):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n_calls * 1e6


def choose_method(
    calls: dict[str, Call],
    *,
    below_us: float = GRAPH_BELOW_US,
    graph_timer: Callable[[Call, int], Any] = GraphTimer,
) -> tuple[Method, int]:
    """How to time a shape, from a short graph of each call: ("graph", calls per replay) when
    every call can be captured and the fastest runs under `below_us`; ("do_bench", 0) otherwise.
    Calls per replay follow the fastest, and all implementations of the shape share them: the
    replay's own launch, spread over n calls, then biases none of them against another."""
    probes: list[float] = []
    for call in calls.values():
        try:
            timer = graph_timer(call, GRAPH_PROBE_CALLS)
            try:
                probes.append(timer.time_us(GRAPH_PROBE_REPLAYS))
            finally:
                timer.close()
        except Exception:  # a launcher that syncs or reads a value back cannot be captured
            return "do_bench", 0
    if not probes or min(probes) >= below_us:
        return "do_bench", 0
    return "graph", graph_calls(min(probes))


def interleaved(
    calls: dict[str, Call],
    rounds: int = ROUNDS,
    *,
    max_rounds: int | None = MAX_ROUNDS,
    method: Method = "do_bench",
    n_calls: int = GRAPH_CALLS[0],
    replay_calls: dict[str, Call] | None = None,
    host: bool = True,
    target: float = SPREAD_TARGET,
    bench: Callable[[Call], float] = bench_us,
    graph_timer: Callable[[Call, int], Any] = GraphTimer,
    host_timer: Callable[[Call, int], float] = host_us,
) -> tuple[dict[str, PeerTime], dict[str, str]]:
    """Time every call once per round, in a rotated order, for `rounds` rounds and more, up to
    `max_rounds`, while a spread is above `target`.

    With method "graph", each label is captured once (`replay_calls[label]`, rotating over the
    graph pool, else `calls[label]`) with `n_calls` calls and every round times its replays; a
    label whose capture fails is timed by do_bench instead, and its PeerTime says so. Returns per
    label a PeerTime and, apart, the labels that raised, with the error.
    """
    labels = list(calls)
    samples: dict[str, list[float]] = {label: [] for label in labels}
    host_samples: dict[str, list[float]] = {label: [] for label in labels}
    graphs: dict[str, Any] = {}
    errors: dict[str, str] = {}
    last = max(rounds, max_rounds or rounds)
    try:
        if method == "graph":
            for label in labels:
                try:
                    graphs[label] = graph_timer(
                        (replay_calls or {}).get(label, calls[label]), n_calls
                    )
                except Exception:  # this label falls back to do_bench; its method records it
                    pass
        for r in range(last):
            for label in rotated(labels, r):
                if label in errors:
                    continue
                call = calls[label]
                try:
                    t = graphs[label].time_us() if label in graphs else bench(call)
                    samples[label].append(t)
                    if host:
                        host_samples[label].append(host_timer(call, host_calls(t)))
                except Exception as e:  # one implementation failing must not end the others
                    errors[label] = describe_error(e)
            live = [s for label, s in samples.items() if s and label not in errors]
            if r + 1 >= rounds and all(summarize(s)[1] <= target for s in live):
                break
    finally:
        for g in graphs.values():
            g.close()
    times: dict[str, PeerTime] = {}
    for label in labels:
        if label in errors or not samples[label]:
            continue
        med, spread = summarize(samples[label])
        graphed = label in graphs
        times[label] = PeerTime(
            median_us=med,
            method="graph" if graphed else "do_bench",
            graph_us=med if graphed else None,
            host_us=statistics.median(host_samples[label]) if host_samples[label] else None,
            spread=spread,
            rounds=len(samples[label]),
        )
    return times, errors
