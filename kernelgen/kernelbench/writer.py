"""references/<op>.py for an imported problem: the problem's source, embedded and checked by its
sha256, the SPEC, the plan and the cost table, and the functions the contract asks for (the
reference, make_inputs, cost, and eager: the Model called as its users call it), each one line
into kernelgen/kernelbench/runtime.py; derive_dims completes a size its domain draws
(kernelgen/kernelbench/drawn.py). A comment above SPEC says how its reduction and its domain were
found (kernelgen/kernelbench/domain.py)."""

from __future__ import annotations

import ast
import pprint
import textwrap
from typing import Any

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


def {op}({args}):
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
        args=args,
    )
