"""Issue [R], item 5, on a one-GPU machine: several evaluation workers sharing the one GPU give the
same verdicts as one worker. Per operator, the seed and its negative controls (tests/verify/
controls.py: zeros, empty_like, passthrough, torch fallbacks, reference plus noise, lower
precision) are judged by a pool of one worker, then by a pool of K workers all on GPU 0
(workers.py, each its own process and sandboxes); the verdicts (outcome, category, each case's
status) must be equal, timings and workers aside.
    python scripts/shared_workers.py OUT_DIR [--ops softmax,silu_and_mul,rms_norm] [--workers 3]
Writes OUT_DIR/workers.json after each operator (the workers' stderr under OUT_DIR/logs),
prints each verdict as it comes, and exits 1 when a verdict differs; past --budget-s it stops
with what it has.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "verify"))

CONTROLS = [
    "zeros",
    "empty_like",
    "passthrough",
    "torch_fallback",
    "hidden_fallback",
    "noisy",
    "lower_precision",
]


def candidates(op: str) -> dict[str, str]:
    import controls

    found = {"seed": (ROOT / "seeds" / f"{op}.py").read_text()}
    for name in CONTROLS:
        try:
            found[name] = getattr(controls, name)(op)
        except (KeyError, ValueError) as e:  # a control this operator has no form of
            print(f"{op}: no {name} control ({e})", file=sys.stderr)
    return found


def verdict_key(v: object) -> dict:
    return {
        "accepted": v.accepted,  # type: ignore[attr-defined]
        "outcome": v.outcome,  # type: ignore[attr-defined]
        "category": v.category,  # type: ignore[attr-defined]
        "cases": [(c.name, c.status) for c in v.cases],  # type: ignore[attr-defined]
    }


def judge_all(
    op: str,
    slots: list[str],
    sources: dict[str, str],
    seed: int,
    logs: Path,
    deadline: float,
    device: str = "cuda",
) -> dict:
    from kernelgen import paths
    from kernelgen.run.station import StationConfig
    from kernelgen.run.workers import Pool, start_local

    config = StationConfig(op=op, device=device, seed=seed, root=str(paths.root()))
    mark = time.monotonic()
    workers = start_local(config, slots, logs)  # each worker's stderr: logs/<name>.stderr
    pool = Pool(workers, f"{len(slots)} workers on GPU {','.join(sorted(set(slots)))}")  # type: ignore[arg-type]
    started = time.monotonic() - mark
    print(f"{op}: {len(slots)} worker(s) started in {started:.1f} s", flush=True)
    try:
        mark = time.monotonic()
        futures = {
            name: pool.submit(pool.job("judge", candidate=name, source=src))
            for name, src in sources.items()
        }
        outcomes = {}
        for name, f in futures.items():
            try:
                outcomes[name] = f.result(timeout=max(1.0, deadline - time.monotonic()))
            except TimeoutError:
                raise SystemExit(f"{op}: out of --budget-s while judging {name}") from None
            o = outcomes[name]
            what = o.error or f"{o.verdict.outcome} ({o.verdict.category})"  # type: ignore[union-attr]
            print(f"  {name}: {what} by {o.worker}, {time.monotonic() - mark:.1f} s", flush=True)
        seconds = time.monotonic() - mark
    finally:
        pool.close()
    bad = {n: o.error for n, o in outcomes.items() if o.error}
    if bad:
        raise SystemExit(f"{op}: worker errors: {bad}")
    return {
        "workers": [w.name for w in workers],
        "gpu": workers[0].gpu,
        "start_s": round(started, 2),
        "judge_s": round(seconds, 2),
        "verdicts": {n: verdict_key(o.verdict) for n, o in outcomes.items()},
        "judged_by": {n: o.worker for n, o in outcomes.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ops", default="softmax,silu_and_mul,rms_norm")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=400.0, help="stop after this long")
    # CPU: a smoke run of this script through the interpreter (KERNELGEN_ROOT may name a
    # project with small specs); its verdicts are the interpreter's, not the H200's.
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("shared_workers.py needs a CUDA device (or --device cpu for a smoke run)")
    gpu = "0" if args.device == "cuda" else ""
    record: dict = {"device": args.device, "workers": args.workers, "ops": {}, "equal": True}
    deadline = time.monotonic() + args.budget_s
    for op in args.ops.split(","):
        sources = candidates(op)
        seed = random.SystemRandom().randrange(2**31)  # one seed: both pools draw the same inputs
        logs = args.out / "logs" / op
        one = judge_all(op, [gpu], sources, seed, logs / "one", deadline, args.device)
        shared = judge_all(
            op, [gpu] * args.workers, sources, seed, logs / "shared", deadline, args.device
        )
        diff = [n for n in sources if one["verdicts"][n] != shared["verdicts"][n]]
        record["ops"][op] = {"seed": seed, "one": one, "shared": shared, "differ": diff}
        record["equal"] = record["equal"] and not diff
        print(
            f"{op}: {len(sources)} candidates, one worker {one['judge_s']:.1f} s, "
            f"{args.workers} sharing GPU {gpu} {shared['judge_s']:.1f} s; "
            + ("same verdicts" if not diff else f"DIFFER on {', '.join(diff)}"),
            flush=True,
        )
        (args.out / "workers.json").write_text(json.dumps(record, indent=2))
    sys.exit(0 if record["equal"] else 1)


if __name__ == "__main__":
    main()
