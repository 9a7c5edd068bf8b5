"""fp8_gemm against the peers that [G2] names, on the GPU it runs on, side by side.

    python scripts/fp8_gemm_peers.py OUT.jsonl [--kernel FILE ...]

Per benchmark shape of references/fp8_gemm.py (inputs from its own make_inputs), device time
(kernelgen.bench.timing.interleaved: L2 flushed before each call, rotated rounds, the spread
recorded) of
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


def _inputs(dims: dict[str, int]) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [t.cuda() for t in ref.make_inputs(SimpleNamespace(dims=dims), "float32", "normal", gen)]


def _flaggems() -> Any:
    import flag_gems

    fn = getattr(flag_gems, "w8a8_block_fp8_matmul", None) or flag_gems.ops.w8a8_block_fp8_matmul
    return lambda a, a_s, b, b_s: fn(a, b, a_s, b_s, [128, 128], output_dtype=torch.bfloat16)


def _scaled_mm(a, a_s, b, b_s):
    return torch._scaled_mm(a, b.t(), scale_a=a_s, scale_b=b_s, out_dtype=torch.bfloat16)


def impls(group: str, kernels: list[str], args: list[torch.Tensor]) -> dict[str, Any]:
    if group == "flaggems":
        return {"flaggems": _flaggems()}
    a, a_s, b, b_s = args
    a16 = ref.dequant_a(a, a_s, torch.float32).to(torch.bfloat16)
    b16 = ref.dequant_b(b, b_s, torch.float32).to(torch.bfloat16)
    found: dict[str, Any] = {path: _load(path) for path in kernels}
    found["bf16_cublas"] = lambda *_: a16 @ b16.T
    found["eager"] = ref.eager
    found["scaled_mm"] = _scaled_mm
    return found


def run_group(group: str, kernels: list[str], out: Path) -> None:
    for shape in ref.SPEC["bench"]:
        args = _inputs(shape["dims"])
        truth = ref.fp8_gemm(*[t.double() if t.is_floating_point() else t for t in args])
        calls, rows = {}, []
        for label, fn in impls(group, kernels, args).items():
            row = {"shape": shape["name"], "impl": label, "group": group}
            try:
                problem = ref.compare(fn(*args), truth, None, args)
            except Exception as e:  # a peer that raises is a figure
                problem = timing.describe_error(e)
            if problem is None:
                calls[label] = lambda fn=fn, args=args: fn(*args)
            else:
                row["error"] = problem[:300]
            rows.append(row)
        times, errors = timing.interleaved(calls, host=False)
        with out.open("a") as f:
            for row in rows:
                t = times.get(row["impl"])
                if t is not None:
                    row.update(median_us=round(t.median_us, 2), spread=round(t.spread, 4))
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
