"""The routes promotion records in MANIFEST.json: the torch entry points the operator's spec
declares (SPEC.routes, kernelgen/spec/routes.py), checked against the kernel they route to. The
library's _routing.py generates its routes from them."""

from __future__ import annotations

import importlib

from kernelgen.package.manifest import Param, PromoteError, Provenance
from kernelgen.spec import TensorInput, load_spec
from kernelgen.spec.routes import Route


def _resolve(name: str) -> object | None:
    """torch.nn.functional.softmax -> the function; None where there is none."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr, None)
            if found is None:
                return None
        return found
    return None


def declared_routes(op: str, params: list[Param], provenance: Provenance) -> list[Route]:
    """SPEC.routes of `op`, for a measured kernel (an unmeasured one has no dispatch evidence:
    a routed call would only ever take torch's op). Each route must pass every parameter of
    the kernel, name a torch function that exists, and key its dispatch the way the library's
    routes do: by the input's rows and last dimension (_runtime.routed_to_torch)."""
    if not provenance.measured:
        return []
    spec = load_spec(op)
    where = f"{spec.path}: SPEC.routes"
    kernel = [p.name for p in params]
    for i, route in enumerate(spec.data.routes):
        at = f"{where}[{i}] ({route.function})"
        if sorted(route.passes) != sorted(kernel):
            raise PromoteError(
                f"{at}: passes {route.passes} to the kernel; expected each of {kernel} once"
            )
        if _resolve(route.function) is None:
            raise PromoteError(f"{at}: no such torch function")
        given = next(a.kernel for a in route.args.values() if a.takes == "input")
        tensor = next(
            (t for t in spec.data.inputs if isinstance(t, TensorInput) and t.name == given), None
        )
        rows_last = [tensor.shape[0], tensor.shape[-1]] if tensor and len(tensor.shape) == 2 else []
        if spec.data.bucket != rows_last:
            raise PromoteError(
                f"{at}: a routed call's dispatch is keyed by its input's rows and last dimension; "
                f"SPEC.bucket {spec.data.bucket} is not [rows, last] of input {given!r}"
            )
    return list(spec.data.routes)
