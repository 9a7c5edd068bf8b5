"""What set_dispatch("device") buys inside CUDA graphs (CUDA): per operator and benchmark shape
where the device mode answers differently from the measured one, the device time per call of a
CUDA graph of calls of
- torch's op (_contracts.torch_<op>: what kernelgen_ops.<op> calls where torch's op takes it),
- kernelgen_ops.<op> in the device mode, warmed up in that mode before the capture, as a user
  of the mode does,
and, for the routed operators, torch.<op> plain and under kernelgen_ops.use() in the device mode.
Each shape in its spec's dtype. Timed by scripts/bench_library_worker.py's graph_time
(kernelgen's protocol: a graph of many calls over rotated input copies, L2 flushed before each
replay), in one process, one implementation after another. A row says which path each mode
takes (torch or kernel); generated/tests/test_dispatch.py checks on the GPU that a capture in the
device mode records the kernel.

    python scripts/graph_dispatch.py OUT.json [--ops OP...]

Its first form (e530064) ran on the H200 on 2026-12-04 and timed the same calls with the library
asking each call whether its stream captured
(evaluations/logs/h200-20261204-graph-dispatch-library-bench/call1-graph.log).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernelgen_ops  # noqa: E402
from bench_library_worker import SEED, graph_time  # noqa: E402
from kernelgen_ops import _contracts, _runtime  # noqa: E402

from kernelgen.bench import timing  # noqa: E402
from kernelgen.spec import load_spec  # noqa: E402
from kernelgen.spec.inputs import make_inputs  # noqa: E402

ROUTED = {  # the routed torch entry point, called with the op's arguments
    "softmax": lambda x: torch.softmax(x, -1),
    "rms_norm": lambda x, w, eps: torch.nn.functional.rms_norm(x, x.shape[-1:], w, eps),
}


def device_us(fn: Callable[..., Any], args: list[Any]) -> float:
    for _ in range(3):  # outside the graph first, as a user warms a step up before capturing it
        fn(*args)
    torch.cuda.synchronize()
    median, _, _ = graph_time(timing.rotating(fn, timing.graph_pool([args])))
    return round(median, 3)


def _path(op: str, dims: tuple[int, ...], routed: bool) -> str:
    return "torch" if _runtime.use_torch(op, dims, routed) else "kernel"


def shape_rows(op: str) -> list[dict[str, Any]]:
    spec = load_spec(op)
    public = getattr(kernelgen_ops, op)
    torch_op = getattr(_contracts, f"torch_{op}")
    dims_of = getattr(_contracts, f"dims_{op}")
    rows = []
    for shape in spec.data.bench:
        args = make_inputs(spec, shape, shape.dtype, "normal", SEED, "cuda")
        dims = dims_of(*args)
        paths = {}
        for mode in ("measured", "device"):
            kernelgen_ops.set_dispatch(mode)
            paths[mode] = [_path(op, dims, routed) for routed in (False, op in ROUTED)]
        if paths["measured"] == paths["device"]:
            continue
        row: dict[str, Any] = {"op": op, "shape": shape.name, "dtype": shape.dtype}
        row |= {f"{mode}_path": p for mode, p in paths.items()}
        row["torch_us"] = device_us(torch_op, args)
        row["device_mode_us"] = device_us(public, args)  # the mode is "device" from above
        if op in ROUTED:
            entry = ROUTED[op]
            kernelgen_ops.set_dispatch("measured")
            row["torch_entry_us"] = device_us(entry, args)
            kernelgen_ops.set_dispatch("device")
            with kernelgen_ops.use(include=[op]):
                row["routed_device_mode_us"] = device_us(entry, args)
        kernelgen_ops.set_dispatch("measured")
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--ops", nargs="+", default=["softmax", "rms_norm", "router_gemm", "topk", "silu_and_mul"]
    )
    a = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for op in a.ops:
        rows += shape_rows(op)
        record = {"device": torch.cuda.get_device_name(), "rows": rows}
        a.out.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
