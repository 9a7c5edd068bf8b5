"""Route torch calls to the generated kernels where the result is the same, and only there.

    kernelgen_ops.enable()                      # every routable operator's torch calls
    kernelgen_ops.enable(exclude=["rms_norm"])  # all but rms_norm's
    kernelgen_ops.disable()                     # torch's own functions are back
    with kernelgen_ops.use(include=["softmax"]): ...   # for one block, restored on exit

Which torch functions an operator takes calls from, and which values of their arguments its kernel
takes, is declared in the operator's spec (SPEC.routes in references/<op>.py, described in
kernelgen/spec/routes.py) and recorded by promotion in MANIFEST.json ("routes") for a kernel it
measured; routable() lists those operators. softmax's spec, for one, names torch.softmax,
torch.nn.functional.softmax and torch.Tensor.softmax (so nn.Softmax follows), rms_norm's
torch.nn.functional.rms_norm (so nn.RMSNorm follows).

enable() patches each of them with a route, a function generated from its declaration, that sends
a call to the kernel only when it computes the same thing torch would: argument values the
declaration lets through (the last dimension; no dtype= cast; ...); a float16, bfloat16 or float32
tensor on CUDA (on CPU under TRITON_INTERPRET=1, float16 and float32 only: the interpreter's bf16
arithmetic is not the GPU's); no gradient needed; no autocast (which computes in float32 and
returns float32); plain tensors only (not vmap/functorch wrappers, fake tensors or other
subclasses). Every other call goes to the function that was there before, unchanged. While
tracing (torch.compile, torch.jit.trace, torch.fx) the routes step aside too, so the tracer
records torch's op and Inductor generates and fuses its own kernel; to put a generated kernel into
a compiled graph, call kernelgen_ops.<op>, a torch custom op. So do they under a
__torch_function__ mode (torch.set_default_device installs one): the mode sees the call as it
would without routing.

torch.jit.script cannot compile these routes: call disable() before scripting.
"""

import contextlib
import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from . import _runtime

_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32})
# nn.Parameter is a plain tensor for this purpose (an RMSNorm weight is one); FakeTensor,
# FunctionalTensor, DTensor and other subclasses are not.
_PLAIN = frozenset({torch.Tensor, torch.nn.Parameter})
_MISSING = object()
_functorch_active: Callable[[], bool] = getattr(
    torch._C, "_are_functorch_transforms_active", lambda: False
)
# What the generated routes read from this module's globals (at call time, so a test may patch
# _routable), besides torch, _routable and _tracing.
_T = torch.Tensor
_P = torch.nn.Parameter
_device_index = _runtime._device_index
_dynamo_compiling = torch.compiler.is_dynamo_compiling
_function_mode = torch._C._is_torch_function_mode_enabled
_has_torch_function_variadic = torch._C._has_torch_function_variadic
_tensor_softmax = torch._C.TensorBase.softmax  # torch's own method, under any patch of Tensor's


def _tracing() -> bool:
    return torch.compiler.is_compiling() or torch.jit.is_tracing() or _functorch_active()


def _routable(x: Any) -> bool:
    """x is a tensor the kernel computes exactly what torch would for (shape aside)."""
    return (
        type(x) in _PLAIN
        and x.dtype in _FLOATS
        and (
            x.is_cuda
            # bf16 under the interpreter is not what the GPU computes (see _contracts)
            or (_runtime.INTERPRET and x.device.type == "cpu" and x.dtype != torch.bfloat16)
        )
        and x.dim() > 0
        and x.numel() > 0
        and not (x.requires_grad and torch.is_grad_enabled())
        and not torch.is_autocast_enabled(x.device.type)
        and not x.is_neg()
    )


@dataclass(frozen=True)
class _Entry:
    """One torch entry point of an operator, as MANIFEST.json records it (SPEC.routes): its
    name ('torch.nn.functional.softmax'), its parameters as the route takes them (`params`:
    torch's own signature for its Python functions, a test compares them; the one torch's
    parser takes for its C functions), per parameter what the kernel takes (`args`), and the
    kernel's parameters in order (`kernel`). A name that is not among `params` raises the
    TypeError that torch's would. No **kwargs: packing them costs 0.2 us a call, as much as the
    rest of the route (a 2-core CPU, 2026-12-04)."""

    op: str
    name: str
    params: str
    args: dict[str, dict[str, Any]]
    kernel: tuple[str, ...]

    @property
    def owner(self) -> object:
        """torch.nn.functional for 'torch.nn.functional.softmax', torch.Tensor for
        'torch.Tensor.softmax'."""
        parts = self.name.split(".")[:-1]
        for cut in range(len(parts), 0, -1):
            try:
                owner: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for part in parts[cut:]:
                owner = getattr(owner, part)
            return owner
        raise ValueError(f"kernelgen_ops: no module for {self.name}")

    @property
    def attr(self) -> str:
        return self.name.rsplit(".", 1)[1]


def entries(op: str) -> list[_Entry]:
    """The torch entry points of `op` that MANIFEST.json records ([] for none)."""
    entry = _runtime.manifest()["ops"].get(op) or {}
    kernel = tuple(p["name"] for p in entry.get("params", ()))
    return [
        _Entry(op, r["function"], r["params"], r["args"], kernel) for r in entry.get("routes") or ()
    ]


def routable() -> list[str]:
    """The operators whose torch calls enable() can route: those MANIFEST.json records routes
    for."""
    return sorted(op for op, e in _runtime.manifest()["ops"].items() if e.get("routes"))


# What a Python entry point of torch runs for plain tensors where no __torch_function__ claims
# the call (the route has asked just before), so that a route where torch's op takes the call
# runs it without the entry point's own frame. Torch's knowledge, not an operator's: keyed by
# torch's name, in the entry point's own parameter names. An entry point not here is called
# itself; a C function is called with only the arguments given (see _torch_path).
_TORCH_PATHS: dict[str, tuple[str, ...]] = {
    # F.softmax's body, for a plain tensor and no __torch_function__ mode, is input.softmax(dim)
    # (dim given, no dtype): torch's own method here, since Tensor.softmax may be routed too and
    # the call would pay the route twice.
    "torch.nn.functional.softmax": (
        "if dtype is None and dim is not None:",
        "    return _tensor_softmax(input, dim)",
    ),
    # F.rms_norm's body, where no __torch_function__ claims the call, is torch.rms_norm(...).
    "torch.nn.functional.rms_norm": (
        "return torch.rms_norm(input, normalized_shape, weight, eps)",
    ),
}


def _signature(params: str) -> inspect.Signature:
    scope: dict[str, Any] = {}
    exec(f"def route({params}): pass", {}, scope)  # literal defaults only (the spec checks)
    return inspect.signature(scope["route"])


def _forward(sig: inspect.Signature, python: bool) -> str:
    """The call that passes a route's arguments on unchanged: a Python function's by position
    (keyword-only by name); a C function's parameters with a default by name, as every overload
    its parser tries takes them (torch.softmax's Dimname form takes dtype by name only)."""
    return ", ".join(
        p.name
        if p.kind is p.POSITIONAL_OR_KEYWORD and (python or p.default is p.empty)
        else f"{p.name}={p.name}"
        for p in sig.parameters.values()
    )


def _torch_path(entry: _Entry, sig: inspect.Signature, python: bool, shortcut: bool) -> list[str]:
    """The lines of a route where torch's op takes the call: the shortcut past the entry point's
    body (_TORCH_PATHS), or for a C function whose optional parameters all default to None, the
    call with only the others where they are None (its parser takes it faster); then the call
    passed on as it came, unless the shortcut already returned."""
    lines: list[str] = []
    if shortcut and python:
        lines = list(_TORCH_PATHS.get(entry.name, ()))
    elif shortcut:
        given = [p for p in sig.parameters.values() if p.default is not p.empty]
        if given and all(p.default is None for p in given):
            needed = ", ".join(p.name for p in sig.parameters.values() if p.default is p.empty)
            lines = [
                f"if {' and '.join(f'{p.name} is None' for p in given)}:",
                f"    return original({needed})",
            ]
    if not lines or lines[-1].startswith(" "):
        lines.append(f"return original({_forward(sig, python)})")
    return lines


def _kernel_if(entry: _Entry, x: str) -> str:
    """The condition under which the kernel computes what torch would, from the declaration:
    the cheap checks of values first, then whether anything traces, then the tensors."""
    values, tensors = [], []
    for name, arg in entry.args.items():
        takes, value = arg["takes"], arg.get("value")
        if takes == "none":
            values.append(f"{name} is None")
        elif takes == "equals":
            values.append(f"type({name}) is {type(value).__name__} and {name} == {value!r}")
        elif takes == "last_dim":
            tensors.append(f"type({name}) is int and ({name} == -1 or {name} == {x}.dim() - 1)")
        elif takes == "last_shape":
            tensors.append(
                f"isinstance({name}, (list, tuple, torch.Size)) and tuple({name}) == "
                f"({x}.shape[-1],)"
            )
        elif takes == "number":
            number = f"type({name}) in (float, int)"
            tensors.append(number if value is None else f"({name} is None or {number})")
        elif takes == "input":
            tensors.append(f"_routable({name})")
        elif takes == "per_column":
            tensors.append(
                f"_routable({name}) and {name}.dtype == {x}.dtype and {name}.device == "
                f"{x}.device and {name}.shape == {x}.shape[-1:]"
            )
        elif takes != "any":
            raise ValueError(f"kernelgen_ops: {entry.name}: {name} takes {takes!r}, unknown")
    return " and ".join([*values, "not _tracing()", *tensors])


def _kernel_args(entry: _Entry) -> str:
    """The kernel's arguments, in its order, from the entry point's."""
    by_kernel = {arg.get("kernel"): (name, arg) for name, arg in entry.args.items()}
    out = []
    for k in entry.kernel:
        name, arg = by_kernel[k]
        if arg["takes"] == "number":
            value = arg.get("value")
            out.append(
                f"float({name})"
                if value is None
                else f"({value!r} if {name} is None else float({name}))"
            )
        else:
            out.append(name)
    return ", ".join(out)


# A route is a function generated per entry point, since at the decode sizes where torch's op
# takes the call its few steps are the route's whole cost, a measurable part of torch's own
# 10 us on the H200's host: named parameters (no *args or **kwargs to pack and unpack), the
# kept answer for the shape one lookup, no further frame. The checks before it:
# - under dynamo, aside before any lookup: it cannot trace torch._C's device getter (on the
#   H200 that broke fullgraph=True), and it would guard the graph on the kept answers (a
#   recompile per new shape kept). is_dynamo_compiling is one frame where is_compiling is two;
#   export outside dynamo (which is_compiling also covers) is caught by _tracing before a kernel;
# - under a __torch_function__ mode (and, where the entry point takes two tensors, either's
#   override, asked once as torch's Python functions ask it): the mode would see our reads of
#   the tensor (x.shape) as calls of its own;
# - a tensor subclass (FakeTensor, DTensor, ...) never reaches a kernel: torch's function takes
#   it, and whatever it overrides.
# Where torch's op takes the call (the decode sizes, a device without evidence) the call goes
# straight to it, before the checks only a call to the kernel needs; it only ever goes to the
# function that was there before, which every call the kernel may not take gets anyway, so the
# order of the checks changes no answer. Where the kernel takes it, the route calls the public
# call's repeat path (kernelgen_ops._<op>_call, _calls.py), looked up on the package on every
# call (one attribute read), as the public call looks up the module's launcher, so either can
# be spied on; the unrouted table then answers the kernel too (it counts no route).
_ROUTE = """def {name}({params}):
    if (type({x}) is _T or type({x}) is _P) and not (_dynamo_compiling() or {claimed}):
        to_torch = kept.get({key})
        if to_torch is None:
            to_torch = routed_to_torch({x}.shape)
        if to_torch:
            {torch_path}
        if {kernel_if}:
            return ops._{op}_call.fast({kernel_args})
    return original({forward})
"""


def _route(op: str, entry: _Entry, original: Callable, shortcut: bool = True) -> Callable:
    """The route of one entry point of `op` standing in for `original` (see _ROUTE); with
    shortcut=False its torch path calls `original` as the call came (a script's measure of the
    route alone). Its source is kept as the function's `source`."""
    sig = _signature(entry.params)
    # torch's own function under any wrapper of it (ours too): what decides how it is called
    python = inspect.isfunction(inspect.unwrap(getattr(entry.owner, entry.attr)))
    x = next(iter(sig.parameters))
    tensors = [n for n, a in entry.args.items() if a["takes"] in ("input", "per_column")]
    source = _ROUTE.format(
        name=op,
        op=op,
        params=entry.params,
        x=x,
        key=f"{x}.shape" if _runtime.one_table() else f"(_device_index(), {x}.shape)",
        claimed=(
            f"_has_torch_function_variadic({', '.join(tensors)})"
            if len(tensors) > 1
            else "_function_mode()"
        ),
        torch_path="\n            ".join(_torch_path(entry, sig, python, shortcut)),
        kernel_if=_kernel_if(entry, x),
        kernel_args=_kernel_args(entry),
        forward=_forward(sig, python),
    )
    # Made in a closure over what is the route's own (one cell read each), with this module's
    # globals for the rest.
    maker = "def make(original, kept, routed_to_torch, ops):\n"
    maker += "".join(f"    {line}\n" for line in source.splitlines()) + f"    return {op}\n"
    scope: dict[str, Any] = {}
    exec(compile(maker, f"<kernelgen_ops route {entry.name}>", "exec"), globals(), scope)
    route = scope["make"](
        original,
        _runtime.ROUTED_KEPT.setdefault(op, {}),
        functools.partial(_runtime.routed_to_torch, op),
        importlib.import_module("kernelgen_ops"),
    )
    route.__qualname__ = op
    route.__doc__ = original.__doc__
    route.__wrapped__ = original  # type: ignore[attr-defined]
    route.source = source  # type: ignore[attr-defined]
    return route


def _targets(op: str) -> list[tuple[object, str, Callable[[Callable], Callable]]]:
    """(owner, attribute, make_route(original)) for each torch entry point of an op."""
    return [(e.owner, e.attr, lambda original, e=e: _route(op, e, original)) for e in entries(op)]


# (owner, attribute) -> (what owner.__dict__ held before, our route)
_patches: dict[tuple[object, str], tuple[object, Callable]] = {}
_routed: dict[str, list[tuple[object, str]]] = {}


def _select(include: Iterable[str] | None, exclude: Iterable[str] | None) -> list[str]:
    present = routable()
    for name in (*(include or ()), *(exclude or ())):
        if name not in present:
            raise ValueError(
                f"kernelgen_ops: cannot route {name!r}; routable operators in this library: "
                f"{', '.join(present) or 'none'}"
            )
    chosen = present if include is None else [op for op in present if op in set(include)]
    return [op for op in chosen if op not in set(exclude or ())]


def _dynamo_knows_torch() -> None:
    """Dynamo builds its table of torch's functions once, by name, at the first compile (or
    when asked). Built while our routes stand in torch's place, it holds them instead of
    torch's own functions, and a compiled graph that calls torch.softmax breaks: torch 2.11 on
    the H200 raised "Attempted to call function marked as skipped" under fullgraph=True. So it
    is built before the first patch: an import of torch._dynamo (about a second) on the first
    enable() of a process, a cached call after that."""
    try:
        from torch._dynamo import trace_rules

        trace_rules.get_torch_obj_rule_map()
    except Exception:  # noqa: BLE001 - torch's private table, as it was: dynamo builds it later
        pass


def _patch(op: str) -> None:
    _dynamo_knows_torch()
    keys = []
    for owner, attr, make in _targets(op):
        before = vars(owner).get(attr, _MISSING)
        route = make(getattr(owner, attr))
        setattr(owner, attr, route)
        _patches[(owner, attr)] = (before, route)
        keys.append((owner, attr))
    _routed[op] = keys


def _unpatch(op: str) -> None:
    for key in _routed.pop(op):
        owner, attr = key
        before, route = _patches.pop(key)
        # Someone patched over us since: their function stays, and it still calls ours.
        if vars(owner).get(attr) is not route:
            continue
        if before is _MISSING:
            delattr(owner, attr)
        else:
            setattr(owner, attr, before)


def routed() -> list[str]:
    """The operators whose torch calls are routed now."""
    return list(_routed)


def enable(include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> None:
    """Route the matching torch calls of exactly the selected operators (default: all)."""
    _set(_select(include, exclude))


def disable() -> None:
    """Give every routed torch function back."""
    _set([])


def _set(ops: list[str]) -> None:
    for op in [op for op in _routed if op not in ops]:
        _unpatch(op)
    for op in ops:
        if op not in _routed:
            _patch(op)


@contextlib.contextmanager
def use(
    include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
) -> Iterator[None]:
    """enable(include, exclude) for one block; the routing before it is back on exit."""
    before = routed()
    chosen = _select(include, exclude)
    try:
        _set(chosen)
        yield
    finally:
        _set(before)
