"""Lean launches: after Triton's first launch of a specialization, call its compiled kernel.

Hand-written and shipped with the library. Every operator module ends with
`_runtime.lean_launches(globals())`, which puts a LeanKernel in place of each @triton.jit kernel
its launcher starts with `kernel[grid](...)`.

Why. JITFunction.run, on every launch, binds the arguments to the signature, specializes each one,
turns that and the options into a string key, finds the compiled kernel, reads the current device
and stream, runs hooks, checks the globals the kernel read, and only then calls
CompiledKernel.run: published for Triton 3.5, 5.7-13.2 us of host time per launch against
2.8-3.6 us for CompiledKernel.run alone; at decode shapes host time is the call's cost.
LeanKernel lets Triton's path launch (and compile) the first call of a specialization, keeps the
CompiledKernel it returns, and calls CompiledKernel.run itself on later calls of the same
specialization.

The key decides which kept kernel a call may reuse, so it is at least as fine as Triton's own
(device, specialization, options); coarser would launch a kernel compiled for other inputs (one
that assumes a 16-byte aligned pointer gives wrong results on a misaligned one). It holds:
- the current device index, and the debug flags and instrumentation mode Triton adds to the options;
- how the call binds (number of positional arguments, keyword names in order), and each argument's
  exact Python type, checked on every call against the types of the binding's first call;
- per tensor: its dtype and whether data_ptr() is a multiple of 16;
- per int: == 1, a multiple of 16, fits int32, fits int64 (Triton's constexpr 1, "D", i32/i64/u64);
- per constexpr argument and per launch option (num_warps, num_stages, ...): its value;
- per float, bool and None: its type alone, which is all Triton specializes on.
do_not_specialize and do_not_specialize_on_alignment are not consulted: the key keeps those facets
anyway, which may cost an extra entry, never a wrong launch.

Triton's own path runs whenever the lean one could not promise the same launch: the first call of a
key; a grid given as a callable; pre-run hooks; launch hooks (knobs.runtime.launch_enter_hook or
launch_exit_hook holding a function); JITFunction.run replaced by someone (a profiler, a launch
counter); a global the kernel read that changed since (Triton raises); an argument type the key
does not know (tuples, tensor descriptors, Tensor subclasses other than Parameter); a backend
without Triton's native tensor specialization (not CUDA); a Triton version whose launch convention
was not checked (CHECKED_TRITON). Under TRITON_INTERPRET=1 kernels are not JITFunctions and
install() leaves them as they are.

The launcher's own host code pays too: triton.cdiv and triton.next_power_of_2 are
ConstexprFunctions in Triton 3.6, ~5 us a call from host code on a slow CPU for a line of
arithmetic. host_helpers() gives the module a `triton` whose two helpers run the same Python
function directly for int arguments (Triton's for anything else).
"""

import functools
import os
from types import CodeType, ModuleType
from typing import Any

import torch
import triton

# CompiledKernel.run's argument order, the layout of JITFunction.device_caches and the
# specialization rules above are those of these Triton versions; elsewhere nothing is replaced.
CHECKED_TRITON = ("3.6",)
ACTIVE = ".".join(triton.__version__.split(".")[:2]) in CHECKED_TRITON
# More specializations than this per (kernel, binding) are launched by Triton's path.
MAX_ENTRIES = 256
# Tests set it: every lean launch first asks Triton's binder which compiled kernel Triton would
# launch, and raises if it is not the one the key found.
CHECK = False

# On unless switched off (KERNELGEN_OPS_LEAN=0, or set_enabled(False)): every piece is tested on
# CPU against Triton's own binder, and on the H200 (generated/tests/test_launch.py, -m gpu:
# results equal to Triton's path per operator and dtype, CUDA-graph capture, torch.compile,
# the current stream) on 2026-12-01.
_enabled = os.environ.get("KERNELGEN_OPS_LEAN", "1") != "0"
_UNBUILT = object()
_MISSING = object()

if ACTIVE:  # the names below exist in the checked versions; other versions never use them
    from triton import knobs
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.jit import JITFunction, KernelInterface, compute_cache_key

    _TRITON_RUN = JITFunction.run
    _HookChain = type(knobs.runtime.launch_enter_hook)

# What JITFunction.run asks the driver (torch.cuda.current_device, _cuda_getCurrentRawStream),
# minus torch's lazy-init check: a lean launch follows a launch by Triton in this process, so CUDA
# is initialized. The stream is read on every call, so a launch goes where the caller's current
# stream (a side stream, a graph capture) is.
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda index: torch.cuda.current_stream(index).cuda_stream
)


@functools.cache
def one_device() -> bool:
    """The process sees one CUDA device or none: then the current device is always the same, and
    a launch plan or a call's key need not ask for it (0.09 us a call on the H200's host, where
    the stream getter takes 0.11 more; scripts/host_floor.py). Asked when the first plan or key
    is made, after CUDA is in use: device_count() is cached by torch after that."""
    return not torch.cuda.is_available() or torch.cuda.device_count() <= 1


def set_enabled(enabled: bool) -> None:
    """Lean launches on (the default) or off: off, every launch goes through JITFunction.run."""
    global _enabled
    _enabled = bool(enabled)


def enabled() -> bool:
    return _enabled


def install(namespace: dict[str, Any]) -> None:
    """Put a LeanKernel in place of each @triton.jit kernel of `namespace` (a module's globals)
    that no kernel of it calls: Triton compiles a call to another kernel by looking the callee up
    by name, and must find the JITFunction there."""
    if not ACTIVE:
        return
    kernels = {name: v for name, v in namespace.items() if type(v) is JITFunction}
    read = set().union(*(_names(k.fn.__code__) for k in kernels.values()))
    for name, kernel in kernels.items():
        if name not in read:
            namespace[name] = LeanKernel(kernel)


def host_helpers(namespace: dict[str, Any]) -> None:
    """Give a launcher's host code a `triton` whose cdiv and next_power_of_2 cost what their
    arithmetic costs. In Triton 3.6 both are ConstexprFunctions: called from host code they
    unwrap constexprs first, 5 us a call on CPU against 0.2-0.6 us for the same Python function
    (`.fn`), and a launcher calls them on every call. Ints in, the same function runs; anything
    else, or lean launches off, Triton's own. Left alone when a kernel of the module reads the
    global `triton` (Triton checks a kernel's globals on launch, and would see it changed), or
    when a kernel is not a JITFunction under its wrappers (interpreted, or of a kind unknown
    here), since what it reads is not known."""
    if not ACTIVE or namespace.get("triton") is not triton:
        return
    read: set[str] = set()
    for value in namespace.values():
        if not isinstance(value, KernelInterface):
            continue
        while isinstance(value, KernelInterface) and not isinstance(value, JITFunction):
            value = getattr(value, "fn", None)  # an Autotuner's or Heuristics' kernel
        if not isinstance(value, JITFunction):
            return
        read |= _names(value.fn.__code__)
    if "triton" not in read:
        namespace["triton"] = _HOST_TRITON


class _HostTriton(ModuleType):
    """triton as a launcher's host code sees it: every attribute is triton's but two."""

    def __getattr__(self, name: str) -> Any:
        return getattr(triton, name)

    @staticmethod
    def cdiv(x: Any, y: Any) -> Any:
        if _enabled and type(x) is int and type(y) is int:
            return _CDIV(x, y)
        return triton.cdiv(x, y)

    @staticmethod
    def next_power_of_2(n: Any) -> Any:
        if _enabled and type(n) is int:
            return _NEXT_POW2(n)
        return triton.next_power_of_2(n)


_HOST_TRITON = _HostTriton("triton")
# The plain functions under the ConstexprFunctions (Python functions elsewhere: themselves).
_CDIV = getattr(triton.cdiv, "fn", triton.cdiv)
_NEXT_POW2 = getattr(triton.next_power_of_2, "fn", triton.next_power_of_2)


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


class LeanKernel:
    """One launched kernel: `kernel[grid](*args, **kwargs)` launches lean where it can and through
    Triton where it cannot; every other attribute is the JITFunction's (`.jit`)."""

    def __init__(self, jit: "JITFunction") -> None:
        self.jit = jit
        # (positional count, *keyword names) -> _Binding, or None: that binding is never lean
        self._bindings: dict[tuple, _Binding | None] = {}

    def __getattr__(self, name: str) -> Any:
        if name == "jit":  # not set yet (a copy being made): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.jit, name)

    def __repr__(self) -> str:
        return f"LeanKernel({self.jit!r})"

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args, **kwargs: self._launch(grid, args, kwargs)

    def _launch(self, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        jit = self.jit
        binding = self._bindings.get((len(args), *kwargs))
        # The conditions under which JITFunction.run would do nothing the lean launch skips.
        # Inlined: this is the per-call path.
        if (
            _enabled
            and binding is not None
            and binding.entries
            and (type(grid) is tuple or type(grid) is list)
            and not jit.pre_run_hooks
            and JITFunction.run is _TRITON_RUN
        ):
            enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
            if (
                type(enter) is _HookChain
                and not enter.calls
                and type(leave) is _HookChain
                and not leave.calls
            ):
                device = _current_device()
                found = binding.key(device, args, kwargs)
                if found is not None:
                    entry = binding.entries.get(found[0])
                    if entry is not None and (not jit.used_global_vals or _globals_kept(jit)):
                        kernel, run, function, metadata = entry
                        if CHECK:
                            _check(jit, device, args, kwargs, kernel)
                        n = len(grid)
                        # Empty hook chains: no launch metadata, nothing to call (what Triton's
                        # launcher does with the empty chains, minus building the metadata).
                        run(
                            grid[0],
                            grid[1] if n > 1 else 1,
                            grid[2] if n > 2 else 1,
                            _current_stream(device),
                            function,
                            metadata,
                            None,
                            None,
                            None,
                            *found[1],
                        )
                        return kernel
        return self._through_triton(grid, args, kwargs)

    def _through_triton(self, grid: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        kernel = self.jit.run(*args, grid=grid, warmup=False, **kwargs)
        if _enabled and isinstance(kernel, CompiledKernel) and kernel.function is not None:
            self._keep(kernel, args, kwargs)
        return kernel

    def _keep(self, kernel: "CompiledKernel", args: tuple, kwargs: dict[str, Any]) -> None:
        """Remember the kernel Triton just launched for these arguments, where the key can say
        when a later call may reuse it."""
        layout = (len(args), *kwargs)
        binding = self._bindings.get(layout, _UNBUILT)
        if binding is _UNBUILT:
            binding = self._bindings[layout] = _Binding.build(self.jit, args, kwargs)
        if binding is None or len(binding.entries) >= MAX_ENTRIES:
            return
        device = _current_device()
        caches = self.jit.device_caches.get(device)
        # (kernel_cache, kernel_key_cache, target, backend, binder): the key's tensor facets are
        # Triton's only where the backend specializes tensors natively (data_ptr() % 16).
        backend = caches[3] if caches is not None else None
        if getattr(backend, "supports_native_tensor_specialization", False) is not True:
            return
        found = binding.key(device, args, kwargs)
        if found is not None:
            entry = (kernel, kernel.run, kernel.function, kernel.packed_metadata)
            binding.entries[found[0]] = entry


def _globals_kept(jit: "JITFunction") -> bool:
    """JITFunction.run's check that the globals a kernel read when compiled still hold the same
    values (it raises otherwise; the caller then takes Triton's path, which raises)."""
    for (name, _), (value, scope) in jit.used_global_vals.items():
        if scope.get(name, _MISSING) != value:
            return False
    return True


def _check(
    jit: "JITFunction", device: int, args: tuple, kwargs: dict[str, Any], kernel: Any
) -> None:
    kernel_cache, key_cache, _, _, binder = jit.device_caches[device]
    options = dict(kwargs)  # what JITFunction.run adds before it binds
    options["debug"] = options.get("debug", jit.debug) or knobs.runtime.debug
    options["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    _, specialization, options = binder(*args, **options)
    if kernel_cache.get(compute_cache_key(key_cache, specialization, options)) is not kernel:
        raise AssertionError(
            f"kernelgen_ops: a lean launch of {jit!r} would run another kernel than Triton "
            f"chooses for {specialization} {options}"
        )


# ---- the key, generated per binding -------------------------------------------------------------

_INT32 = "-2147483648 <= {v} <= 2147483647"
_INT64 = "-9223372036854775808 <= {v} <= 9223372036854775807"
# Per exact type of a runtime (not constexpr) argument: the facets Triton specializes it on.
_RUNTIME_FACETS = {
    torch.Tensor: ("{v}.dtype", "not {v}.data_ptr() & 15"),
    torch.nn.Parameter: ("{v}.dtype", "not {v}.data_ptr() & 15"),
    int: ("{v} == 1", "not {v} & 15", _INT32, _INT64),
    float: (),
    bool: (),
    type(None): (),
}
# Types whose value is the facet (constexpr arguments, launch options): hashable, compared by value.
_VALUE_TYPES = (int, float, bool, str, type(None))


class _Binding:
    """One way a call binds to a kernel's parameters (positional count, keyword names in order):
    `key(device, args, kwargs)` gives (key, every argument in signature order) or None when an
    argument's type differs from this binding's first call; `entries` maps key -> kept kernel."""

    def __init__(self, key: Any, source: str) -> None:
        self.key = key
        self.source = source  # the generated key function, for tests and debugging
        self.entries: dict[tuple, tuple] = {}

    @staticmethod
    def build(jit: "JITFunction", args: tuple, kwargs: dict[str, Any]) -> "_Binding | None":
        """The binding of this call, or None where the key cannot follow Triton's binding."""
        params = jit.params
        if len(args) > len(params) or any(p.name in kwargs for p in params[: len(args)]):
            return None  # too many arguments, or one given twice: Triton raises
        scope: dict[str, Any] = {"_jit": jit, "_knobs": knobs}
        body = [f"    {', '.join(f'a{i}' for i in range(len(args)))}, = args"] if args else []
        guards: list[str] = []
        facets = [
            "device",
            "_jit.debug",
            "_knobs.runtime.debug",
            "_knobs.compilation.instrumentation_mode",
        ]
        full: list[str] = []
        values: list[tuple[str, Any, bool]] = []  # (variable, first value, is a value facet)
        names = {p.name for p in params}
        for i, p in enumerate(params):
            if i < len(args):
                var, value = f"a{i}", args[i]
            elif p.name in kwargs:
                var, value = f"k{i}", kwargs[p.name]
                body.append(f"    {var} = kwargs[{p.name!r}]")
            elif p.has_default:  # the same value on every call of this binding: no facet
                var = f"d{i}"
                scope[var] = p.default
                full.append(var)
                continue
            else:
                return None  # a missing argument: Triton raises
            full.append(var)
            values.append((var, value, p.is_constexpr))
        for j, name in enumerate(k for k in kwargs if k not in names):  # launch options
            var = f"o{j}"
            body.append(f"    {var} = kwargs[{name!r}]")
            values.append((var, kwargs[name], True))
        for var, value, by_value in values:
            kind = type(value)
            if by_value:
                if kind not in _VALUE_TYPES:
                    return None
                facets.append(var)
            elif kind in _RUNTIME_FACETS:
                facets += [f.format(v=var) for f in _RUNTIME_FACETS[kind]]
            else:
                return None
            scope[f"t_{var}"] = kind
            guards.append(f"type({var}) is t_{var}")
        body.append(f"    if not ({' and '.join(guards) or 'True'}):")
        body.append("        return None")
        body.append(f"    return ({', '.join(facets)},), ({''.join(v + ', ' for v in full)})")
        source = "def key(device, args, kwargs):\n" + "\n".join(body) + "\n"
        exec(compile(source, f"<kernelgen_ops lean key of {jit!r}>", "exec"), scope)
        return _Binding(scope["key"], source)
