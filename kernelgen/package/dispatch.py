"""The dispatch table promotion writes into configs/<op>.json: per benchmark shape, whether the
kernel beat torch's op per call. The library takes the kernel only there (_runtime.py)."""

from __future__ import annotations

from kernelgen.bench import MIN_GAIN
from kernelgen.package.manifest import Provenance, ShapeSpeedup
from kernelgen.spec import load_spec


def _per_call(device_us: float, host_us: float | None) -> float:
    """What one call costs a caller making calls back to back: the device time, or the host
    time where launching is the slower part (decode shapes)."""
    return max(device_us, host_us or 0.0)


def _host_counts(s: ShapeSpeedup) -> bool:
    """Host time decides only where the kernel is launch-bound (decode shapes). Elsewhere a
    model's launches run ahead of a busy GPU and their host time hides behind earlier kernels:
    counting it there sent rms_norm 4096x4096 to torch's op (24.3 us on the device) from a
    kernel of 18.6 us, for a host time of 39.9 us measured on Triton's launch path. A record
    without the bound counts it everywhere, as before."""
    return s.host_us is not None and s.eager_host_us is not None and s.bound in ("launch", None)


# The kernel takes a shape only where it beat torch's op per call by this much: a tie is torch's,
# the path a user gets without the library. Measured on the H200 (2026-12-03): softmax 1x32000
# per call 12.94 us against 12.95 and 16x32000 13.70 against 13.47, a re-measurement of the same
# kernel flipping both; the library bench then timed the kernel's direct call 5.8 us slower on the
# host there. The margin is promotion's floor.
DISPATCH_MARGIN = MIN_GAIN


def dispatch_table(op: str, provenance: Provenance) -> dict[str, dict[str, object]]:
    """Per benchmark shape of a measured provenance, under its bucket key (the spec's bucket
    dims rounded up to powers of two, as in the tuned tables): whether the kernel beat torch's
    op per call by DISPATCH_MARGIN, host time included at launch-bound shapes (_host_counts).
    Shapes without an eager time, or no longer in the spec, are left out (no evidence); a shape
    renamed since keeps its rows, found by the name it was timed under (BenchShape.was)."""
    if not provenance.measured or not provenance.speedups:
        return {}
    spec = load_spec(op)
    table: dict[str, dict[str, object]] = {}
    for s in provenance.speedups:
        bench = spec.data.bench_named(s.shape)
        row = dispatch_row(s)
        if bench is None or row is None or not spec.data.bucket:
            continue
        table[spec.bucket_key(bench.dims)] = row
    return table


def dispatch_row(s: ShapeSpeedup) -> dict[str, object] | None:
    """One measured shape's row of the table, None without an eager time (no evidence)."""
    eager_us = s.eager_us
    if eager_us is None and s.eager:  # a record from before the raw times were kept
        eager_us = s.median_us * s.eager
    if eager_us is None:
        return None
    host = _host_counts(s)
    kernel = _per_call(s.median_us, s.host_us if host else None)
    torch_op = _per_call(eager_us, s.eager_host_us if host else None)
    return {
        "shape": s.shape,
        "kernel_us": round(kernel, 2),
        "torch_us": round(torch_op, 2),
        # What torch's op costs per call at the least, whatever its launch costs: the rule
        # at launch-bound shapes (kernelgen_ops/_runtime.py, _wins_on_a_slow_host).
        "torch_device_us": round(eager_us, 2),
        # The kernel's device time: all a call costs inside a CUDA graph, which the
        # library weighs alone under set_dispatch("device") (_runtime.takes_kernel_on_device).
        "kernel_device_us": round(s.median_us, 2),
        "host_included": host,
        "kernel": kernel < torch_op * (1 - DISPATCH_MARGIN),
    }
