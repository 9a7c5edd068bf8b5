"""The roofline, as pure functions: a cost (bytes, flops) and a time against the device's ceilings.

The floor of one call is the larger of two times: its bytes at the measured copy bandwidth and its
flops at the measured bf16 matmul rate (twice that for flops a cost model says run in fp8). No
kernel runs much below it; the larger term says whether the shape is memory- or compute-bound, and
a floor of only a few launch latencies says that launch and host overhead, not the roofline,
decide the shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from kernelgen.records import Ceilings, PeerTime, ShapeTiming
from kernelgen.spec import Precision

Bound = Literal["memory", "compute", "launch"]

# A floor below this many launch latencies is dominated by the launch itself.
LAUNCH_BOUND_FACTOR = 2.0
# Noise assumed for a graph time whose spread was not recorded (records from before graph times
# were headlines carried them as a side figure).
GRAPH_NOISE = 0.02
# Measured ceilings come from a copy and a cuBLAS matmul, which good kernels can slightly beat
# (reads alone stream faster than a copy's mixed traffic); below 90% of the floor is no longer
# a fast kernel but a wrong measurement or a cheat.
PHYSICAL_MARGIN = 0.9
# Hopper's dense fp8 tensor-core rate is twice its bf16 rate (H200: 1979 against 989 TFLOP/s on
# the datasheet). Derived from the measured bf16 ceiling rather than measured (torch's fp8 matmul
# takes only some scale layouts): a floor must never be above what the device can do, and the
# bf16 rate put fp8_gemm's honest prefill times "below the floor" (H200, 2026-12-02).
FP8_OVER_BF16 = 2.0


def memory_us(nbytes: int, ceilings: Ceilings) -> float:
    """Bytes at the copy bandwidth, in microseconds (GB/s = 1e3 bytes per us)."""
    return nbytes / (ceilings.copy_gbps * 1e3)


def matmul_tflops(ceilings: Ceilings, precision: Precision = "bf16") -> float:
    return ceilings.bf16_tflops * (FP8_OVER_BF16 if precision == "fp8" else 1.0)


def compute_us(flops: int, ceilings: Ceilings, precision: Precision = "bf16") -> float:
    """Flops at the matmul rate of their precision, in microseconds (TFLOP/s = 1e6 flops/us)."""
    return flops / (matmul_tflops(ceilings, precision) * 1e6)


def floor_us(nbytes: int, flops: int, ceilings: Ceilings, precision: Precision = "bf16") -> float:
    return max(memory_us(nbytes, ceilings), compute_us(flops, ceilings, precision))


def gbps(nbytes: int, time_us: float) -> float:
    return nbytes / time_us / 1e3


def tflops(flops: int, time_us: float) -> float:
    return flops / time_us / 1e6


def limit_pct(floor: float, time_us: float) -> float:
    """How close a time is to the floor: 100% is at the device's measured limit."""
    return floor / time_us * 100.0


def bound(nbytes: int, flops: int, ceilings: Ceilings, precision: Precision = "bf16") -> Bound:
    mem, comp = memory_us(nbytes, ceilings), compute_us(flops, ceilings, precision)
    if max(mem, comp) < LAUNCH_BOUND_FACTOR * ceilings.launch_us:
        return "launch"
    return "memory" if mem >= comp else "compute"


def physical_floor_violation(time_us: float, floor: float) -> bool:
    """A time below what the device can physically do: a bug or a cheat, never a win."""
    return time_us < PHYSICAL_MARGIN * floor


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive values; None when there are none."""
    logs = [math.log(v) for v in values]
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))


def _graph_noise(t: PeerTime) -> float:
    return t.spread if t.method == "graph" else GRAPH_NOISE


def comparable(a: PeerTime, b: PeerTime) -> tuple[float, float, float] | None:
    """(time of a, time of b, noise of the comparison) from figures measured the same way: the
    headlines when one method produced both, else the graph times when both have one (a capture
    that failed for one of them, a record from before graph headlines); None when they share no
    method: a do_bench time of a short kernel is mostly launch gap, and a ratio against a graph
    time would credit or blame the kernel for it."""
    if a.method == b.method:
        return a.median_us, b.median_us, max(a.spread, b.spread)
    if a.graph_us is not None and b.graph_us is not None:
        return a.graph_us, b.graph_us, max(_graph_noise(a), _graph_noise(b))
    return None


def speedup(peer: PeerTime | None, mine: PeerTime) -> float | None:
    """How many times faster `mine` is than `peer`; None without a peer time measured the way
    `mine` was."""
    pair = comparable(peer, mine) if peer is not None else None
    return pair[0] / pair[1] if pair is not None else None


def shape_timing(
    shape: str,
    dtype: str,
    nbytes: int,
    flops: int,
    candidate: PeerTime,
    ceilings: Ceilings,
    *,
    eager: PeerTime | None = None,
    compiled: PeerTime | None = None,
    seed: PeerTime | None = None,
    precision: Precision = "bf16",
) -> ShapeTiming:
    """One shape's row: the candidate's time against its peers and against the roofline. Rates
    and the floor check use the headline (median_us), whichever method produced it: the graph
    time for kernels under ~50 us, with L2 evicted as for do_bench, so the DRAM floor holds."""
    t = candidate.median_us
    floor = floor_us(nbytes, flops, ceilings, precision)
    suspect = None
    if physical_floor_violation(t, floor):
        suspect = (
            f"{t:.2f} us is below {PHYSICAL_MARGIN:.0%} of the floor {floor:.2f} us "
            f"({gbps(nbytes, t):.0f} GB/s against a measured {ceilings.copy_gbps:.0f}, "
            f"{tflops(flops, t):.1f} TFLOP/s against {matmul_tflops(ceilings, precision):.0f} "
            f"{precision})"
        )
    return ShapeTiming(
        shape=shape,
        dtype=dtype,
        bytes=nbytes,
        flops=flops,
        candidate=candidate,
        eager=eager,
        compile=compiled,
        seed=seed,
        speedup_eager=speedup(eager, candidate),
        speedup_compile=speedup(compiled, candidate),
        speedup_seed=speedup(seed, candidate),
        gbps=gbps(nbytes, t),
        tflops=tflops(flops, t),
        limit_pct=limit_pct(floor, t),
        floor_us=floor,
        bound=bound(nbytes, flops, ceilings, precision),
        suspect=suspect,
    )
