"""An imported problem's SPEC.domain and `reduction`, so the judge draws its cases and fits its
tolerance as it does a shipped operator's (kernelgen/spec/domain.py, draw.py).

- reduction: the terms one output element sums, read op by op on the meta device (reduce.py).
  Where that is one dim at every size measured (a GEMM's K, a softmax's width), `reduction` is
  that dim; otherwise (a convolution's in_channels x its window, a GEMM then a batch norm over
  the batch) it is `reduced`, a dim the reference derives from the drawn ones as
  max_i c_i * prod(dim ** e_i) over the reductions, exponents read from one dim moved at a time,
  c_i the largest ratio seen, so the tolerance never falls below the measured length's.
- dims: the size constants the inputs' shapes are made of, from 1 (or the least the problem
  takes, in the blocks it takes) to the problem's own value, CPU draws up to the CPU sizes'
  (shapes.py).
- dtypes: the problem's. Layouts and value families: those its forward is defined on, where
  torch's own answer passes the judge (families.py).
The domain is kept only where every case drawn from it for a few seeds runs on the meta device,
its dims read back from its shapes (drawn.py), and a CPU case runs for real. A problem without
one says why in its origin notes: its shapes are literals, or some dim cannot be drawn alone.
"""

from __future__ import annotations

import copy
import math
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernelgen.errors import KernelgenError
from kernelgen.kernelbench import families
from kernelgen.kernelbench.drawn import Derived, DrawnProblem, Site
from kernelgen.kernelbench.probe import Found
from kernelgen.kernelbench.runtime import Plan
from kernelgen.kernelbench.shapes import Meter, Point, Shapes, find
from kernelgen.kernelbench.sizes import Variant
from kernelgen.kernelbench.source import ProblemFile
from kernelgen.spec import OpSpec, Size, SpecData
from kernelgen.spec.draw import drawn_cases
from kernelgen.spec.inputs import make_inputs

REDUCED = "reduced"
MAX_POWER = 3
CHECK_SEEDS = 3


def attach(
    pf: ProblemFile,
    constants: Mapping[str, tuple[str, int | None]],
    variants: list[Variant],
    found: Found,
    spec: dict[str, Any],
    plan: dict[str, Any],
    costs: list[dict[str, Any]],
) -> tuple[dict[str, Any], list[str]]:
    """Give `spec` (in place, with `costs`) its reduction, its layout_varies and its domain where
    it can have one; the notes go to its origin. Returns DERIVED (how the reference completes a
    drawn size) and the comment that says how each was found."""
    meter = Meter(pf, constants, Plan.model_validate(plan))
    n = len(found.inputs)
    for i, item in enumerate(spec["inputs"]):
        own = i < n and found.dtypes[i] in ("float32", "float16", "bfloat16")
        if item.get("kind") != "scalar" and not own:
            item["layout_varies"] = False  # parameters as their init makes them; integer inputs
    cpu = [v.dims for v in variants if v.interpreter]
    shapes = find(meter, constants, variants[0].dims, cpu)
    notes: list[str] = spec["origin"]["notes"]
    plain, plain_costs = copy.deepcopy(spec), copy.deepcopy(costs)
    if shapes.why_not is None:
        comment: list[str] = []
        try:
            derived = _reduction(spec, costs, meter, variants, shapes, comment)
            comment += _domain(pf, spec, plan, costs, shapes, derived, meter)
            notes.append(f"domain: {', '.join(shapes.dims)} drawn")
            return derived.model_dump(mode="json", exclude_defaults=True), comment
        except (_NoDomain, ValueError, KernelgenError) as e:  # no domain, and the import goes on
            shapes.why_not = str(e).splitlines()[0]
        spec.clear()
        spec.update(plain)
        spec["origin"]["notes"] = notes  # the import's own list: its notes are reported too
        costs[:] = plain_costs
    comment = []
    derived = _reduction(spec, costs, meter, variants, None, comment)
    notes.append(f"no domain: {shapes.why_not}")
    comment.append(f"no domain: {shapes.why_not}")
    return derived.model_dump(mode="json", exclude_defaults=True), comment


class _NoDomain(Exception):
    pass


# ---- the reduction ----------------------------------------------------------------------------


def _lengths(p: Point, ops: list[str] | None) -> list[int]:
    """Terms per output element of each reduction; one number (the largest) where the ops run
    differ between sizes."""
    if ops is not None:
        return [n for _, n in p.sites]
    return [max([1, *(n for _, n in p.sites)])]


def _reduction(
    spec: dict[str, Any],
    costs: list[dict[str, Any]],
    meter: Meter,
    variants: list[Variant],
    shapes: Shapes | None,
    comment: list[str],
) -> Derived:
    """Set SPEC.reduction: a dim, or REDUCED computed per size; the Derived that computes it for
    a drawn size. `shapes` None: the sizes alone (no domain)."""
    points = list(shapes.points) if shapes is not None else []
    for v in variants:
        got = meter(v.dims)
        if not isinstance(got, str):
            points.append((dict(v.dims), got))
    fixed = shapes.fixed if shapes is not None else {}
    ties = {
        t: (f"{k}*{lead}" if k > 1 else lead)
        for t, (lead, k) in (shapes.ties.items() if shapes else [])
    }
    if not points or not any(p.sites for _, p in points):
        return Derived(fixed=fixed, ties=ties)
    seqs = {tuple(op for op, _ in p.sites) for _, p in points}
    ops = list(next(iter(seqs))) if len(seqs) == 1 else None
    # One dim where every reduction at every point sums that many terms (a GEMM's K, a softmax's
    # width); a GEMM then a batch norm sums K and the batch: the larger of the two, per size.
    names = [d for d in (shapes.dims if shapes else variants[0].dims) if d != REDUCED]
    one = next(
        (d for d in names if all(n == dims.get(d) for dims, p in points for _, n in p.sites)),
        None,
    )
    how = _how(ops, len(points))
    if one is not None:
        spec["reduction"] = one
        comment.append(f"reduction: {one}, the terms each output sums ({how})")
        return Derived(fixed=fixed, ties=ties)
    name = REDUCED if REDUCED not in variants[0].dims else REDUCED + "_"
    sites = _fit(points, shapes, ops) if shapes is not None else []
    for item in [*spec["sizes"], *spec["bench"], *costs]:
        got = meter(item["dims"])
        value = max(_lengths(got, None)) if not isinstance(got, str) else 1
        item["dims"] = {**item["dims"], name: value}
    spec["reduction"] = name
    formula = " or ".join(_formula(s) for s in sites)
    comment.append(
        f"reduction: {name}, the terms each output sums ({how})"
        + (f"; for a drawn size, the largest of {formula}" if sites else "")
    )
    if not sites:  # no domain: every size holds its own value, none is drawn
        return Derived(fixed=fixed, ties=ties)
    return Derived(fixed=fixed, ties=ties, reduced=name, sites=sites)


def _how(ops: list[str] | None, points: int) -> str:
    which = ", ".join(dict.fromkeys(ops)) if ops else "the largest of each size's reductions"
    return f"aten {which}, run on the meta device at {points} sizes"


def _formula(s: Site) -> str:
    factor = f"{s.factor:.4g}"
    terms = [d if e == 1 else f"{d}^{e}" for d, e in s.powers.items()]
    return " * ".join([factor, *terms]) if factor != "1" or not terms else " * ".join(terms)


def _fit(
    points: list[tuple[dict[str, int], Point]], shapes: Shapes, ops: list[str] | None
) -> list[Site]:
    """Each reduction's terms as c * prod(dim ** e): e from the base and one drawn dim moved,
    c the largest ratio at any point measured."""
    base = next(p for dims, p in points if dims == shapes.base)
    at_base = _lengths(base, ops)
    sites = []
    for i, n0 in enumerate(at_base):
        powers = {}
        for d, dim in shapes.dims.items():
            moved = next(p for dims, p in points if dims == shapes.move(d, dim.moved))
            n1 = _lengths(moved, ops)[i]
            if n1 != n0:
                e = round(math.log(n1 / n0) / math.log(dim.moved / shapes.base[d]))
                if 1 <= e <= MAX_POWER:
                    powers[d] = e
        ratios = [
            _lengths(p, ops)[i] / math.prod(dims[d] ** e for d, e in powers.items())
            for dims, p in points
        ]
        sites.append(Site(factor=round(max(ratios), 6), powers=powers))
    return sites


# ---- the domain -------------------------------------------------------------------------------


def _opspec(op: str, problem: DrawnProblem, costs: list[dict[str, Any]]) -> OpSpec:
    """The reference as load_spec would give it, made in memory (nothing written yet)."""
    module = types.ModuleType(f"kernelgen_import_{op}")
    setattr(module, op, problem.forward)
    module.eager = problem.eager  # type: ignore[attr-defined]
    module.make_inputs = problem.make_inputs  # type: ignore[attr-defined]
    module.derive_dims = problem.derive_dims  # type: ignore[attr-defined]
    module.cost = lambda dims, itemsize: problem.cost(dims, costs)  # type: ignore[attr-defined]
    return OpSpec(op, Path(f"references/{op}.py"), module, problem.data)


def _domain(
    pf: ProblemFile,
    spec: dict[str, Any],
    plan: dict[str, Any],
    costs: list[dict[str, Any]],
    shapes: Shapes,
    derived: Derived,
    meter: Meter,
) -> list[str]:
    for item in spec["inputs"]:
        if item.get("kind") != "scalar":
            item["shape"] = shapes.shapes[item["name"]]
    for item in [*spec["sizes"], *spec["bench"]]:
        item.pop("shapes", None)
    dims = {}
    for name, d in shapes.dims.items():
        entry: dict[str, Any] = {"range": [d.lo, d.hi]}
        if d.cpu_max < d.hi:
            entry["cpu_max"] = max(d.lo, d.cpu_max)
        if d.multiple_of:
            entry["multiple_of"] = d.multiple_of
        dims[name] = entry
    spec["domain"] = {
        "dims": dims,
        "dtypes": list(spec["dtypes"]),
        "layouts": ["contiguous"],  # until the probes below say which
        "dists": list(spec["dists"]),
        **({"derived": [derived.reduced]} if derived.reduced else {}),
    }
    problem = DrawnProblem(pf.op, pf.source, spec, plan, derived.model_dump())
    opspec = _opspec(pf.op, problem, costs)
    sizes = [s for s in problem.data.sizes if s.interpreter]
    reach = _reach(problem, shapes, derived, meter)
    dtype = problem.data.dtypes[0]
    comment = []
    if any(i.draw in ("judge", "magnitude") for i in problem.plan.inputs):
        dists, dropped = families.families(opspec, [*sizes, *reach], dtype)
        comment.append(_kept("value families", dists, dropped))
    else:
        dists = list(spec["dists"])
        comment.append("value families: no input takes the judge's values, the sizes' own")
    if len(dists) < 2:
        raise _NoDomain(f"its forward is defined on {dists or 'no'} value family alone")
    heads = _heads(spec, shapes)
    varying = any(i.get("layout_varies", True) for i in spec["inputs"] if i.get("kind") != "scalar")
    layouts, dropped = (
        families.layouts(opspec, sizes, dtype, heads is not None)
        if varying
        else (["contiguous"], {})
    )
    comment.append(_kept("layouts", layouts, dropped))
    if reach:
        comment.append(f"probed at the CPU sizes and at {reach[0].name} (the longest reduction)")
    spec["domain"]["layouts"] = layouts
    spec["domain"]["dists"] = dists
    if "leading" in layouts:
        spec["domain"]["heads"] = heads
        comment.append(f"a leading view slices {heads} (second to last in a rank-3+ input)")
    comment.append(_dims_comment(shapes))
    _check(pf, spec, plan, costs, derived, meter)
    return comment


# The most elements (inputs, parameters, outputs) the probe at the longest reduction runs in
# float64 on the CPU.
REACH_ELEMENTS = 1 << 22


def _reach(problem: DrawnProblem, shapes: Shapes, derived: Derived, meter: Meter) -> list[Size]:
    """A size with the dims the reduction grows with at the problem's own value and the others at
    their least: a family whose error grows with the reduction fails here if anywhere."""
    reduction = problem.data.reduction
    grows = {reduction} if reduction in shapes.dims else set()
    grows |= {d for site in derived.sites for d in site.powers}
    if not grows:
        return []
    dims = {d: (dim.hi if d in grows else dim.lo) for d, dim in shapes.dims.items()}
    full = derived.complete(dims)
    got = meter(full)
    if isinstance(got, str) or got.elements > REACH_ELEMENTS:
        return []
    shown = ",".join(f"{d}={dims[d]}" for d in sorted(grows))
    keep = {**dims, **problem.derive_dims(dims)}
    return [Size(name=f"reach:{shown}", dims=keep, interpreter=True)]


def _kept(what: str, kept: list[str], dropped: Mapping[str, str]) -> str:
    line = f"{what}: {', '.join(kept)}"
    if dropped:
        line += "; not " + "; ".join(f"{k} ({_short(why)})" for k, why in dropped.items())
    return line


def _short(why: str) -> str:
    """A dropped family's reason, to its size and its numbers: `small: 158 of 4096 entries off,
    |err| 0.00223 > atol 6e-05 + rtol 1.3e-06*|ref|`."""
    err = re.search(r"\((\|err\|[^)]*)\)", why)
    off = re.search(r"(\d+ of \d+ entries off)", why)
    where = why.split(":", 1)[0]
    if err and off:
        return f"{where}: {off.group(1)}, {err.group(1)}"
    return why


def _heads(spec: dict[str, Any], shapes: Shapes) -> str | None:
    """The drawn dim second to last in the first varying input of rank 3 or more: the one a
    leading view slices (as the heads of a [tokens, heads, dim] slice of a fused qkv)."""
    for item in spec["inputs"]:
        shape = item.get("shape", [])
        if item.get("kind") == "scalar" or not item.get("layout_varies", True) or len(shape) < 3:
            continue
        sliced = shape[-2]
        return sliced if isinstance(sliced, str) and sliced in shapes.dims else None
    return None


def _dims_comment(shapes: Shapes) -> str:
    parts = []
    for name, d in shapes.dims.items():
        part = f"{name} {d.lo}..{d.hi}"
        if d.multiple_of:
            part += f" in blocks of {d.multiple_of}"
        parts.append(part)
    line = "dims: " + ", ".join(parts)
    line += " (the least and the blocks each takes, tried on the meta device from the CPU size)"
    if shapes.ties:
        tied = ", ".join(
            f"{t} = {k}*{lead}" if k > 1 else f"{t} = {lead}"
            for t, (lead, k) in shapes.ties.items()
        )
        line += f"; tied: {tied}"
    if shapes.fixed:
        line += "; kept: " + ", ".join(f"{d}={v}" for d, v in shapes.fixed.items())
    return line


def _check(
    pf: ProblemFile,
    spec: dict[str, Any],
    plan: dict[str, Any],
    costs: list[dict[str, Any]],
    derived: Derived,
    meter: Meter,
) -> None:
    """Every case a few seeds draw runs on the meta device at its dims, its dims read back from
    its shapes; each CPU one runs for real. Raises _NoDomain with the first that does not."""
    try:
        SpecData.model_validate(spec)
        problem = DrawnProblem(pf.op, pf.source, spec, plan, derived.model_dump())
    except (ValueError, KernelgenError) as e:
        raise _NoDomain(f"its domain does not validate: {str(e).splitlines()[0]}") from None
    opspec = _opspec(pf.op, problem, costs)
    for seed in range(CHECK_SEEDS):
        for device in ("cpu", "cuda"):
            for case in drawn_cases(opspec, seed, device):
                _check_case(opspec, problem, case.size, case.dtype, case.dist, meter, seed)


def _check_case(
    opspec: OpSpec,
    problem: DrawnProblem,
    size: Size,
    dtype: str,
    dist: str,
    meter: Meter,
    seed: int,
) -> None:
    full = problem.derived.complete(size.dims)
    got = meter(full)
    if isinstance(got, str):
        raise _NoDomain(f"a drawn size does not run ({size.name}: {got})")
    shapes = problem.shapes(size)
    want = [got.shapes[i.name] for i in problem.data.inputs if i.name in got.shapes]
    if [s for s in shapes if s is not None] != want:
        raise _NoDomain(f"a drawn size's shapes are not the problem's ({size.name})")
    if problem.solve(shapes) != full:
        raise _NoDomain(f"a drawn size's dims cannot be read from its shapes ({size.name})")
    if size.interpreter:
        try:
            args = make_inputs(opspec, size, dtype, dist, seed, "cpu")
            problem.forward(*args)
        except Exception as e:  # the problem's own forward
            raise _NoDomain(
                f"a drawn case does not run ({size.name}: {type(e).__name__})"
            ) from None
