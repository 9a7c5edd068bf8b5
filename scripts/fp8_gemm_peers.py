"""fp8_gemm against the peers that [G2] names, on the GPU it runs on, side by side.

    python scripts/fp8_gemm_peers.py OUT.jsonl [--kernel FILE ...]

Per benchmark shape of references/fp8_gemm.py (inputs from its own make_inputs), device time
by the bench's own protocol (kernelgen.bench.timing: CUDA-graph replays of many calls where the
fastest runs under ~50 us, else do_bench with L2 flushed; inputs rotated over several sets so
that L2 does not hold them; interleaved rounds, the spread recorded) of
- each --kernel FILE's `fp8_gemm` (a candidate's source), labelled by its path, and with
  `--kernel kernelgen_ops` the library's public kernelgen_ops.fp8_gemm;
- `bf16_cublas`: a bf16 matmul of the same shape on operands dequantized ahead (not timed), the
  speed an fp8 kernel is to beat (the issue's target: 1.5x it at M >= 4096);
- `eager`: the reference's peer (dequantize, then the bf16 matmul, all timed);
- `flaggems`: FlagGems' w8a8_block_fp8_matmul (block 128x128, bf16 out), in a process of its own,
  since importing FlagGems slows every Triton launch in its process;
- `scaled_mm`: torch._scaled_mm with these block scales, recorded as an error where torch refuses.
Every implementation's answer is checked against the reference's own compare() first; one that
fails is recorded with the reason, not timed. One JSON object per (shape, implementation) line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelgen.bench import timing  # noqa: E402
from references import fp8_gemm as ref  # noqa: E402


def _load(path: str) -> Any:
    if path == "kernelgen_ops":  # the library as users call it (dispatch, lean launches)
        import kernelgen_ops

        return kernelgen_ops.fp8_gemm
    spec = importlib.util.spec_from_file_location(f"kernel_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fp8_gemm


SETS = 3  # input sets drawn per shape; the graph pool copies them further (timing.graph_pool)


def _inputs(dims: dict[str, int], seed: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [t.cuda() for t in ref.make_inputs(SimpleNamespace(dims=dims), "float32", "normal", gen)]


def _flaggems() -> Any:
    import flag_gems

    fn = getattr(flag_gems, "w8a8_block_fp8_matmul", None) or flag_gems.ops.w8a8_block_fp8_matmul
    return lambda a, a_s, b, b_s: fn(a, b, a_s, b_s, [128, 128], output_dtype=torch.bfloat16)


def _scaled_mm(a, a_s, b, b_s):
    return torch._scaled_mm(a, b.t(), scale_a=a_s, scale_b=b_s, out_dtype=torch.bfloat16)


def impls(group: str, kernels: list[str], pool: list[list[torch.Tensor]]) -> dict[str, Any]:
    if group == "flaggems":
        return {"flaggems": _flaggems()}
    # bf16 operands dequantized ahead for every input set of the pool (not timed), so that the
    # matmul rotates over as many distinct inputs as the fp8 kernels do.
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

    found: dict[str, Any] = {path: _load(path) for path in kernels}
    found["bf16_cublas"] = bf16_cublas
    found["eager"] = ref.eager
    found["scaled_mm"] = _scaled_mm
    return found


def run_group(group: str, kernels: list[str], out: Path) -> None:
    for shape in ref.SPEC["bench"]:
        sets = [_inputs(shape["dims"], seed) for seed in range(SETS)]
        pool = timing.graph_pool(sets)  # the sets themselves first, then copies
        args = sets[0]
        truth = ref.fp8_gemm(*[t.double() if t.is_floating_point() else t for t in args])
        calls, replays, rows = {}, {}, []
        for label, fn in impls(group, kernels, pool).items():
            row = {"shape": shape["name"], "impl": label, "group": group}
            try:
                problem = ref.compare(fn(*args), truth, None, args)
            except Exception as e:  # a peer that raises is a figure
                problem = timing.describe_error(e)
            if problem is None:
                calls[label] = timing.rotating(fn, sets)
                replays[label] = timing.rotating(fn, pool)
            else:
                row["error"] = problem[:300]
            rows.append(row)
        method, n_calls = timing.choose_method(replays)
        times, errors = timing.interleaved(
            calls, host=False, method=method, n_calls=n_calls, replay_calls=replays
        )
        with out.open("a") as f:
            for row in rows:
                t = times.get(row["impl"])
                if t is not None:
                    row.update(median_us=round(t.median_us, 2), spread=round(t.spread, 4),
                               method=t.method)  # fmt: skip
                elif row["impl"] in errors:
                    row["error"] = errors[row["impl"]]
                f.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--group", default=None, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.group:  # a worker: one group in this process
        run_group(opts.group, opts.kernel, opts.out)
        return 0
    for group in ("local", "flaggems"):
        command = [sys.executable, __file__, str(opts.out), "--group", group]
        subprocess.run(command + [x for k in opts.kernel for x in ("--kernel", k)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
