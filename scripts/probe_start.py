"""Where a fresh judge's runner start goes (run on the GPU, after `. scripts/gpu/env.sh`).

A fresh judge starts its judging runner and draws the run's ground truth side by side; on the
H200 the runner was ready 7-8 s after the truth, 9-13 s after it was spawned. This times, per
operator, the runner's start alone, with the truth drawn beside it (as a fresh judge does), with
the truth's torch work held to a few intra-op threads, and without the runner's warm-up call.

    python3 scripts/probe_start.py OUT.json [--ops silu_and_mul rms_norm]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import torch

from kernelgen.spec import load_spec
from kernelgen.verify.judge import DEFAULT_MEMORY_MB
from kernelgen.verify.sandbox import sandbox_env
from kernelgen.verify.session import Pool
from kernelgen.verify.truth import Truths


def _start(env: dict[str, str]) -> float:
    mark = time.monotonic()
    pool = Pool("cuda", env, DEFAULT_MEMORY_MB, 1, replenish=False)
    runner = pool.take()
    runner.ready()
    seconds = time.monotonic() - mark
    runner.close()
    pool.close()
    return round(seconds, 2)


def _with_truth(op: str, env: dict[str, str], threads: int | None) -> dict[str, float]:
    spec = load_spec(op)
    truths = Truths(spec, 1234, "cuda", Path(tempfile.mkdtemp()))
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    took: dict[str, float] = {}

    def draw() -> None:
        mark = time.monotonic()
        truths.prepare(spec.cases)
        torch.cuda.synchronize()
        took["truth"] = round(time.monotonic() - mark, 2)

    t = threading.Thread(target=draw)
    t.start()
    took["runner"] = _start(env)
    t.join()
    torch.set_num_threads(before)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--ops", nargs="+", default=["silu_and_mul", "rms_norm"])
    args = ap.parse_args()
    env = sandbox_env("cuda")
    torch.empty(1, device="cuda")
    record: dict[str, object] = {"threads": torch.get_num_threads(), "cpus": os.cpu_count()}

    def save() -> None:
        args.out.write_text(json.dumps(record, indent=1))

    record["alone"] = [_start(env) for _ in range(2)]
    save()
    record["no_warmup"] = _start({**env, "KERNELGEN_RUNNER_WARMUP": "0"})
    save()
    for op in args.ops:
        record[op] = {
            "with_truth": _with_truth(op, env, None),
            "with_truth_4_threads": _with_truth(op, env, 4),
            "with_truth_1_thread": _with_truth(op, env, 1),
        }
        save()
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
