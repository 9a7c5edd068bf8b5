"""The sizes an imported problem is judged at: its own (the module's size constants as written,
GPU-only where the interpreter could not run them), and smaller ones for Triton's CPU
interpreter, made by scaling those constants down.

Sizes are measured on the meta device (shapes and flops, no memory), so a problem of 16 GB is
sized in milliseconds. Scaling halves the largest constant that still shrinks the problem, one at
a time, until inputs, weights and outputs together hold at most BUDGET elements. A constant whose
halving breaks the problem (a channel count that must divide into groups) or shrinks nothing (a
class count no shape uses) is kept. Where the shapes are literals in get_inputs() (a 224x224
image), nothing scales them and the problem stays GPU-only; its origin says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kernelgen.kernelbench.runtime import Measured

# Elements (inputs, parameters, buffers, outputs) of a CPU size: the interpreter runs a program
# at a time, ~ms each, and a case runs the candidate several times (twice, guarded, poisoned).
BUDGET = 1 << 15
# A constant below this is a kernel size, a stride, an axis or a group count: never scaled.
MIN_SCALED = 8

Measure = Callable[[dict[str, int]], "Measured | str"]


@dataclass
class Variant:
    name: str
    dims: dict[str, int]
    measured: Measured
    interpreter: bool


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def scale_down(
    measure: Measure, dims: dict[str, int], measured: Measured, budget: int = BUDGET
) -> tuple[Variant, bool]:
    """The problem with its largest constants halved until it fits `budget`, and whether it
    does: the smallest the constants can make it otherwise."""
    frozen = {d for d, v in dims.items() if v < MIN_SCALED}
    total = measured.elements()
    while total > budget:
        free = [d for d in dims if d not in frozen]
        if not free:
            break
        d = max(free, key=lambda k: dims[k])
        trial = {**dims, d: (dims[d] + 1) // 2}
        got = measure(trial)
        if isinstance(got, str):
            # Constants that must stay equal (a loss's batch broadcast against its width):
            # halved together.
            twins = [k for k in free if dims[k] == dims[d]]
            trial = {**dims, **{k: (dims[k] + 1) // 2 for k in twins}}
            got = measure(trial) if len(twins) > 1 else got
        if isinstance(got, str) or got.elements() >= total:
            frozen.add(d)
            continue
        dims, measured, total = trial, got, got.elements()
    return Variant(name="small", dims=dims, measured=measured, interpreter=True), total <= budget


def odd(measure: Measure, base: Variant, scaled: set[str], budget: int = BUDGET) -> Variant | None:
    """`base` with each scaled constant moved to an odd value that is no power of two and no
    other constant's value: no block size divides it, and each shape's dims tell the
    constants apart. A constant the problem cannot take odd stays as it was."""
    dims = dict(base.dims)
    measured = base.measured
    used = set(dims.values())
    for d in sorted(scaled):
        n = dims[d] + 1 if dims[d] % 2 == 0 else dims[d] + 2
        while n in used or _pow2(n):
            n += 2
        got = measure({**dims, d: n})
        if isinstance(got, str) or got.elements() > 2 * budget:
            continue
        dims[d], measured = n, got
        used.add(n)
    if dims == base.dims:
        return None
    return Variant(name="odd", dims=dims, measured=measured, interpreter=True)


def plan(
    measure: Measure, dims: dict[str, int], measured: Measured, budget: int = BUDGET
) -> tuple[list[Variant], Variant, str | None]:
    """The sizes, the problem's own first and then the CPU ones; the smallest size reached (where
    the import runs the problem for real); and why there are no CPU sizes, if so."""
    own = Variant("problem", dict(dims), measured, interpreter=measured.elements() <= budget)
    if own.interpreter:
        scaled = {d for d, v in dims.items() if v >= MIN_SCALED}
        extra = odd(measure, own, scaled, budget)
        return [own, *([extra] if extra else [])], own, None
    small, fits = scale_down(measure, dict(dims), measured, budget)
    if not fits:
        why = (
            f"no CPU size: scaling the module's size constants down leaves "
            f"{small.measured.elements()} elements, over the interpreter's {budget} (its "
            "shapes are not all derived from them); GPU-only"
        )
        return [own], small, why
    scaled = {d for d in dims if small.dims[d] != dims[d]}
    extra = odd(measure, small, scaled, budget)
    return [own, small, *([extra] if extra else [])], small, None
