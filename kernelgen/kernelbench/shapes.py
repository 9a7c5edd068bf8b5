"""Which size constants an imported problem's shapes are made of, and what values each may take,
found by running the problem on the meta device (shapes only, no memory) with one constant moved
at a time from the CPU size.

- A constant that moves an axis of an input (its own or a parameter) is a drawn dim of the
  domain; the axis is written with its name, `k*name` where it is k times the constant, or
  `name/q` where it is a q-th of it (a grouped convolution's weight holds out_channels / groups).
  An axis that two constants move, or that follows one otherwise (`dim - 1`), cannot be
  written, and the problem gets no domain.
- Kernel sizes, strides, axes and group counts (constants below sizes.MIN_SCALED, never scaled
  by the import) stay as the problem gives them, as does a constant that moves no input, or one
  that runs at its own value alone. One the sizes scale although it moves no input (a group
  count halved with the channels) leaves the problem without a domain: a drawn size's arguments
  could not tell it.
- Its values: the problem runs at the problem's own value and at the CPU sizes; the values tried
  between 1 and it say the least it takes (a convolution's window) and whether it takes only
  multiples of some block (channels in whole groups). A constant that runs only beside another
  that it is a multiple of at every size (a loss broadcasting its batch against its width, a
  depthwise convolution's in and out channels, a layer norm over a transposed convolution's
  output width, twice its input's) is tied to it: drawn once, the other k times its value.
- The least values found one at a time may not run together (an instance norm's single spatial
  element): they are raised until they do.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelgen.kernelbench.reduce import meta_run
from kernelgen.kernelbench.runtime import Plan, execute, overrides
from kernelgen.kernelbench.sizes import MIN_SCALED
from kernelgen.kernelbench.source import ProblemFile
from kernelgen.spec import resolve_dim

# Values tried for every dim beside its own and its neighbours: the small ones where windows and
# groups bind, and a few past them.
TRIED = (*range(1, 14), 16, 17, 24, 31, 32, 33)


@dataclass
class Point:
    shapes: dict[str, list[int]]  # per tensor input of the SPEC (the problem's and parameters)
    sites: list[tuple[str, int]]  # reduce.MetaRun.sites
    elements: int  # of the inputs, parameters, buffers and outputs


class Meter:
    """The problem at some dims, run on the meta device; the error's first line where it fails."""

    def __init__(
        self, pf: ProblemFile, constants: Mapping[str, tuple[str, int | None]], plan: Plan
    ):
        self.pf, self.constants, self.plan = pf, constants, plan
        self._seen: dict[tuple, Point | str] = {}

    def __call__(self, dims: Mapping[str, int]) -> Point | str:
        key = tuple(sorted(dims.items()))
        if key not in self._seen:
            self._seen[key] = self._run(dims)
        return self._seen[key]

    def _run(self, dims: Mapping[str, int]) -> Point | str:
        try:
            ns = execute(self.pf.source, overrides(self.constants, dims), str(self.pf.path))
            sys.modules.pop(ns["__name__"], None)  # one of hundreds tried: not kept
            got = meta_run(ns)
        except Exception as e:  # the problem's own code: any value may break it
            return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        shapes: dict[str, list[int]] = {}
        for item, x in zip(self.plan.inputs, got.inputs, strict=False):
            if item.draw != "scalar":
                shapes[item.name] = list(x.shape)
        for p in self.plan.params:
            shapes[p.name] = list(got.state[p.state].shape)
        tensors = [*got.inputs, *got.state.values(), *got.outputs]
        elements = sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))
        return Point(shapes=shapes, sites=got.sites, elements=elements)


@dataclass
class DimFound:
    lo: int
    hi: int
    cpu_max: int
    multiple_of: int | None = None
    moved: int = 0  # a value besides the base's that the problem takes: its axes follow it


@dataclass
class Shapes:
    """What the dims of an imported problem are; `why_not` says why it gets no domain."""

    base: dict[str, int]
    dims: dict[str, DimFound] = field(default_factory=dict)
    ties: dict[str, tuple[str, int]] = field(default_factory=dict)  # dim -> (lead, k): k * lead
    fixed: dict[str, int] = field(default_factory=dict)
    shapes: dict[str, list[str | int]] = field(default_factory=dict)
    points: list[tuple[dict[str, int], Point]] = field(default_factory=list)
    why_not: str | None = None

    def move(self, dim: str, value: int) -> dict[str, int]:
        """The base dims with `dim` (and the dims tied to it) at `value`."""
        return self.at({dim: value})

    def at(self, values: Mapping[str, int]) -> dict[str, int]:
        """The base dims with these drawn dims (and the dims tied to them) moved."""
        tied = {t: k * values[lead] for t, (lead, k) in self.ties.items() if lead in values}
        return {**self.base, **values, **tied}


def _changed(a: Point, b: Point) -> set[tuple[str, int]]:
    out = set()
    for name, shape in a.shapes.items():
        other = b.shapes[name]
        if len(other) != len(shape):
            out |= {(name, i) for i in range(max(len(shape), len(other)))}
        else:
            out |= {(name, i) for i, (x, y) in enumerate(zip(shape, other, strict=True)) if x != y}
    return out


def _pattern(passed: list[int], failed: list[int]) -> tuple[int, int | None] | None:
    """(least, block) such that a tried value runs exactly when it is at least `least` and a
    multiple of `block` (None: any); None when no such rule says which ran."""
    least = min(passed)
    above = [v for v in failed if v >= least]
    if not above:
        return least, None
    block = math.gcd(*passed)
    if block > 1 and all(v % block for v in above):
        return least, block
    return None


def find(
    meter: Meter,
    constants: Mapping[str, Any],
    own: Mapping[str, int],
    cpu: list[Mapping[str, int]],
) -> Shapes:
    """The dims of the problem: `own` its own size's, `cpu` the CPU sizes' (the first is the
    base every other value is tried from)."""
    found = Shapes(base=dict(cpu[0]) if cpu else dict(own))
    if not cpu:
        found.why_not = (
            "its shapes are not all made of size constants (literals in get_inputs()): no CPU "
            "size to try its dims from"
        )
        return found
    base = meter(found.base)
    if isinstance(base, str):
        found.why_not = f"it does not run on the meta device at its CPU size: {base}"
        return found
    candidates = [d for d in constants if own[d] >= MIN_SCALED]
    sizes = [own, *cpu]
    runs: dict[str, dict[int, Point | str]] = {}
    for d in candidates:
        values = _values(found.base[d], own[d], [s[d] for s in sizes])
        runs[d] = {v: meter({**found.base, d: v}) for v in values}
    stuck = []
    for d in candidates:
        moved = [v for v, p in runs[d].items() if not isinstance(p, str) and _changed(base, p)]
        ran = [v for v, p in runs[d].items() if not isinstance(p, str)]
        if not moved and len(ran) > 1:
            continue  # moves no input: the problem's own value throughout (checked below)
        rule = _pattern(ran, [v for v, p in runs[d].items() if isinstance(p, str)])
        if len(ran) <= 1 or rule is None:
            stuck.append(d)
            continue
        found.dims[d] = _dim(rule, own[d], [s[d] for s in cpu], moved, found.base[d])
    for d in stuck:
        if d in found.dims or d in found.ties:
            continue  # tied already, as the other of a pair
        if _tie(found, meter, d, sizes, candidates):
            continue
        if len({s[d] for s in sizes}) > 1:
            found.why_not = f"{d} takes only some values near {found.base[d]} ({_runs(runs[d])})"
            return found
        found.fixed[d] = own[d]  # a window or a count the problem fixes: kept as it is
    for d in constants:
        if d not in found.dims and d not in found.ties:
            if len({s[d] for s in sizes}) > 1:
                found.why_not = f"{d} changes no input's shape, but the sizes scale it"
                return found
            found.fixed[d] = own[d]
    found.dims = {d: found.dims[d] for d in candidates if d in found.dims}
    _corner(found, meter)
    found.why_not = _write_shapes(found, meter, base, sizes)
    return found


# Steps _corner takes before it leaves the rest to the domain's check (domain.py).
CORNER_STEPS = 16


def _corner(found: Shapes, meter: Meter) -> None:
    """Each dim's least was found with the others at the base; together they may not run (an
    instance norm needs more than one spatial element: height and width cannot both be at the
    least a window takes). Raise the least of one dim a block at a time, the first whose step
    lets the corner run, or of all of them, until it does."""
    dims = found.dims

    def runs(lows: Mapping[str, int]) -> bool:
        return not isinstance(meter(found.at(lows)), str)

    lows = {d: dim.lo for d, dim in dims.items()}
    for _ in range(CORNER_STEPS):
        if runs(lows):
            break
        steps = {d: min(dims[d].hi, lows[d] + (dims[d].multiple_of or 1)) for d in lows}
        one = next((d for d in lows if runs({**lows, d: steps[d]})), None)
        lows = {**lows, one: steps[one]} if one is not None else steps
    for d, lo in lows.items():
        dims[d].lo = lo


def _values(base: int, own: int, sizes: list[int]) -> list[int]:
    near = {base - 1, base + 1, 2 * base, own - 1, own, *sizes}
    return sorted(v for v in {*TRIED, *near} if 1 <= v <= own)


def _dim(
    rule: tuple[int, int | None], own: int, cpu: list[int], moved: list[int], base: int
) -> DimFound:
    """The dim's values, and the value its axes and reductions are read at: the nearest above
    the base that it takes, clear of the small values where a problem may take another path."""
    least, block = rule
    above = [v for v in moved if v > base]
    at = min(above) if above else max(moved)
    return DimFound(lo=least, hi=own, cpu_max=max(cpu), multiple_of=block, moved=at)


def _runs(results: Mapping[int, Point | str]) -> str:
    ran = [v for v, p in results.items() if not isinstance(p, str)]
    return f"of {sorted(results)} tried, {ran} ran"


def _ratio(a: list[int], b: list[int]) -> int | None:
    """k where a == k * b at every size, if some integer k >= 1 is."""
    k = a[0] // b[0] if b[0] else 0
    return k if k >= 1 and all(x == k * y for x, y in zip(a, b, strict=True)) else None


def _tie(
    found: Shapes,
    meter: Meter,
    d: str,
    sizes: list[Mapping[str, int]],
    candidates: list[str],
) -> bool:
    """Tie `d` to a dim it is a multiple of (or that is a multiple of it) at every size, with
    which it runs on a rule: the smaller of the two (the one declared first, when equal) leads,
    drawn for both, the other k times its value. False where no dim will do."""
    base = meter(found.base)
    assert not isinstance(base, str)
    mine = [s[d] for s in sizes]
    for other in candidates:
        if other == d or other in found.ties:
            continue
        theirs = [s[other] for s in sizes]
        up, down = _ratio(mine, theirs), _ratio(theirs, mine)
        if up is None and down is None:
            continue
        if up is not None and (up > 1 or candidates.index(other) < candidates.index(d)):
            lead, follower, k = other, d, up
        else:
            lead, follower, k = d, other, down or up or 1
        found.ties[follower] = (lead, k)
        values = _values(found.base[lead], sizes[0][lead], [s[lead] for s in sizes])
        runs = {v: meter(found.move(lead, v)) for v in values}
        ran = [v for v, p in runs.items() if not isinstance(p, str)]
        moved = [v for v in ran if _changed(base, runs[v])]  # type: ignore[arg-type]
        rule = _pattern(ran, [v for v, p in runs.items() if isinstance(p, str)]) if ran else None
        if rule is None or len(ran) <= 1 or not moved:
            del found.ties[follower]
            continue
        both = _dim(rule, sizes[0][lead], [s[lead] for s in sizes[1:]], moved, found.base[lead])
        alone = found.dims.pop(lead, None)
        found.dims.pop(follower, None)
        if alone is not None:  # the lead runs alone too: the pair takes what both take
            blocks = [b for b in (alone.multiple_of, both.multiple_of) if b]
            both.lo = max(alone.lo, both.lo)
            both.multiple_of = math.lcm(*blocks) if blocks else None
        found.dims[lead] = both
        for t, (x, j) in list(found.ties.items()):
            if x == follower:  # tied to the follower before: to its lead now
                found.ties[t] = (lead, j * k)
        return True
    return False


def _write_shapes(
    found: Shapes, meter: Meter, base: Point, sizes: list[Mapping[str, int]]
) -> str | None:
    """Each input's shape in the drawn dims' names; why not, where some axis cannot be."""
    follows: dict[tuple[str, int], str] = {}
    for d, dim in found.dims.items():
        dims = found.move(d, dim.moved)
        moved = meter(dims)
        assert not isinstance(moved, str)
        found.points.append((dims, moved))
        for name, axis in sorted(_changed(base, moved)):
            if (name, axis) in follows:
                return f"{name}'s axis {axis} follows both {follows[name, axis]} and {d}"
            expr = _expression(d, dim, base.shapes[name][axis], moved.shapes[name][axis], found)
            if expr is None:
                a, b = base.shapes[name][axis], moved.shapes[name][axis]
                return f"{name}'s axis {axis} is {a} at {d}={found.base[d]}, {b} at {dim.moved}"
            follows[name, axis] = expr
    for name, shape in base.shapes.items():
        found.shapes[name] = [follows.get((name, i), n) for i, n in enumerate(shape)]
    for dims in sizes:
        got = meter(dims)
        if isinstance(got, str):
            return f"it does not run on the meta device at {dict(dims)}: {got}"
        found.points.append((dict(dims), got))
        for name, shape in found.shapes.items():
            want = [resolve_dim(n, dims) for n in shape]
            if got.shapes[name] != want:
                return f"{name} is {got.shapes[name]} at {dict(dims)}, not {shape}"
    return None


def _expression(d: str, dim: DimFound, a: int, b: int, found: Shapes) -> str | None:
    """The axis that is `a` at the base and `b` with `d` moved, in d's name: `d`, `k*d`, or
    `d/q` (a convolution's weight holds out_channels / groups), None where it is none of these."""
    was, now = found.base[d], dim.moved
    k = a // was
    if k >= 1 and a == k * was and b == k * now:
        return d if k == 1 else f"{k}*{d}"
    q = was // a if a else 0
    if q > 1 and a * q == was and b * q == now and (dim.multiple_of or 1) % q == 0:
        return f"{d}/{q}"
    return None
