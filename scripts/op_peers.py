"""An operator against the peers its issue names, on the GPU it runs on, side by side in one run.

    python scripts/op_peers.py OP OUT.jsonl [--kernel FILE|kernelgen_ops ...] [--shapes NAME ...]
        [--skip LABEL ...]

For fp8_gemm and fused_moe ([G1], [G2]), whose peers the pipeline's bench does not time (FlagGems,
a bf16 cuBLAS matmul of the same shape): per benchmark shape of references/OP.py, inputs from the
bench's own input sets (kernelgen.bench.worker._input_sets), device time by the bench's protocol
(kernelgen.bench.timing: CUDA-graph replays of many calls where the fastest runs under ~50 us, else
do_bench with L2 flushed; inputs rotated over the sets so that L2 does not hold them; interleaved
rounds, the spread recorded) of
- each --kernel FILE's OP (a candidate's source), labelled by its path; `--kernel kernelgen_ops`
  times the library's public kernelgen_ops.OP as users call it (dispatch, lean launches);
- `eager`: the reference's peer (references/OP.py `eager`);
- the op's own peers (PEERS below), and FlagGems' kernel in a process of its own, since importing
  FlagGems slows every Triton launch in its process.
Each implementation is timed by the method the bench would give it alone (_timed).
Every implementation is timed if it runs; after its timed calls its answer is checked against
eager's by the bench's own re-check (kernelgen.bench.worker.recheck: the op's rule, or twice the
verifier's tolerance), and a disagreement is recorded beside its time as `wrong` (FlagGems'
fused_moe rounds its intermediate to bf16, which the verifier rejects: its time is still the speed
to beat). One JSON object per (shape, implementation) line, appended to OUT.jsonl as it comes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelgen.bench import timing  # noqa: E402
from kernelgen.bench.worker import _input_sets, recheck  # noqa: E402
from kernelgen.spec import BenchShape, OpSpec, load_spec  # noqa: E402

Impl = Callable[..., Any]


def _load(op: str, path: str) -> Impl:
    if path == "kernelgen_ops":
        import kernelgen_ops

        return getattr(kernelgen_ops, op)
    spec = importlib.util.spec_from_file_location(f"kernel_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, op)


# ------------------------------------------------------------------ each op's peers


def _fp8_gemm_local(spec: OpSpec, pool: list[list[Any]]) -> dict[str, Impl]:
    ref = spec.module
    # bf16 operands dequantized ahead for every input set of the pool (not timed), so that the
    # matmul rotates over as many distinct inputs as the fp8 kernels do: the speed to beat.
    halves = {
        id(a): (
            ref.dequant_a(a, a_s, torch.float32).to(torch.bfloat16),
            ref.dequant_b(b, b_s, torch.float32).to(torch.bfloat16),
        )
        for a, a_s, b, b_s in pool
    }

    def bf16_cublas(a: torch.Tensor, *_: Any) -> torch.Tensor:
        a16, b16 = halves[id(a)]
        return a16 @ b16.T

    def scaled_mm(a, a_s, b, b_s):  # recorded as an error while torch refuses these scales
        return torch._scaled_mm(a, b.t(), scale_a=a_s, scale_b=b_s, out_dtype=torch.bfloat16)

    return {"bf16_cublas": bf16_cublas, "scaled_mm": scaled_mm}


def _fp8_gemm_flaggems() -> Impl:
    import flag_gems

    fn = getattr(flag_gems, "w8a8_block_fp8_matmul", None) or flag_gems.ops.w8a8_block_fp8_matmul
    return lambda a, a_s, b, b_s: fn(a, b, a_s, b_s, [128, 128], output_dtype=torch.bfloat16)


def _fused_moe_flaggems() -> Impl:
    from flag_gems.fused import fused_experts_impl

    # Its default configs (none are tuned for the H200), silu and mul between the GEMMs, bf16.
    return lambda x, w1, w2, tw, ti: fused_experts_impl(x, w1, w2, tw, ti)


# op -> (its peers timed in the main process, FlagGems' kernel)
Local = Callable[[OpSpec, list[list[Any]]], dict[str, Impl]]
PEERS: dict[str, tuple[Local, Callable[[], Impl]]] = {
    "fp8_gemm": (_fp8_gemm_local, _fp8_gemm_flaggems),
    "fused_moe": (lambda spec, pool: {}, _fused_moe_flaggems),
}


SKIP: set[str] = set()  # --skip: labels not timed (eager fused_moe takes ~60 ms a call)


def impls(op: str, spec: OpSpec, group: str, kernels: list[str], pool: list[list[Any]]) -> dict:
    local, flaggems = PEERS[op]
    if group == "flaggems":
        return {"flaggems": flaggems()}
    found: dict[str, Impl] = {path: _load(op, path) for path in kernels}
    found["eager"] = spec.eager
    found.update(local(spec, pool))
    return {label: fn for label, fn in found.items() if label not in SKIP}


# ------------------------------------------------------------------ one group, one process


def run_shape(op: str, spec: OpSpec, shape: BenchShape, group: str, kernels: list[str]) -> list:
    sets = _input_sets(spec, shape, seed=0)
    pool = timing.graph_pool(sets)  # the sets themselves first, then copies
    ran, calls, replays, rows = {}, {}, {}, {}
    for label, fn in impls(op, spec, group, kernels, pool).items():
        rows[label] = {"op": op, "shape": shape.name, "impl": label, "group": group}
        try:
            with torch.no_grad():
                fn(*sets[0])  # compile, autotune, or raise
            torch.cuda.synchronize()
        except Exception as e:  # a peer that raises is a figure
            rows[label]["error"] = timing.describe_error(e)[:300]
            continue
        ran[label] = fn
        calls[label] = timing.rotating(fn, sets)
        replays[label] = timing.rotating(fn, pool)
    if ran:
        times, errors = _timed(calls, replays)
        wrong = recheck(spec, shape, ran, sets)
        for label in ran:
            t = times.get(label)
            if t is not None:
                rows[label].update(
                    median_us=round(t.median_us, 2), spread=round(t.spread, 4), method=t.method
                )
            elif label in errors:
                rows[label]["error"] = errors[label]
            if label in wrong:
                rows[label]["wrong"] = wrong[label][:300]
    return list(rows.values())


def _timed(calls: dict[str, Any], replays: dict[str, Any]) -> tuple[dict, dict]:
    """Each implementation by the method the bench would give it alone: CUDA-graph replays if it
    can be captured and runs under ~50 us, else do_bench. Not one method for the shape, as the
    bench's own interleaving has: eager fused_moe reads the touched experts back to the host and
    cannot be captured, which would put every kernel of the shape on do_bench, where a kernel of
    several launches measures its host time, while FlagGems, in its own process, gets graphs."""
    methods = {label: timing.choose_method({label: replays[label]}) for label in calls}
    graphed = [label for label, (method, _) in methods.items() if method == "graph"]
    times, errors = {}, {}
    with torch.no_grad():
        for method, labels in (("graph", graphed), ("do_bench", calls.keys() - set(graphed))):
            if not labels:
                continue
            # One count of calls per replay for the group, the fastest one's (as the bench does).
            n_calls = max(methods[label][1] for label in labels) if method == "graph" else 0
            t, e = timing.interleaved(
                {label: calls[label] for label in labels},
                host=False,
                method=method,
                n_calls=n_calls or timing.GRAPH_CALLS[0],
                replay_calls={label: replays[label] for label in labels},
            )
            times.update(t)
            errors.update(e)
    return times, errors


def run_group(op: str, group: str, kernels: list[str], shapes: list[str], out: Path) -> None:
    spec = load_spec(op)
    for shape in spec.data.bench:
        if shapes and shape.name not in shapes:
            continue
        for row in run_shape(op, spec, shape, group, kernels):
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", choices=sorted(PEERS))
    parser.add_argument("out", type=Path)
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--shapes", nargs="*", default=[])
    parser.add_argument("--skip", nargs="*", default=[], help="labels not to time")
    parser.add_argument("--group", default=None, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    SKIP.update(opts.skip)
    if opts.group:  # a worker: one group in this process
        run_group(opts.op, opts.group, opts.kernel, opts.shapes, opts.out)
        return 0
    for group in ("local", "flaggems"):
        command = [sys.executable, __file__, opts.op, str(opts.out), "--group", group]
        command += [x for k in opts.kernel for x in ("--kernel", k)]
        if group not in opts.skip:
            subprocess.run(command + ["--shapes", *opts.shapes, "--skip", *opts.skip], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
