"""Where a runner's first judged call goes (issue [E]): one operator's seed loaded into a runner
made in this process (the judge's runner code, no sandbox), its first call and the next one timed,
the first under cProfile; once with the runner's warm-up launch and once without, each in a fresh
process. Triton's cache is the judge's (warm it first: a verify of the seed). The inputs come from
files (the CPU's route; the CUDA judge lends them), so torch.load's own first use is in the figure.
    python scripts/first_call.py OUT_DIR [--op rms_norm]
Writes OUT_DIR/first_call-<mode>.txt (timings, then the profile's top functions) and prints the
timings.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(op: str, out: Path, mode: str) -> None:
    mark = time.monotonic()
    import torch

    from kernelgen.spec import load_spec, seed_path
    from kernelgen.spec.inputs import case_inputs, case_seed
    from kernelgen.verify.protocol import Call, Load
    from kernelgen.verify.runner import Runner

    spec = load_spec(op)
    runner = Runner("cuda")
    figures: dict[str, float] = {"runner_start_s": round(time.monotonic() - mark, 3)}
    reply = runner.load(Load(path=str(seed_path(op)), entry=op, arg_names=spec.arg_names))
    assert reply.ok, reply.error
    cases = sorted(spec.cases, key=lambda c: sum(c.dims.values()))[:2]
    calls = []
    for i, case in enumerate(cases):
        file = out / f"first_call-{mode}-{i}.pt"
        torch.save(case_inputs(spec, case, case_seed(1, case.name), "cpu"), file)
        calls.append(Call(inputs=str(file), outputs=str(out / f"first_call-{mode}-out.pt")))
    profiler = cProfile.Profile()
    mark = time.monotonic()
    profiler.enable()
    first = runner.call(calls[0])
    profiler.disable()
    figures["first_call_s"] = round(time.monotonic() - mark, 3)
    assert first.ok, first.error
    for label, call in (("same_case_again_s", calls[0]), ("another_case_s", calls[1])):
        mark = time.monotonic()
        assert runner.call(call).ok
        figures[label] = round(time.monotonic() - mark, 3)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(45)
    (out / f"first_call-{mode}.txt").write_text(json.dumps(figures) + "\n" + text.getvalue())
    print(mode, json.dumps(figures), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--op", default="rms_norm")
    parser.add_argument("--mode", choices=["warmup", "cold"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode:
        child(args.op, args.out, args.mode)
        return
    from kernelgen.verify.sandbox import sandbox_env

    for mode in ("cold", "warmup"):
        # A runner's environment (Triton's cache, the bytecode cache) from its start.
        env = {**sandbox_env("cuda"), "KERNELGEN_RUNNER_WARMUP": "1" if mode == "warmup" else "0"}
        subprocess.run(
            [sys.executable, __file__, str(args.out), "--op", args.op, "--mode", mode],
            check=False,
            timeout=300,
            env=env,
        )


if __name__ == "__main__":
    main()
