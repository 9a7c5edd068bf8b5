"""One problem file to the text of its reference: run it, size it, probe it, write it; and the
check that the written reference holds (it loads as the judge loads it and draws a case)."""

from __future__ import annotations

from typing import Any

import torch

from kernelgen.errors import KernelgenError, SpecError
from kernelgen.kernelbench import domain, probe, sizes, source, specgen, writer
from kernelgen.kernelbench.runtime import Measured, execute, measure, overrides, seeded
from kernelgen.kernelbench.source import ProblemFile, Refused

# The largest size the import runs for real on the CPU, to probe a problem that has no CPU size
# (elements of inputs, weights and outputs: 64 MB in fp32).
PROBE_CAP = 1 << 24


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".rstrip(": ")


def make_reference(pf: ProblemFile) -> tuple[str, list[str], bool]:
    """The reference's text, the import's notes, and whether the problem runs a convolution."""
    try:
        ns = execute(pf.source, {}, str(pf.path))
    except Exception as e:  # the problem's own module: anything can fail
        raise Refused(pf.path, f"the module does not run: {_error(e)}") from None
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not callable(ns.get(name)):
            raise Refused(
                pf.path,
                f"no {name}: a KernelBench problem defines Model, get_inputs and get_init_inputs",
            )
    found_constants = source.constants(pf.source, ns)
    dims = source.dims_of(ns, found_constants)

    def at(d: dict[str, int]) -> Measured | str:
        try:
            return measure(execute(pf.source, overrides(found_constants, d), str(pf.path)))
        except Exception as e:  # a size the problem cannot take
            return _error(e)

    own = at(dims)
    if isinstance(own, str):
        raise Refused(pf.path, f"cannot be sized on the meta device: {own}")
    variants, smallest, why = sizes.plan(at, dims, own)
    if smallest.measured.elements() > PROBE_CAP:
        raise Refused(
            pf.path,
            f"too large to run on the CPU even scaled down "
            f"({smallest.measured.elements()} elements): nothing to check it by",
        )
    ns_small = execute(pf.source, overrides(found_constants, smallest.dims), str(pf.path))
    found = probe.probe(pf, ns_small)
    kept = [variants[0]] + [
        v for v in variants[1:] if v is smallest or _runs(pf, found_constants, v)
    ]
    notes = list(found.notes)
    convolution = found.convolution or own.convolution
    if convolution:
        notes.append("runs a convolution")
    if why:
        notes.append(why)
    else:
        scaled = [d for d in dims if any(v.dims[d] != dims[d] for v in kept)]
        if scaled:
            moved = ", ".join(
                f"{d} {dims[d]} -> {'/'.join(str(v.dims[d]) for v in kept[1:])}" for d in scaled
            )
            notes.append(f"CPU sizes scale the module's constants: {moved}")
    spec, plan, costs = specgen.build(pf, found_constants, kept, found, notes)
    derived, comment = domain.attach(pf, found_constants, kept, found, spec, plan, costs)
    return writer.render(pf, spec, plan, costs, derived, comment), notes, convolution


def _runs(pf: ProblemFile, found_constants: dict, v: sizes.Variant) -> bool:
    """The problem constructs and runs for real at a CPU size (the meta device said it would)."""
    try:
        ns = execute(pf.source, overrides(found_constants, v.dims), str(pf.path))
        with seeded(0), torch.no_grad():
            ns["Model"](*ns["get_init_inputs"]())(*ns["get_inputs"]())
    except Exception:  # then the size is dropped, and the others stand
        return False
    return True


def smoke(op: str) -> None:
    """Load the reference as the judge does, draw its first CPU case (or its first case) through
    its make_inputs, and run the reference on it upcast, as the truth is computed."""
    from kernelgen.spec import load_spec
    from kernelgen.spec.inputs import make_inputs

    spec = load_spec(op)
    cases = [c for c in spec.cases if c.interpreter]
    if not cases:
        return  # GPU-only: its sizes are too large to draw here
    case = cases[0]
    try:
        args = make_inputs(spec, case.size, case.dtype, case.dist, 0, "cpu")
        upcast: list[Any] = [
            a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args
        ]
        with torch.no_grad():
            spec.reference(*upcast)
            spec.reference(*args)
        for b in spec.data.bench:
            spec.cost(b.dims, b.dtype)
    except KernelgenError:
        raise
    except Exception as e:  # the reference module is generated, but runs the problem's code
        raise SpecError(f"{spec.path}: case {case.name}: {_error(e)}") from None
