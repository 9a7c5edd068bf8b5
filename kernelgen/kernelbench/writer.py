"""references/<op>.py for an imported problem: the problem's source, embedded and checked by its
sha256, the SPEC, the plan and the cost table, and the functions the contract asks for (the
reference, make_inputs, cost, and eager: the Model called as its users call it), each one line
into kernelgen/kernelbench/runtime.py; derive_dims completes a size its domain draws
(kernelgen/kernelbench/drawn.py). A comment above SPEC says how its reduction and its domain were
found (kernelgen/kernelbench/domain.py).

The reference's entry is annotated as a shipped operator's is (torch.Tensor per tensor input and
parameter, a scalar's own type, and what the Model's forward returns): promotion exposes the
reference's signature in the library (kernelgen/package/sources.py reference_api)."""

from __future__ import annotations

import ast
import pprint
import textwrap
from typing import Any

import torch

from kernelgen.kernelbench.runtime import execute, seeded
from kernelgen.kernelbench.source import ProblemFile

_TEMPLATE = '''\
"""{op}: KernelBench level {level}, problem {problem} ({title}).

Imported by `kernelgen import kernelbench` from {file}.

{summary}

The reference runs the problem's own Model (SOURCE below, the file as imported: SPEC["origin"]
holds its sha256) through kernelgen/kernelbench/runtime.py, its parameters and buffers passed in
as inputs; that module's docstring says how each input is drawn. Import the problem again rather
than editing this file.
"""

import torch

from kernelgen.kernelbench.drawn import DrawnProblem

SOURCE = {source}

{comment}
SPEC = {spec}

# How the reference maps the problem onto the contract: which module-level constant each dim is,
# how each input is drawn, which state key each parameter is.
PLAN = {plan}

# Bytes of the inputs and outputs, and flops as torch's FlopCounterMode counts them on the
# reference, per size (measured on the meta device at import).
COSTS = {costs}

# How a size the domain draws is completed: constants kept at their value, dims tied to another,
# and the reduced length's fit (kernelgen/kernelbench/drawn.py).
DERIVED = {derived}

PROBLEM = DrawnProblem({op!r}, SOURCE, SPEC, PLAN, DERIVED)


{signature}
    return PROBLEM.forward({args})


def eager({args}):
    return PROBLEM.eager({args})


def make_inputs(size, dtype, dist, gen):
    return PROBLEM.make_inputs(size, dtype, dist, gen)


def cost(dims, itemsize):
    return PROBLEM.cost(dims, COSTS)


def derive_dims(dims):
    return PROBLEM.derive_dims(dims)
'''


def _string(text: str) -> str:
    """`text` as a Python literal: a raw triple-quoted string where that reads back the same."""
    raw = f"r'''{text}'''"
    try:
        if ast.literal_eval(raw) == text:
            return raw
    except (SyntaxError, ValueError):
        pass
    return repr(text)


def _summary(spec: dict[str, Any], notes: list[str]) -> str:
    problem = spec["sizes"][0]
    lines = [f"At the problem's own size ({_dims(problem['dims'])}):"]
    for item in spec["inputs"]:
        if item.get("kind") == "scalar":
            lines.append(f"- {item['name']} = {item['value']!r}")
            continue
        shape = problem.get("shapes", {}).get(item["name"], item["shape"])
        lines.append(f"- {item['name']}: {shape} {item.get('dtype', spec['dtypes'][0])}")
    cpu = [s["name"] for s in spec["sizes"] if s["interpreter"]]
    lines.append(f"CPU sizes: {', '.join(cpu) if cpu else 'none'}.")
    lines += [f"Note: {n}" for n in notes]
    return "\n".join(textwrap.fill(line, 99, subsequent_indent="  ") for line in lines)


def _signature(op: str, spec: dict[str, Any], returns: str) -> str:
    """The entry's def line: one line where it fits in 100 columns, else one parameter a line
    with a trailing comma, as ruff format writes it."""
    params = [
        f"{i['name']}: {type(i['value']).__name__}"
        if i.get("kind") == "scalar"
        else f"{i['name']}: torch.Tensor"
        for i in spec["inputs"]
    ]
    one = f"def {op}({', '.join(params)}) -> {returns}:"
    if len(one) <= 100:
        return one
    return f"def {op}(\n" + "".join(f"    {p},\n" for p in params) + f") -> {returns}:"


def _returns(pf: ProblemFile) -> str:
    """The reference's return annotation: what the Model's forward returns at the problem's own
    size, run on the meta device (the reference returns a list as a tuple; probe.py refuses
    outputs other than tensors)."""
    ns = execute(pf.source, {}, str(pf.path))
    with seeded(0), torch.no_grad(), torch.device("meta"):
        out = ns["Model"](*ns["get_init_inputs"]())(*ns["get_inputs"]())
    if isinstance(out, (tuple, list)):
        return f"tuple[{', '.join(['torch.Tensor'] * len(out))}]"
    return "torch.Tensor"


def _dims(dims: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in dims.items()) or "no size constants"


def _comment(lines: list[str]) -> str:
    """How the SPEC's reduction and domain were found, as a comment block."""
    out = [
        "# How the import found this SPEC's reduction and domain (kernelgen/kernelbench/domain.py):"
    ]
    for line in lines:
        out += textwrap.wrap(line, 97, initial_indent="# - ", subsequent_indent="#   ")
    return "\n".join(out)


def render(
    pf: ProblemFile,
    spec: dict[str, Any],
    plan: dict[str, Any],
    costs: list[dict[str, Any]],
    derived: dict[str, Any] | None = None,
    comment: list[str] | None = None,
) -> str:
    args = ", ".join(i["name"] for i in spec["inputs"])

    def fmt(value: Any) -> str:
        return pprint.pformat(value, width=99, sort_dicts=False)

    return _TEMPLATE.format(
        op=pf.op,
        level=pf.level,
        problem=pf.problem,
        title=pf.title,
        file=spec["origin"]["file"],
        summary=_summary(spec, spec["origin"]["notes"]),
        source=_string(pf.source),
        spec=fmt(spec),
        plan=fmt(plan),
        costs=fmt(costs),
        derived=fmt(derived or {}),
        comment=_comment(comment or []),
        signature=_signature(pf.op, spec, _returns(pf)),
        args=args,
    )
