"""Which value families and layouts an imported problem's domain draws: those its forward is
defined on, found by running the reference at the CPU sizes, as the shipped operators' were
chosen. A family (a layout) is kept where torch's own answer in the case dtype would pass the
judge on it: NaN and inf exactly where the float64 truth has them, and elsewhere within the
tolerance (kernelgen/verify/checks.py's rule, with the `reduction` the import found). A family
that fails it (a matmul's `wide` values, whose cancelling outputs torch's fp32 misses by more
than the absolute tolerance) would reject honest kernels, and a forward that raises on it (a
log of negative values) is not defined there.

Layouts apply to the problem's own float inputs only: the reference runs torch, which takes any
strides, so padded rows, a transposed view and a storage offset are an input like any other,
unless the forward needs a dense one (`x.view(...)` raises on a padded row: dropped). A leading
view (the heads of a fused qkv) is drawn where an input of rank 3 or more has a drawn dim second
to last, the dim such a view slices. `expanded` is never drawn: it repeats one slice of the
first dim of more than one entry, which is a channel or a feature the forward mixes whenever the
drawn batch is 1, and statistics over repeated values (a norm's variance) vanish, where torch's
own fp32 answer is no yardstick.
"""

from __future__ import annotations

from typing import get_args

import torch

from kernelgen.spec import Dist, OpSpec, Placement, Size
from kernelgen.spec.inputs import case_seed
from kernelgen.verify import checks
from kernelgen.verify.tensors import upcast

FAMILIES: tuple[str, ...] = get_args(Dist)
# The numbers of each layout probed (a drawn case draws its own).
PLACED = {
    "strided": Placement(kind="strided", pad=5),
    "transposed": Placement(kind="transposed"),
    "offset": Placement(kind="offset", offset=7),
    "leading": Placement(kind="leading", pad=3, start=1),
}


# Draws per size and family, as the judge draws two input sets per case.
DRAWS = ("a", "b")


def judged(spec: OpSpec, size: Size, dtype: str, dist: str) -> str | None:
    """Why torch's own answer in `dtype` fails the judge's rule on a draw of this size and
    family; None where it passes on each."""
    for draw in DRAWS:
        why = _judged(
            spec, size, dtype, dist, case_seed(0, f"{spec.name}/{size.name}/{dist}/{draw}")
        )
        if why is not None:
            return why
    return None


def _judged(spec: OpSpec, size: Size, dtype: str, dist: str, seed: int) -> str | None:
    gen = torch.Generator().manual_seed(seed)
    assert spec.make_inputs is not None
    try:
        args = spec.make_inputs(size, dtype, dist, gen)
        with torch.no_grad():
            native = spec.reference(*args)  # as laid out: the forward writes no input (probe.py)
            truth = spec.reference(*upcast(args))
    except Exception as e:  # the problem's own forward: a value it is not defined on
        return f"the forward raises {type(e).__name__}"
    tol = spec.tolerance(dtype, size.dims)
    for out, ref in zip(checks.leaves(native), checks.leaves(truth), strict=True):
        if not isinstance(out, torch.Tensor):
            continue
        fail, _, _ = checks.measure(out, ref, tol)
        if fail is not None:
            return f"torch's {dtype} answer: {fail.reason}"
    return None


def families(spec: OpSpec, sizes: list[Size], dtype: str) -> tuple[list[str], dict[str, str]]:
    """The families kept, and why each other one was dropped (at which size)."""
    kept, dropped = [], {}
    for dist in FAMILIES:
        why = next(
            (f"{s.name}: {w}" for s in sizes if (w := judged(spec, s, dtype, dist)) is not None),
            None,
        )
        if why is None:
            kept.append(dist)
        else:
            dropped[dist] = why
    return kept, dropped


def layouts(
    spec: OpSpec, sizes: list[Size], dtype: str, leading: bool
) -> tuple[list[str], dict[str, str]]:
    """The layouts kept (contiguous first), and why each other one was dropped."""
    kept, dropped = ["contiguous"], {}
    for kind, placed in PLACED.items():
        if kind == "leading" and not leading:
            continue
        laid = [s.model_copy(update={"layout": placed}) for s in sizes]
        why = next(
            (f"{s.name}: {w}" for s in laid if (w := judged(spec, s, dtype, "normal")) is not None),
            None,
        )
        if why is None:
            kept.append(kind)
        else:
            dropped[kind] = why
    return kept, dropped
