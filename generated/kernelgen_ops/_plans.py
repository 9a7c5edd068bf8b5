"""Launch plans: a launcher's repeat calls replayed as its allocations and compiled launches.

Hand-written and shipped with the library. On unless KERNELGEN_OPS_PLANS=0 when kernelgen_ops is
imported (or set_enabled(False)): tested on CPU against a pretend GPU (generated/tests/
test_plans.py, test_calls.py) and on the H200 (the same files' gpu tests: replays bit-equal to
the launcher, and inside a CUDA graph). It assumes of a launcher what the pipeline checks only
at its bench's shapes (below). Off, nothing is installed and a call costs nothing more. The
public call (_calls.py) keeps its own plans, under its key; Planned, over the module's launcher,
serves the calls that reach the launcher directly (routed torch calls, _routing.py).

Why. On the H200 a decode call of kernelgen_ops.softmax costs 27.8 us of host time against torch
eager's 11.0 (scripts/host_overhead.py, 2026-12-03), and a lean launch (_launch.py) saves only the
Triton part of it: the launcher's own torch calls (torch.empty, reshape, view, stride: 9.4 us
under cProfile) and its Python (4.8 us) remain. Most launchers are a pure function of their
inputs' shapes, strides, dtypes, alignment and scalar values: they allocate outputs, compute a
grid and launch. For such a call the plan made from its first call holds everything but the
pointers, and a repeat call only allocates the buffers and hands each compiled kernel its
arguments, with the pointers of this call's tensors.

A plan is made from one call, watched:
- every aten op the launcher runs goes through a TorchDispatchMode; only allocations
  (empty.memory_format, empty_strided) and views are allowed, anything else (a fill, a copy, a
  read back to the host, another kernel of torch's) makes the call unplannable;
- every launch goes through a LeanKernel of the module, and must have been kept (a plain launch,
  see _launch.py): a module with a kernel that is launched some other way gets no plans;
- every tensor handed to a kernel must lie inside exactly one of the call's tensors or of the
  buffers it allocated, which gives its pointer as (that tensor, offset);
- what the launcher returns must be such buffers (or views of them), or its inputs.
A replay checks what a lean launch checks (lean launches on, no launch hooks, JITFunction.run not
replaced, the kernels' globals unchanged) and otherwise calls the launcher.

What is assumed: that the launcher's choices depend on nothing but the key. The watch above sees
every torch op and launch (so a choice made from the data, which needs a read to the host, makes
no plan), but not Python reading other state: a launcher choosing a vector width from
data_ptr() % 128, or reading an environment variable per call, would be replayed with the choice
of its first call. The pipeline's bench launches every contender this way
(kernelgen/bench/worker.py as_shipped) and, after timing each shape, checks the answers of two
input sets of the same key with other data and addresses against torch's (recheck); a contender
that fails is not timed. What no check covers is a key the bench shapes do not reach. The promoted
launchers of softmax, rms_norm and silu_and_mul read only shapes, strides, dtypes and their tuned
tables (a function of the device and the shape).

The key: the current device, and per argument: for a plain tensor (torch.Tensor or nn.Parameter,
no other subclass) its dtype, device, shape, strides and data_ptr() % 16 (Triton specializes on
that alignment); ints, floats, bools, strings and None by type and value. Anything else is never
planned.
"""

import functools
import os
import sys
import threading
from types import FunctionType
from typing import Any

import torch

from . import _launch

_enabled = os.environ.get("KERNELGEN_OPS_PLANS", "1") != "0"
MAX_PLANS = 256  # per launcher; past that, calls that need a new plan run the launcher as is
_MISSING = object()
_CUDA = torch.cuda.is_available()  # without it (CPU, the interpreter) there is no current device
_TENSOR, _PARAMETER = torch.Tensor, torch.nn.Parameter
_empty_strided, _empty_like = torch.empty_strided, torch.empty_like
_SCALARS = (int, float, bool, str, type(None))
_ALLOCATIONS = frozenset(
    {
        torch.ops.aten.empty.memory_format,
        torch.ops.aten.empty_strided.default,
        torch.ops.aten.empty_like.default,
        torch.ops.aten.new_empty.default,
    }
)


def set_enabled(enabled: bool) -> None:
    """Replays on or off, for the launchers that got plans at import (KERNELGEN_OPS_PLANS=1)."""
    global _enabled
    _enabled = bool(enabled)


def enabled() -> bool:
    return _enabled


def install(namespace: dict[str, Any]) -> None:
    """Put a Planned launcher in place of an operator module's launcher (the function named like
    the module), when every kernel its host code can reach launches through a LeanKernel. Only
    with plans on (KERNELGEN_OPS_PLANS=1): off, the launcher stays as it is."""
    if not (_enabled and _launch.ACTIVE):
        return
    op = str(namespace.get("__name__", "")).rpartition(".")[2]
    launcher = namespace.get(op)
    if type(launcher) is not FunctionType or not _only_lean(namespace):
        return
    namespace[op] = Planned(launcher, namespace)


def _only_lean(namespace: dict[str, Any]) -> bool:
    """No kernel is left a JITFunction (or autotuned, or interpreted) under a name that host code
    of the module reads: such a launch would happen outside the plan."""
    # Kernels only other kernels call stay JITFunctions (Triton compiles them in): those are fine.
    kernels = {n for n, v in namespace.items() if isinstance(v, _launch.KernelInterface)}
    lean = {n for n, v in namespace.items() if isinstance(v, _launch.LeanKernel)}
    return bool(lean) and not (kernels - lean) & _host_names(namespace)


def _host_names(namespace: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for value in namespace.values():
        if type(value) is FunctionType and value.__module__ == namespace.get("__name__"):
            names |= _launch._names(value.__code__)
    return names


@functools.cache
def _watch_class() -> type:
    """_Watch, defined on first use: torch's dispatch-mode machinery is imported only by a process
    that records plans."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Watch(TorchDispatchMode):
        """The aten ops of one launcher call: allocations kept, views let through, anything else
        marks the call unplannable."""

        def __init__(self) -> None:
            super().__init__()
            self.allocated: list[torch.Tensor] = []
            self.refused: str | None = None

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            out = func(*args, **(kwargs or {}))
            if func in _ALLOCATIONS:
                self.allocated.append(out)
            elif not func.is_view and self.refused is None:
                self.refused = str(func)
            return out

    return _Watch


class _Launch:
    """One recorded launch: the compiled kernel's run and handles, the grid, and its arguments
    in signature order with each tensor replaced by (source, byte offset)."""

    __slots__ = ("jit", "run", "grid", "function", "metadata", "template", "pointers")

    def __init__(self, jit, entry, grid, template, pointers) -> None:  # noqa: ANN001
        self.jit = jit
        _, self.run, self.function, self.metadata = entry
        self.grid = (*grid, 1, 1)[:3]
        self.template = template  # the arguments, tensors as None
        self.pointers = pointers  # (position, source index, byte offset)


class _Plan:
    """What a call does, as allocations (size, stride, dtype, device, the input whose layout it
    has or None), launches and the outputs:
    (source index, None, None, 0) for a source itself, else (source index, size, stride, elements
    past the source's first) for a view of one. Sources are the call's tensors, at `inputs` (their
    positions among the arguments), then the allocations. `go(args)` does it: a function
    generated for this plan (its text is `source`), so that a replay runs no loop over the plan."""

    __slots__ = ("inputs", "allocations", "launches", "jits", "outputs", "kind", "go", "source")

    def __init__(self, inputs, allocations, launches, outputs, kind) -> None:  # noqa: ANN001
        self.inputs, self.allocations, self.launches = inputs, allocations, launches
        self.jits = tuple({id(launch.jit): launch.jit for launch in launches}.values())
        self.outputs, self.kind = outputs, kind  # kind: torch.Tensor, tuple or list
        self.go, self.source = _generate(self)


def _direct(run: Any) -> tuple | None:
    """(the C launch function, cooperative grid, PDL) where `run` is Triton 3.6's CudaLauncher
    and its kernel needs no scratch memory: CudaLauncher.__call__ then only passes the call on,
    adding those two flags and None for both scratch buffers, and the replay calls the C
    function itself (one Python frame and two scratch calls less per launch). Else None."""
    driver = sys.modules.get("triton.backends.nvidia.driver")
    launcher = getattr(driver, "CudaLauncher", None)
    if launcher is None or type(run) is not launcher:
        return None
    if run.global_scratch_size or run.profile_scratch_size:
        return None
    return run.launch, run.launch_cooperative_grid, run.launch_pdl


def _generate(plan: _Plan) -> tuple[Any, str]:
    """The replay of a plan as a Python function of the call's arguments, and its text. Sources
    are s0, s1, ...; every value the plan fixes is a name in the function's scope."""
    scope: dict[str, Any] = {
        "_launch": _launch,
        "_knobs": _launch.knobs,
        "_Chain": _launch._HookChain,
        "_NOT": NOT_REPLAYED,
        "_empty": _empty_strided,
        "_like": _empty_like,
        "_kept": _launch._globals_kept,
    }
    # What a lean launch checks before it launches (see _launch.LeanKernel._launch), inlined.
    lines = [
        "    enter, leave = _knobs.runtime.launch_enter_hook, _knobs.runtime.launch_exit_hook",
        "    if not (",
        "        _launch.JITFunction.run is _launch._TRITON_RUN",
        "        and type(enter) is _Chain and not enter.calls",
        "        and type(leave) is _Chain and not leave.calls",
        "    ):",
        "        return _NOT",
    ]
    for i, jit in enumerate(plan.jits):
        scope[f"j{i}"] = jit
        lines.append(f"    if j{i}.pre_run_hooks or (j{i}.used_global_vals and not _kept(j{i})):")
        lines.append("        return _NOT")
    lines += [f"    s{j} = args[{position}]" for j, position in enumerate(plan.inputs)]
    for k, (size, stride, dtype, device, like) in enumerate(plan.allocations):
        j = len(plan.inputs) + k
        if like is not None:  # the layout of an input, which empty_like copies: fewer arguments
            lines.append(f"    s{j} = _like(s{like})")
            continue
        scope.update({f"z{j}": size, f"r{j}": stride, f"t{j}": dtype, f"v{j}": device})
        lines.append(f"    s{j} = _empty(z{j}, r{j}, dtype=t{j}, device=v{j})")
    # With one device the current one is 0 (see _launch.one_device); else asked per call.
    device = "0" if _launch.one_device() else "_launch._current_device()"
    lines.append(f"    stream = _launch._current_stream({device})")
    for i, launch in enumerate(plan.launches):
        pointers = {position: (index, offset) for position, index, offset in launch.pointers}
        values = []
        for position, value in enumerate(launch.template):
            if position in pointers:
                index, offset = pointers[position]
                values.append(f"s{index}.data_ptr()" + (f" + {offset}" if offset else ""))
            else:
                scope[f"a{i}_{position}"] = value
                values.append(f"a{i}_{position}")
        gx, gy, gz = launch.grid
        scope.update({f"g{i}x": gx, f"g{i}y": gy, f"g{i}z": gz, f"f{i}": launch.function})
        scope[f"m{i}"] = launch.metadata
        head = f"g{i}x, g{i}y, g{i}z, stream, f{i}"
        direct = _direct(launch.run)
        if direct is None:  # CompiledKernel.run: (grid, stream, function, metadata, hooks...)
            scope[f"l{i}"] = launch.run
            head += f", m{i}, None, None, None"
        else:  # what CudaLauncher.__call__ hands its C function (see _direct)
            scope[f"l{i}"], scope[f"c{i}"], scope[f"p{i}"] = direct
            head += f", c{i}, p{i}, None, None, m{i}, None, None, None"
        lines.append(f"    l{i}({head}, {', '.join(values)})")
    outs = []
    for n, (index, size, stride, elements) in enumerate(plan.outputs):
        if size is None:
            outs.append(f"s{index}")
        else:
            scope[f"oz{n}"], scope[f"or{n}"] = size, stride
            start = f"s{index}.storage_offset() + {elements}"
            outs.append(f"s{index}.as_strided(oz{n}, or{n}, {start})")
    joined = ", ".join(outs)
    if plan.kind is torch.Tensor:
        lines.append(f"    return {outs[0]}")
    else:
        lines.append(f"    return [{joined}]" if plan.kind is list else f"    return ({joined},)")
    source = "def replay(args):\n" + "\n".join(lines) + "\n"
    exec(compile(source, "<kernelgen_ops launch plan>", "exec"), scope)
    return scope["replay"], source


class Planned:
    """An operator module's launcher, replayed from a plan where one was made for the call's key.
    Every other attribute is the launcher's (`__wrapped__` is the launcher itself)."""

    def __init__(self, launcher: FunctionType, namespace: dict[str, Any]) -> None:
        self.__wrapped__ = launcher
        self._namespace = namespace
        self._plans: dict[tuple, _Plan | None] = {}
        self.__name__, self.__doc__ = launcher.__name__, launcher.__doc__

    def __getattr__(self, name: str) -> Any:
        if name == "__wrapped__":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __repr__(self) -> str:
        return f"Planned({self.__wrapped__!r})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        launcher = self.__wrapped__
        if kwargs or not replays():
            return launcher(*args, **kwargs)
        k = key(args)
        if k is None:
            return launcher(*args)
        plan = self._plans.get(k, _MISSING)
        if plan is None:
            return launcher(*args)
        if plan is _MISSING:
            if len(self._plans) >= MAX_PLANS:
                return launcher(*args)
            out, self._plans[k] = record(launcher, self._namespace, args)
            return out
        out = replay(plan, args)
        return launcher(*args) if out is NOT_REPLAYED else out


def replays() -> bool:
    """Whether a plan may stand for a call now: plans on, lean launches on, and not CHECK (tests),
    which asks Triton's binder at every lean launch, which a replay does not make."""
    return _enabled and _launch._enabled and not _launch.CHECK


def plannable(namespace: dict[str, Any], launcher: Any) -> bool:
    """A plain function of a module whose kernels all launch lean (see _only_lean)."""
    return _launch.ACTIVE and type(launcher) is FunctionType and _only_lean(namespace)


def record(launcher: Any, namespace: dict[str, Any], args: tuple) -> tuple[Any, "_Plan | None"]:
    """Call the launcher once, watched: its output and the plan of the call, or None where the
    call cannot be replayed (see the top of this module)."""
    kernels = [v for v in namespace.values() if isinstance(v, _launch.LeanKernel)]
    seen: list[tuple] = []
    others: list[int] = []  # launches another thread made meanwhile: then no plan
    me = threading.get_ident()
    for kernel in kernels:

        def watched(grid, a, kw, kernel=kernel, launch=kernel._launch):  # noqa: ANN001
            compiled = launch(grid, a, kw)
            if threading.get_ident() == me:
                seen.append((kernel, grid, a, kw))
            else:
                others.append(1)
            return compiled

        kernel._launch = watched  # an instance attribute over LeanKernel._launch
    watch = _watch_class()()
    try:
        with watch:
            out = launcher(*args)
    finally:
        for kernel in kernels:
            del kernel._launch
    return out, None if others else _plan(args, watch, seen, out)


def key(args: tuple) -> tuple | None:
    """The key of a launcher's call (Planned): the current device, and per argument a tensor's
    dtype, device, shape, strides and 16-byte alignment, or a scalar's type and value. None for
    arguments no key is made for. (The public call keys more: _calls.py.)"""
    parts: list[Any] = [_launch._current_device() if _CUDA else -1]
    for a in args:
        kind = type(a)
        if kind is _TENSOR or kind is _PARAMETER:  # one kind: a Parameter is a plain tensor
            parts.append((a.dtype, a.device, a.shape, a.stride(), a.data_ptr() & 15))
        elif kind in _SCALARS:
            parts.append((kind, a))  # the kind too: 1, 1.0 and True are equal keys otherwise
        else:
            return None
    return tuple(parts)


def _extent(t: torch.Tensor) -> tuple[int, int]:
    """The bytes a tensor's elements span: [first, last + 1)."""
    start = t.data_ptr()
    if t.numel() == 0:
        return start, start
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    return start, start + (last + 1) * t.element_size()


def _source(t: torch.Tensor, sources: list[torch.Tensor]) -> tuple[int, int] | None:
    """(index of the one source whose bytes hold t's first element, byte offset), or None."""
    p = t.data_ptr()
    spans = [_extent(s) for s in sources]
    found = [i for i, (start, end) in enumerate(spans) if start <= p < end]
    if len(found) != 1:
        return None
    return found[0], p - sources[found[0]].data_ptr()


def _alike(t: torch.Tensor, inputs: list[torch.Tensor]) -> int | None:
    """The first input whose layout torch.empty_like gives t's (size, stride, dtype, device), or
    None. A call with the plan's key has inputs of the same layout, so empty_like (one argument
    to parse) allocates what empty_strided (four) would."""
    want = (t.shape, t.stride(), t.dtype, t.device)
    for i, a in enumerate(inputs):
        if (a.shape, a.stride(), a.dtype, a.device) == want:
            probe = torch.empty_like(a)
            if (probe.shape, probe.stride(), probe.dtype, probe.device) == want:
                return i
    return None


def _plan(args: tuple, watch: Any, seen: list[tuple], out: Any) -> _Plan | None:
    if watch.refused is not None or not seen:
        return None
    inputs = [a for a in args if isinstance(a, torch.Tensor)]
    sources = [*inputs, *watch.allocated]
    launches = []
    device = _launch._current_device()
    for kernel, grid, a, kw in seen:
        binding = kernel._bindings.get((len(a), *kw))
        found = binding.key(device, a, kw) if binding is not None else None
        entry = binding.entries.get(found[0]) if found is not None else None
        if entry is None or not (type(grid) is tuple or type(grid) is list):
            return None
        template, pointers = list(found[1]), []
        for position, value in enumerate(template):
            if isinstance(value, torch.Tensor):
                where = _source(value, sources)
                if where is None:
                    return None
                pointers.append((position, *where))
                template[position] = None
        launches.append(_Launch(kernel.jit, entry, grid, template, tuple(pointers)))
    kind = torch.Tensor if isinstance(out, torch.Tensor) else type(out)
    if kind not in (torch.Tensor, tuple, list):
        return None
    outputs = []
    for r in (out,) if kind is torch.Tensor else out:
        if not isinstance(r, torch.Tensor):
            return None
        i = next((i for i, s in enumerate(sources) if r is s), None)
        if i is not None:
            outputs.append((i, None, None, 0))
            continue
        where = _source(r, sources)
        if where is None or r.dtype != sources[where[0]].dtype:
            return None
        elements, rest = divmod(where[1], r.element_size())
        if rest:
            return None
        base = sources[where[0]]
        if not elements and r.shape == base.shape and r.stride() == base.stride():
            # A view that is the whole buffer as it is (softmax's y.view(x.shape) of a 2-d x):
            # the buffer itself, which holds the same elements, without a view op per call.
            outputs.append((where[0], None, None, 0))
        else:
            outputs.append((where[0], tuple(r.shape), r.stride(), elements))
    allocations = [
        (tuple(t.shape), t.stride(), t.dtype, t.device, _alike(t, inputs)) for t in watch.allocated
    ]
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, torch.Tensor))
    return _Plan(positions, allocations, launches, outputs, kind)


NOT_REPLAYED = object()  # replay's answer where the process asks for the launcher itself


def replay(plan: _Plan, args: tuple) -> Any:
    """The plan's allocations and launches with this call's pointers, and its outputs; or
    NOT_REPLAYED when a launch hook, a replaced JITFunction.run or a kernel's changed globals
    ask for the launcher (what a lean launch would step aside for). Every call pays this, so
    all of it, checks included, is the plan's generated function (see _generate)."""
    return plan.go(args)
