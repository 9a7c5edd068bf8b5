"""The library against its peers, per operator and shape, on the GPU it runs on (issue [H]).

    python scripts/bench_library.py OUT.json [--ops softmax rms_norm silu_and_mul]
        [--groups kernelgen liger flaggems] [--budget-s 231] [--forced-max-cols 65536]

For each operator, every benchmark shape of its spec (references/<op>.py SPEC["bench"]) and added
decode shapes (1, 16 and 64 rows at each width the spec benchmarks with 64 rows or fewer), in bf16;
every shape of 64 rows or fewer, the spec's own too, counts as a decode shape. Per shape:
device time (CUDA-graph replays of many calls, L2 flushed before each replay, inputs rotated) and
host time (wall time per call of back-to-back calls, synchronized once) of
- kernelgen_ops.<op> as a user calls it, lean launches as shipped (on; KERNELGEN_OPS_LEAN=0 in
  this script's environment turns them off in the workers; the measured dispatch may pick
  torch's op; `path` says
  which ran), and forced onto the kernel (set_dispatch("kernel"), up to --forced-max-cols wide:
  a seed holds a whole row in one program, slow to compile that wide and slow to run);
- torch eager (references/<op>.py `eager`) and torch.compile of it (default mode);
- torch.<op> under kernelgen_ops.use() (the routed torch call; softmax and rms_norm);
- Liger-Kernel and FlagGems where they import, each in a process of its own: importing FlagGems
  slows every Triton launch in its process. A peer that is missing, raises, or disagrees with
  eager is recorded as such, never dropped. Agreeing is by the operator's own rule where it has
  one (kernelgen.bench.worker.disagreement), else within bf16 rounding's order
  (bench_library_worker.PEER_TOLERANCE).
- the serving libraries' kernels (scripts/peers, issue [P]), each family in a process of its
  own, for the ops it has: QuACK (softmax, rms_norm), FlashInfer and SGLang (decode_attn), SGLang
  and vLLM (fused_moe), torch._scaled_mm rowwise (fp8_gemm), FlashMLA (sparse_attn). A family
  none of whose ops is asked for is not started. One that is not installed gets a measurement
  per shape of its ops with the reason (scripts/gpu/stage.sh carries their wheels).

Each group of implementations runs in its own worker process (scripts/bench_library_worker.py),
one after another, and streams one JSON line per figure; OUT.json is rewritten after every line,
so a run cut short keeps what it finished. The record's summary gives, per operator and metric,
the geometric mean and the worst ratio of kernelgen_ops.<op> to the best peer on each shape
(below 1: faster than every peer), and of the routed torch call to the plain one; host_target
gives the issue's target at decode shapes (host time at most eager's + 2 us), met or not, and
routed the issue's rule for torch.<op> under use(): per shape, never slower than without it by
more than the measured noise (device time; host time at decode shapes). A shape's host times
are taken in interleaved rounds, every implementation of the kernelgen worker once per round in
a rotating order, so that a slow spell of the host falls on all of them; host differences are
the median of the per-round differences (host_excess). Eager is timed twice (its device time
again after the shape's other implementations; two places in each host round), so that the
noise holds how far one call's figure moves between two timings: the farthest it moved at any
of the operator's shapes, relative to the figure (_moved), on top of the spread.
--budget-s bounds the whole run: by default the sum of the started groups' shares (`share`: 231 s
for kernelgen, Liger and FlagGems at the default three operators, 77 s an operator); a given
budget is split in the same proportions, the serving peers run first and kernelgen last. A
worker past its share is stopped, and what it had not measured is missing from the record.

The record's model is kernelgen/bench/library.py. Kept as evaluations/library/bench-<UTC
time>.json, the newest is what `kernelgen report --all` shows per operator.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# As the worker does: run from a checkout, kernelgen need not be installed.
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "scripts"))  # the peers package (scripts/peers)

import peers  # noqa: E402

from kernelgen.bench.library import (  # noqa: E402
    PEERS,
    TARGET_US,
    Availability,
    HostTarget,
    LibraryBench,
    Measurement,
    Ratio,
    RoutedCheck,
    Worker,
)

GROUPS = ("kernelgen", "liger", "flaggems", *peers.FAMILIES)
# The library groups' shares of the default budget, in seconds per operator asked for: their
# workers measure every one (kernelgen's with eager, torch.compile and the routed call beside
# it), and one of 6 operators, 20 shapes in, was stopped at a fixed share made for 3
# (evaluations/logs/h100-20261207-library-bench-serving-peers). A serving peer's share is its
# family's, JIT builds included. A given --budget-s is split in the same proportions.
PER_OP = {"kernelgen": 42.0, "liger": 15.5, "flaggems": 19.5}


def share(group: str, ops: list[str]) -> float:
    return PER_OP[group] * len(ops) if group in PER_OP else peers.FAMILIES[group].seconds


def started(groups: list[str], ops: list[str]) -> list[str]:
    """The groups to start, in the order they run: a serving peer's family only where it has one
    of `ops`, the families first and kernelgen last. Time a worker leaves unused passes to the
    next, and the families' shares are bounds on JIT builds that mostly go unused, so kernelgen,
    whose figures every comparison needs, gets what they leave."""
    chosen = [g for g in groups if g not in peers.FAMILIES or set(peers.FAMILIES[g].ops) & set(ops)]
    return sorted(chosen, key=lambda g: (g in PER_OP, g == "kernelgen"))


# ---------------------------------------------------------------- the summary


def _geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(ms: list[Measurement]) -> list[Ratio]:
    ok = [m for m in ms if m.error is None and m.skipped is None]
    out = []
    for op in dict.fromkeys(m.op for m in ok):
        for metric in ("device_us", "host_us"):
            by_shape: dict[str, dict[str, Measurement]] = {}
            for m in ok:
                if m.op == op and getattr(m, metric) is not None:
                    by_shape.setdefault(m.shape, {})[m.impl] = m
            pairs = (
                ("kernelgen_ops", "best_peer"),
                ("kernelgen_ops", "eager"),
                ("kernelgen_ops[kernel]", "best_peer"),
                ("routed", "eager"),
            )
            for impl, against in pairs:
                ratios: list[tuple[str, float, bool]] = []
                for shape, got in by_shape.items():
                    if impl not in got:
                        continue
                    if against == "best_peer":
                        base = [got[p] for p in PEERS if p in got]
                    else:
                        base = [got[against]] if against in got else []
                    if not base:
                        continue
                    best = min(getattr(b, metric) for b in base)
                    if best > 0:
                        mine = got[impl]
                        ratios.append((shape, getattr(mine, metric) / best, mine.decode))
                if not ratios:
                    continue
                worst = max(ratios, key=lambda r: r[1])
                decode = [r for _, r, d in ratios if d]
                out.append(
                    Ratio(
                        op=op,
                        metric=metric,  # type: ignore[arg-type]
                        against=against,
                        impl=impl,
                        shapes=len(ratios),
                        geomean=round(_geomean([r for _, r, _ in ratios]) or 0, 4),
                        worst=round(worst[1], 4),
                        worst_shape=worst[0],
                        decode_geomean=round(_geomean(decode), 4) if decode else None,
                    )
                )
    return out


def host_excess(m: Measurement, base: Measurement) -> float:
    """m's host time over base's: the median of their per-round differences where both were
    timed in the same rounds (a slow spell of the host falls on both sides of a pair), else the
    difference of their medians."""
    paired = _paired(m.host_rounds_us, base.host_rounds_us)
    return paired if paired is not None else (m.host_us or 0.0) - (base.host_us or 0.0)


def _paired(mine: list[float] | None, theirs: list[float] | None) -> float | None:
    """The median of per-round differences, where both were timed in the same rounds."""
    if mine and theirs and len(mine) == len(theirs):
        return statistics.median(a - b for a, b in zip(mine, theirs, strict=True))
    return None


def _moved(eager: list[Measurement], metric: str) -> float:
    """How far two timings of eager's call differed, relative to the figure, at the op's shape
    where they differed most: its device time taken again, or (host) the median difference of
    its two places in the host rounds. One shape's pair is one sample of that noise; a routed
    call's timing is a third, past the one sample about one time in four when nothing differs,
    so that with nine shapes some shape nearly always would be."""
    moved = [0.0]
    for m in eager:
        if metric == "device_us" and m.device_again_us is not None and m.device_us:
            moved.append(abs(m.device_again_us - m.device_us) / m.device_us)
        if metric == "host_us" and m.decode and m.host_us:
            paired = _paired(m.host_again_rounds_us, m.host_rounds_us)
            if paired is not None:
                moved.append(abs(paired) / m.host_us)
    return max(moved)


def host_targets(ms: list[Measurement]) -> list[HostTarget]:
    ok = [m for m in ms if m.decode and m.error is None and m.host_us is not None]
    eager = {(m.op, m.shape): m for m in ok if m.impl == "eager"}
    out = []
    for op in dict.fromkeys(m.op for m in ok):
        for impl in ("kernelgen_ops", "kernelgen_ops[kernel]", "routed"):
            excess = [
                (host_excess(m, eager[(op, m.shape)]), m.shape)
                for m in ok
                if m.op == op and m.impl == impl and (op, m.shape) in eager
            ]
            if not excess:
                continue
            worst = max(excess)
            out.append(
                HostTarget(
                    op=op,
                    impl=impl,
                    decode_shapes=len(excess),
                    worst_excess_us=round(worst[0], 2),
                    worst_shape=worst[1],
                    met=worst[0] <= TARGET_US,
                )
            )
    return out


def routed_checks(ms: list[Measurement]) -> list[RoutedCheck]:
    ok = [m for m in ms if m.error is None and m.skipped is None]
    out = []
    for op in dict.fromkeys(m.op for m in ok if m.impl == "routed"):
        eager = {m.shape: m for m in ok if m.op == op and m.impl == "eager"}
        for metric in ("device_us", "host_us"):
            moved = _moved(list(eager.values()), metric)
            rows = []  # (excess, noise, shape)
            for m in ok:
                plain = eager.get(m.shape)
                if m.op != op or m.impl != "routed" or plain is None:
                    continue
                if metric == "host_us" and not m.decode:
                    continue  # host time is the rule at decode shapes only
                mine, base = getattr(m, metric), getattr(plain, metric)
                if mine is None or base is None:
                    continue
                if metric == "host_us":
                    noise = ((plain.host_spread or 0.0) + moved) * base
                    rows.append((host_excess(m, plain), noise, m.shape))
                    continue
                noise = (max(m.device_spread or 0.0, plain.device_spread or 0.0) + moved) * base
                rows.append((mine - base, noise, m.shape))
            if not rows:
                continue
            worst = max(rows)
            out.append(
                RoutedCheck(
                    op=op,
                    metric=metric,  # type: ignore[arg-type]
                    shapes=len(rows),
                    worst_excess=round(worst[0], 3),
                    worst_shape=worst[2],
                    noise_there=round(worst[1], 3),
                    over_noise=[shape for excess, noise, shape in rows if excess > noise],
                    met=all(excess <= noise for excess, noise, _ in rows),
                )
            )
    return out


# ---------------------------------------------------------------- running the workers


def _save(record: LibraryBench, out: Path) -> None:
    record.summary = summarize(record.measurements)
    record.host_target = host_targets(record.measurements)
    record.routed = routed_checks(record.measurements)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(record.model_dump_json(indent=2) + "\n")
    tmp.replace(out)


def _take(line: str, record: LibraryBench) -> None:
    """One line of a worker: a figure, an availability, the environment; other lines (a peer's
    own prints) are passed on to stderr."""
    try:
        item = json.loads(line)
        kind = item.pop("kind")
    except (ValueError, AttributeError, KeyError):
        print(line.rstrip(), file=sys.stderr)
        return
    if kind == "measurement":
        m = Measurement.model_validate(item)
        record.measurements.append(m)
        figure = m.error or m.skipped or f"{m.device_us} us device, {m.host_us} us host"
        print(f"{m.op} {m.shape} {m.impl}: {figure}", file=sys.stderr, flush=True)
    elif kind == "availability":
        record.availability.append(Availability.model_validate(item))
    elif kind == "environment":
        record.lean_launches = item.pop("lean_launches", None)
        record.launch_plans = item.pop("launch_plans", None)
        record.environment = item


def run_worker(
    group: str, args: argparse.Namespace, timeout: float, record: LibraryBench, out: Path
):
    worker = next(w for w in record.workers if w.group == group)
    worker.state = "running"
    _save(record, out)
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "bench_library_worker.py"),
        group,
        "--forced-max-cols",
        str(args.forced_max_cols),
        *args.ops,
    ]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT, bufsize=1)
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(max(timeout, 1.0), stop)
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            _take(line, record)
            _save(record, out)
        proc.wait()
    finally:
        timer.cancel()
    worker.seconds = round(time.monotonic() - start, 1)
    worker.returncode = proc.returncode
    if timed_out.is_set():
        worker.state, worker.note = "timed_out", f"stopped after its {timeout:.0f} s share"
    else:
        worker.state = "finished" if proc.returncode == 0 else "failed"
    _save(record, out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the JSON record to write")
    parser.add_argument("--ops", nargs="+", default=["softmax", "rms_norm", "silu_and_mul"])
    parser.add_argument("--groups", nargs="+", choices=GROUPS, default=list(GROUPS))
    parser.add_argument("--budget-s", type=float, default=None)
    parser.add_argument("--forced-max-cols", type=int, default=65536)
    args = parser.parse_args()
    args.groups = started(args.groups, args.ops)
    shares = {g: share(g, args.ops) for g in args.groups}
    if args.budget_s is None:
        args.budget_s = sum(shares.values())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = LibraryBench(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command="python scripts/bench_library.py " + " ".join(sys.argv[1:]),
        budget_s=args.budget_s,
        workers=[Worker(group=g) for g in args.groups],
    )
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    deadline = time.monotonic() + args.budget_s
    share_total = sum(shares.values())
    for i, group in enumerate(args.groups):
        left = deadline - time.monotonic()
        later = sum(shares[g] for g in args.groups[i + 1 :])
        # This worker's share, plus whatever the earlier ones left unused.
        timeout = left - args.budget_s * later / share_total
        run_worker(group, args, timeout, record, args.out)
    record.complete = all(w.state == "finished" for w in record.workers)
    _save(record, args.out)
    print(f"record: {args.out}", file=sys.stderr)
    for r in record.summary:
        print(
            f"{r.op:13s} {r.metric:9s} {r.impl:22s} vs {r.against:9s} geomean {r.geomean}  "
            f"worst {r.worst} ({r.worst_shape})  decode {r.decode_geomean}  [{r.shapes} shapes]"
        )
    for t in record.host_target:
        print(
            f"{t.op:13s} decode host time, {t.impl} - eager: worst {t.worst_excess_us} us "
            f"({t.worst_shape}), target <= {TARGET_US} us: {'met' if t.met else 'NOT met'}"
        )
    for c in record.routed:
        print(
            f"{c.op:13s} torch.{c.op} under use() - without, {c.metric}: worst {c.worst_excess} us "
            f"({c.worst_shape}, noise there {c.noise_there} us): "
            f"{'within noise' if c.met else 'past noise at ' + ', '.join(c.over_noise)}"
        )
    return 0 if record.complete else 1


if __name__ == "__main__":
    sys.exit(main())
