"""What the library's answer inside a CUDA graph buys (CUDA): per operator and benchmark shape
where kernelgen_ops answers differently inside a graph (_runtime.ByCapture), the device time
per call of a CUDA graph of calls of
- torch's op (_contracts.torch_<op>: what kernelgen_ops.<op> calls where torch's op takes it),
- kernelgen_ops.<op> as shipped (measured dispatch), warmed outside the graph as a user would,
- kernelgen_ops.<op> forced onto the kernel (set_dispatch("kernel")),
and, for the routed operators, torch.<op> under kernelgen_ops.use() against torch.<op> plain.
Timed by scripts/bench_library_worker.py's graph_time (kernelgen's protocol: a graph of many
calls over rotated input copies, L2 flushed before each replay), in one process, the
implementations of a shape one after another. Which path ran inside the graph is the table's
answer (graph_path); generated/tests/test_dispatch.py checks on the GPU that the kernel is what
a capture records there.

    python scripts/graph_dispatch.py OUT.json [--ops OP...]
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
from bench_library_worker import DTYPE, SEED, graph_time  # noqa: E402
from kernelgen_ops import _contracts, _runtime  # noqa: E402

from kernelgen.bench import timing  # noqa: E402
from kernelgen.inputs import make_inputs  # noqa: E402
from kernelgen.spec import load_spec  # noqa: E402

ROUTED = {  # the routed torch entry point, called as the op's arguments come
    "softmax": lambda x: torch.softmax(x, -1),
    "rms_norm": lambda x, w, eps: torch.nn.functional.rms_norm(x, x.shape[-1:], w, eps),
}


def device_us(fn: Callable[..., Any], args: list[Any]) -> float:
    for _ in range(3):  # outside the graph first, as a user warms a step up before capturing it
        fn(*args)
    torch.cuda.synchronize()
    median, _, _ = graph_time(timing.rotating(fn, timing.graph_pool([args])))
    return round(median, 3)


def forced(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        kernelgen_ops.set_dispatch("kernel")
        try:
            return fn(*args)
        finally:
            kernelgen_ops.set_dispatch("measured")

    return call


def shape_rows(op: str) -> list[dict[str, Any]]:
    spec = load_spec(op)
    public = getattr(kernelgen_ops, op)
    torch_op = getattr(_contracts, f"torch_{op}")
    dims_of = getattr(_contracts, f"dims_{op}")
    rows = []
    for shape in spec.data.bench:
        args = make_inputs(
            spec, shape.model_copy(update={"dtype": DTYPE}), DTYPE, "normal", SEED, "cuda"
        )
        dims = dims_of(*args)
        direct = _runtime.to_torch(op, dims, routed=False)
        routed = _runtime.to_torch(op, dims, routed=True) if op in ROUTED else None
        split = [type(a) is _runtime.ByCapture for a in (direct, routed)]
        if not any(split):
            continue
        row: dict[str, Any] = {
            "op": op,
            "shape": shape.name,
            "direct": repr(direct),
            "routed": repr(routed) if routed is not None else None,
            "torch_us": device_us(torch_op, args),
            "kernelgen_ops_us": device_us(public, args),
            "kernel_us": device_us(forced(public), args),
        }
        if op in ROUTED:
            entry = ROUTED[op]
            row["torch_entry_us"] = device_us(entry, args)
            with kernelgen_ops.use(include=[op]):
                row["routed_us"] = device_us(entry, args)
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
        a.out.write_text(
            json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1)
        )


if __name__ == "__main__":
    main()
