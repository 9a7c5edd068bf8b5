"""Issue [R], item 6, on a multi-GPU host: candidates judged per minute against the number of GPUs
(1, 2, 4, 8, as many as are visible), one evaluation worker per GPU (workers.py). Each count gets
a fresh pool, warmed by one seed judge per worker (its deadlines, its runners, the compile cache;
a run's workers are warm after their first candidate), then PER_GPU x N candidates at once: the
operator's seed and its reference-plus-noise control, each made unique by a comment so no judge
answers a repeat from its cache. What must hold: at N GPUs, at least 0.8 x N times one GPU's rate.
    python scripts/judging_throughput.py OUT.json [--op silu_and_mul] [--per-gpu 6] [--gpus 1,2,4,8]
Writes OUT.json and evaluations/throughput/judging-<UTC time>.json (the committed record).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "verify"))

EFFICIENCY = 0.8  # what the issue asks at N GPUs, of N x one GPU's rate


class Point(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpus: int
    workers: list[str]
    candidates: int
    accepted: int
    seconds: float = Field(description="from the first submission to the last verdict")
    per_minute: float
    efficiency: float | None = Field(None, description="per_minute / (gpus x one GPU's)")
    warm_s: float = Field(description="the pool's start and one seed judge per worker")


class ThroughputRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: str
    gpu: str | None
    host: str
    per_gpu: int
    points: list[Point]
    holds: bool | None = Field(None, description="every N >= 2 at >= 0.8 x N times one GPU's")
    measured: str


def sources(op: str, n: int) -> list[str]:
    import controls

    seed = (ROOT / "seeds" / f"{op}.py").read_text()
    kinds = [seed, controls.noisy(op)]
    return [kinds[i % 2] + f"\n# throughput candidate {i}\n" for i in range(n)]


def measure(
    op: str, n: int, visible: list[str], per_gpu: int, seed: int, device: str = "cuda"
) -> Point:
    from kernelgen import paths
    from kernelgen.run.station import StationConfig
    from kernelgen.run.workers import Pool, start_local

    config = StationConfig(op=op, device=device, seed=seed, root=str(paths.root()))
    mark = time.monotonic()
    workers = start_local(config, visible[:n], Path(tempfile.mkdtemp(prefix="throughput-")))
    pool = Pool(workers, f"{n} GPUs")  # type: ignore[arg-type]
    try:
        warm = sources(op, n)  # one each: N idle workers take one job each
        for f in [
            pool.submit(pool.job("judge", candidate=f"warm{i}", source=s))
            for i, s in enumerate(warm)
        ]:
            f.result()
        warm_s = time.monotonic() - mark
        todo = [
            s.replace("throughput candidate", "timed candidate") for s in sources(op, per_gpu * n)
        ]
        mark = time.monotonic()
        futures = [
            pool.submit(pool.job("judge", candidate=f"c{i}", source=s)) for i, s in enumerate(todo)
        ]
        outcomes = [f.result() for f in futures]
        seconds = time.monotonic() - mark
    finally:
        pool.close()
    errors = [o.error for o in outcomes if o.error]
    if errors:
        raise SystemExit(f"{n} GPUs: worker error: {errors[0]}")
    return Point(
        gpus=n,
        workers=[w.name for w in workers],
        candidates=len(todo),
        accepted=sum(1 for o in outcomes if o.verdict is not None and o.verdict.accepted),
        seconds=round(seconds, 2),
        per_minute=round(len(todo) / seconds * 60.0, 2),
        warm_s=round(warm_s, 2),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--op", default="silu_and_mul")
    parser.add_argument("--per-gpu", type=int, default=6)
    parser.add_argument("--gpus", default="1,2,4,8")
    # CPU: a smoke run through the interpreter, N workers on the host's cores; its figures say
    # nothing of GPUs and are not kept under evaluations/.
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    import socket
    from datetime import datetime, timezone

    import torch

    from kernelgen import store
    from kernelgen.run.workers import visible_gpus

    visible = visible_gpus() if args.device == "cuda" else [""] * 8
    if not visible:
        raise SystemExit("judging_throughput.py needs CUDA devices (or --device cpu to smoke)")
    counts = [n for n in (int(c) for c in args.gpus.split(",")) if n <= len(visible)]
    seed = random.SystemRandom().randrange(2**31)
    points: list[Point] = []
    for n in counts:
        point = measure(args.op, n, visible, args.per_gpu, seed, args.device)
        if points and points[0].gpus == 1:
            point.efficiency = round(point.per_minute / (n * points[0].per_minute), 3)
        points.append(point)
        print(
            f"{n} GPUs: {point.candidates} candidates in {point.seconds:.1f} s = "
            f"{point.per_minute:.1f}/min"
            + (f", {point.efficiency:.2f} of {n}x one GPU" if point.efficiency else ""),
            flush=True,
        )
    scaled = [p for p in points if p.efficiency is not None]
    record = ThroughputRecord(
        op=args.op,
        gpu=torch.cuda.get_device_name() if args.device == "cuda" else None,
        host=socket.gethostname(),
        per_gpu=args.per_gpu,
        points=points,
        holds=all(p.efficiency >= EFFICIENCY for p in scaled) if scaled else None,  # type: ignore[operator]
        measured=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    text = record.model_dump_json(indent=2)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    if args.device != "cuda":
        print(f"wrote {args.out}")
        return
    kept = ROOT / "evaluations" / "throughput" / f"judging-{store.stamp()}.json"
    store.write_atomic(kept, text)
    print(f"wrote {args.out} and {kept}")


if __name__ == "__main__":
    main()
