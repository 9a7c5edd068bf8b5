"""Where a verify's time goes, on the machine it runs on (issue [E]): the judge's process and
its runners sampled (kernelgen/verify/sampler.py), per operator. One Evaluator per operator
judges the seed (truth, compiles, a fresh runner) and then a copy of it that differs only in a
comment (a new candidate of the same run: truth and compiles reused), which is what the loop
pays per candidate.
    python scripts/profile_verify.py --out DIR [--ops softmax rms_norm silu_and_mul]
Writes DIR/<op>-phases.json, DIR/<op>-<label>-judge.txt, DIR/<op>-runners/runner-<pid>.txt and
DIR/<op>-<label>-calls.jsonl (one line per checked call: when its answer was taken, the runner's
parts, the bytes of its outputs), the per-call view that the phases' sums hide.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", nargs="*", default=["softmax", "rms_norm", "silu_and_mul"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    os.chdir(ROOT)
    from kernelgen.spec import seed_path
    from kernelgen.verify import verdict as judge_module  # where the judge counts each answer
    from kernelgen.verify.judge import Evaluator
    from kernelgen.verify.sampler import Sampler

    for op in args.ops:
        prof_dir = args.out / f"{op}-runners"
        prof_dir.mkdir(parents=True, exist_ok=True)
        os.environ["KERNELGEN_RUNNER_PROFILE"] = str(prof_dir)
        seed = seed_path(op)
        twin = args.out / f"{op}_twin.py"
        twin.write_text(seed.read_text() + "\n# the same kernel, another candidate\n")
        figures: dict[str, object] = {}
        start = time.monotonic()
        with Evaluator(op, args.device) as ev:
            figures["evaluator_start_s"] = round(time.monotonic() - start, 3)
            for label, path in (("seed", seed), ("twin", twin)):
                source = path.read_text()
                judge = Sampler().start()
                mark = time.monotonic()
                with _call_trace(judge_module, args.out / f"{op}-{label}-calls.jsonl"):
                    v = ev.verify(path, source, hashlib.sha256(source.encode()).hexdigest())
                judge.stop()
                wall = round(time.monotonic() - mark, 3)
                if label == "seed":
                    ev.calibrate(v)
                figures[label] = {
                    "wall_s": wall,
                    "outcome": v.outcome,
                    "reason": v.reason,
                    "phases": v.phases.model_dump() if v.phases else None,
                    "cases_run": sum(c.status != "not_run" for c in v.cases),
                }
                print(op, label, json.dumps(figures[label]), flush=True)
                judge.write(args.out / f"{op}-{label}-judge.txt")
            figures["round_trips"] = _round_trips(ev, seed)
            print(op, "round trips", json.dumps(figures["round_trips"]), flush=True)
        (args.out / f"{op}-phases.json").write_text(json.dumps(figures, indent=2))
        os.environ.pop("KERNELGEN_RUNNER_PROFILE", None)


@contextlib.contextmanager
def _call_trace(judge_module, path: Path):  # noqa: ANN001
    """Every answer the judge counts, as it counts it: the gaps between the lines' times are the
    calls' wall time, the runner's parts say how much of it the runner saw."""
    count = judge_module._count
    start = time.monotonic()
    with path.open("w") as f:

        def traced(costs, reply):  # noqa: ANN001, ANN202
            count(costs, reply)
            nbytes = sum((leaf.span.nbytes if leaf.span else 0) for leaf in reply.leaves)
            f.write(
                json.dumps(
                    {
                        "t": round(time.monotonic() - start, 4),
                        "out_bytes": nbytes,
                        "seconds": reply.seconds,
                        "costs": reply.costs.model_dump() if reply.costs else None,
                    }
                )
                + "\n"
            )

        judge_module._count = traced
        try:
            yield
        finally:
            judge_module._count = count


def _round_trips(ev, seed: Path, n: int = 100) -> dict[str, float]:  # noqa: ANN001
    """The floor under a judged call: ms per call on the smallest case, one at a time and
    pipelined, without checks (what the runner and the pipes cost), and the judge's full check
    of one answer alone."""
    from kernelgen.verify.protocol import Call, Load

    case = min(ev.cases(), key=lambda c: sum(c.dims.values()))
    truth = ev.truths.get(case)
    runner = ev.pool.take()
    try:
        runner.ask(Load(path=str(seed), entry=ev.spec.name, arg_names=ev.spec.arg_names), 60)
        out = ev.folder / "round-trip.pt"
        inputs = truth.variants["a"]
        lends = ev.device == "cuda"  # as the judge calls: inputs lent, a fresh loan per call

        def call(**update: object) -> Call:
            return Call(
                inputs=None if lends else str(inputs.file),
                shared=inputs.lend() if lends else None,
                share_outputs=lends,
                outputs=str(out),
                **update,  # type: ignore[arg-type]
            )

        runner.ask(call(), 60)  # compiled (loaded from the cache) before the clock starts
        figures: dict[str, float] = {}
        mark = time.monotonic()
        for _ in range(n):
            runner.ask(call(), 60)
        figures["one_at_a_time_ms"] = round(1e3 * (time.monotonic() - mark) / n, 3)
        mark = time.monotonic()
        for _ in range(n):
            runner.send(call())
        for _ in range(n):
            runner.receive(60)
        figures["pipelined_ms"] = round(1e3 * (time.monotonic() - mark) / n, 3)
        mark = time.monotonic()
        for _ in range(n):
            runner.ask(call(guard=False, fill="none"), 60)
        figures["unguarded_ms"] = round(1e3 * (time.monotonic() - mark) / n, 3)
        return figures
    finally:
        runner.close()


if __name__ == "__main__":
    main()
