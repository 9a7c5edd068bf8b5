"""An imported problem's SPEC, PLAN and cost table, from what the import found and measured.

Each tensor's shape is written with the size constants' names where one scaled constant gives
that dim at every size (`["batch_size", "dim"]`), as a literal where it never changes, and as a
literal per size (`Size.shapes`) where neither holds (a dim derived from several constants)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernelgen.kernelbench.probe import Found
from kernelgen.kernelbench.runtime import Plan, cost_of
from kernelgen.kernelbench.sizes import Variant
from kernelgen.kernelbench.source import ProblemFile, Refused

FLOATS = ("float32", "float16", "bfloat16")
# The value distributions of an imported problem's cases. KernelBench draws torch.rand and
# torch.randn; the judge draws centred normal and uniform values, signed, for every input whose
# problem draws plain i.i.d. values (probe.py keeps the others to the problem's own draw).
DISTS = ["normal", "uniform"]


def _symbolic(shapes: list[list[int]], dims: list[dict[str, int]]) -> list[str | int] | None:
    """One entry per dim: the one scaled constant that gives it at every size, or the literal
    it always is; None where some dim is neither."""
    if len({len(s) for s in shapes}) != 1:
        return None
    out: list[str | int] = []
    for axis in range(len(shapes[0])):
        vals = [s[axis] for s in shapes]
        names = [
            d
            for d in dims[0]
            if vals[0] > 1 and all(dv[d] == v for dv, v in zip(dims, vals, strict=True))
        ]
        varying = [d for d in names if len({dv[d] for dv in dims}) > 1]
        if len(varying) == 1:
            out.append(varying[0])
        elif len(set(vals)) == 1:
            # The same at every size: a literal, though a constant may share its value (an
            # image's 3 channels beside a kernel_size of 3).
            out.append(vals[0])
        else:
            return None
    return out


def origin_file(path: Path) -> str:
    """The file as the benchmark names it: from its `KernelBench/` folder where there is one,
    else from its level folder."""
    parts = path.resolve().parts
    if "KernelBench" in parts[:-2]:
        i = len(parts) - 1 - parts[::-1].index("KernelBench")
        return "/".join(parts[i:])
    return "/".join(parts[-2:])


def build(
    pf: ProblemFile,
    constants: dict[str, tuple[str, int | None]],
    variants: list[Variant],
    found: Found,
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    floats = [d for d in [*found.dtypes, *found.param_dtypes] if d in FLOATS]
    case = floats[0] if floats else "float32"
    dims = [v.dims for v in variants]
    inputs: list[dict[str, Any]] = []
    literal: dict[str, list[list[int]]] = {}  # per input, its shape at each size

    def tensor(name: str, dtype: str, shapes: list[list[int]]) -> None:
        shape = _symbolic(shapes, dims)
        if shape is None:
            literal[name] = shapes
            shape = list(shapes[0])
        entry: dict[str, Any] = {"name": name, "shape": shape}
        if dtype != case:
            entry["dtype"] = dtype
        inputs.append(entry)

    for i, plan_in in enumerate(found.inputs):
        if i in found.scalars:
            got = {v.measured.inputs[i] for v in variants}
            if len(got) != 1:
                raise Refused(
                    pf.path,
                    f"input {plan_in.name!r} is a number that changes with "
                    "the sizes: the contract's scalars are fixed",
                )
            inputs.append({"kind": "scalar", "name": plan_in.name, "value": found.scalars[i]})
            continue
        shapes = [list(v.measured.inputs[i].shape) for v in variants]
        tensor(plan_in.name, found.dtypes[i] or case, shapes)
    for p, dtype in zip(found.params, found.param_dtypes, strict=True):
        tensor(p.name, dtype, [list(v.measured.state[p.state].shape) for v in variants])

    def size_shapes(k: int) -> dict[str, list[int]]:
        return {name: shapes[k] for name, shapes in literal.items()}

    sizes = []
    for k, v in enumerate(variants):
        entry: dict[str, Any] = {"name": v.name, "dims": v.dims}
        if literal:
            entry["shapes"] = size_shapes(k)
        entry["interpreter"] = v.interpreter
        sizes.append(entry)
    bench: dict[str, Any] = {"name": "problem", "dims": variants[0].dims}
    if literal:
        bench["shapes"] = size_shapes(0)
    bench["dtype"] = case
    plan = Plan(
        constants=constants, inputs=found.inputs, params=found.params, internal=found.internal
    )
    spec = {
        "inputs": inputs,
        "dtypes": [case],
        "dists": DISTS,
        "sizes": sizes,
        "bench": [bench],
        "origin": {
            "source": "kernelbench",
            "file": origin_file(pf.path),
            "sha256": pf.sha256,
            "level": pf.level,
            "problem": pf.problem,
            "title": pf.title,
            "convolution": found.convolution,
            "cpu": any(v.interpreter for v in variants),
            "notes": notes,
        },
    }
    costs = [{"size": v.name, "dims": v.dims, **cost_of(v.measured, plan)} for v in variants]
    return spec, plan.model_dump(mode="json"), costs
