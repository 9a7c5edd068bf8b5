"""Route torch calls to the generated kernels where the result is the same, and only there.

    kernelgen_ops.enable()                      # softmax and rms_norm calls go to the kernels
    kernelgen_ops.enable(exclude=["rms_norm"])  # only softmax
    kernelgen_ops.disable()                     # torch's own functions are back
    with kernelgen_ops.use(include=["softmax"]): ...   # for one block, restored on exit

enable() patches torch.softmax, torch.nn.functional.softmax, torch.Tensor.softmax and
torch.nn.functional.rms_norm (so nn.Softmax and nn.RMSNorm follow) with wrappers that send a call
to the kernel only when it computes the same thing torch would: the last dimension; a float16,
bfloat16 or float32 tensor on CUDA (on CPU under TRITON_INTERPRET=1, float16 and float32 only:
the interpreter's bf16 arithmetic is not the GPU's); no dtype= cast; no gradient needed; no
autocast (which computes in float32 and returns float32); plain tensors only (not vmap/functorch
wrappers, fake tensors or other subclasses). Every other call goes to the function that was there
before, unchanged. While tracing (torch.compile, torch.jit.trace, torch.fx) the wrappers step
aside too, so the tracer records torch's op and Inductor generates and fuses its own kernel; to
put a generated kernel into a compiled graph, call kernelgen_ops.<op>, a torch custom op. So do
they under a __torch_function__ mode (torch.set_default_device installs one): the mode sees the
call as it would without routing.

torch.jit.script cannot compile these wrappers: call disable() before scripting.
"""

import contextlib
import functools
import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
import torch.nn.functional as F

from . import _runtime

_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32})
# nn.Parameter is a plain tensor for this purpose (an RMSNorm weight is one); FakeTensor,
# FunctionalTensor, DTensor and other subclasses are not.
_PLAIN = frozenset({torch.Tensor, torch.nn.Parameter})
_MISSING = object()
_device_index = _runtime._device_index
_dynamo_compiling = torch.compiler.is_dynamo_compiling
_function_mode = torch._C._is_torch_function_mode_enabled
_functorch_active: Callable[[], bool] = getattr(
    torch._C, "_are_functorch_transforms_active", lambda: False
)


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


_DECLINED = object()  # a kernel call's answer "not this call": the function before takes it


@dataclass(frozen=True)
class _Entry:
    """One torch entry point of an operator, as its route is generated: the route's signature
    (`params`), the call that passes it on unchanged (`forward`), the kernel's arguments taken
    from it (`kernel`) and a condition on the rest (`kernel_if`); what says that a
    __torch_function__ (a mode, or an argument's override) claims the call (`claimed`: the
    route then reads nothing of the tensor); and what torch's path runs (`torch_path`, lines;
    default: `forward`), which may be the entry point's own body, shorter.

    A route's signature is its entry point's: torch's own for its Python functions (F.softmax,
    F.rms_norm; a test compares them), the one torch's C functions parse for the forms with an
    int dim (torch.softmax, Tensor.softmax). A name that is not there raises the TypeError that
    torch's would. No **kwargs: packing them costs 0.2 us a call, as much as the rest of the
    route (a 2-core CPU, 2026-12-04)."""

    owner: object
    attr: str
    params: str
    forward: str
    kernel: str
    kernel_if: str = ""
    claimed: str = "_function_mode()"
    torch_path: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """'torch.softmax', 'torch.nn.functional.softmax', 'torch.Tensor.softmax', ..."""
        owner = self.owner
        where = (
            owner.__name__
            if isinstance(owner, ModuleType)
            else f"{owner.__module__}.{owner.__qualname__}"
        )
        return f"{where}.{self.attr}"


# A route is a function generated per entry point, since at the decode sizes where torch's op
# takes the call its few steps are the route's whole cost, a measurable part of torch's own
# 10 us on the H200's host: named parameters (no *args or **kwargs to pack and unpack), the
# kept answer for the shape one lookup, no further frame. The checks before it:
# - under dynamo, aside before any lookup: it cannot trace torch._C's device getter (on the
#   H200 that broke fullgraph=True), and it would guard the graph on the kept answers (a
#   recompile per new shape kept). is_dynamo_compiling is one frame where is_compiling is two;
#   export outside dynamo (which is_compiling also covers) is caught by _tracing before a kernel;
# - under a __torch_function__ mode: the mode would see our reads of the tensor (x.shape) as
#   calls of its own;
# - a tensor subclass (FakeTensor, DTensor, ...) never reaches a kernel: torch's function takes
#   it, and whatever it overrides.
# Where torch's op takes the call (the decode sizes, a device without evidence) the call goes
# straight to it, before the checks only a call to the kernel needs; it only ever goes to the
# function that was there before, which every call the kernel may not take gets anyway, so the
# order of the checks changes no answer.
_ROUTE = """def {name}({params}):
    if (type({x}) is _T or type({x}) is _P) and not (_dynamo() or {claimed}):
        to_torch = kept.get({key})
        if to_torch is None:
            to_torch = routed_to_torch({x}.shape)
        if to_torch:
            {torch_path}
        if {kernel_if}not _tracing():
            answer = kernel({kernel})
            if answer is not _DECLINED:
                return answer
    return original({forward})
"""


def _route(op: str, entry: _Entry, original: Callable, kernel: Callable) -> Callable:
    """The route of one entry point of `op` standing in for `original`: `kernel(...)` (the
    entry's kernel arguments) runs the kernel where it may take the call and says _DECLINED
    where not; every other call goes to `original`, unchanged. Its source is kept as the
    function's `source`."""
    x = entry.params.split(",")[0]
    key = f"{x}.shape" if _runtime.one_table() else f"(_device_index(), {x}.shape)"
    torch_path = entry.torch_path or (f"return original({entry.forward})",)
    source = _ROUTE.format(
        name=op,
        params=entry.params,
        x=x,
        key=key,
        claimed=entry.claimed,
        torch_path="\n            ".join(torch_path),
        forward=entry.forward,
        kernel=entry.kernel,
        kernel_if=f"{entry.kernel_if} and " if entry.kernel_if else "",
    )
    scope = {
        "_dynamo": _dynamo_compiling,
        "_function_mode": _function_mode,
        "_T": torch.Tensor,
        "_P": torch.nn.Parameter,
        "_device_index": _device_index,
        "_tracing": _tracing,
        "_DECLINED": _DECLINED,
        "kept": _runtime.ROUTED_KEPT.setdefault(op, {}),
        "routed_to_torch": functools.partial(_runtime.routed_to_torch, op),
        "original": original,
        "kernel": kernel,
        "torch": torch,
        "_tensor_softmax": _tensor_softmax,
        "_has_torch_function_variadic": torch._C._has_torch_function_variadic,
    }
    exec(compile(source, f"<kernelgen_ops route {entry.name}>", "exec"), scope)
    route = scope[op]
    route.__qualname__ = op
    route.__doc__ = original.__doc__
    route.__wrapped__ = original  # type: ignore[attr-defined]
    route.source = source  # type: ignore[attr-defined]
    return route


_tensor_softmax = torch._C.TensorBase.softmax  # torch's own method, under any patch of Tensor's


def _softmax_kernel(kernel: Callable[[], Any]) -> Callable:
    def call(x: Any, dim: Any, dtype: Any) -> Any:
        if (
            dtype is None
            and type(dim) is int
            and _routable(x)
            and (dim == -1 or dim == x.dim() - 1)
        ):
            return kernel().fast(x)
        return _DECLINED

    return call


# torch's rms_norm computes in float32 for these dtypes and, with eps=None, uses float32's
# machine epsilon (opmath epsilon) whatever the input dtype; the kernel computes in float32 too.
_DEFAULT_EPS = torch.finfo(torch.float32).eps


def _rms_norm_kernel(kernel: Callable[[], Any]) -> Callable:
    def call(x: Any, shape: Any, w: Any, eps: Any) -> Any:
        eps = _DEFAULT_EPS if eps is None else eps
        if (
            _routable(x)
            and _routable(w)
            and w.dtype == x.dtype
            and w.device == x.device
            and w.shape == x.shape[-1:]
            and isinstance(shape, (list, tuple, torch.Size))
            and tuple(shape) == (x.shape[-1],)
            and type(eps) in (float, int)
        ):
            return kernel().fast(x, w, float(eps))
        return _DECLINED

    return call


def _public_call(op: str) -> Callable[[], Any]:
    """The op's public call (kernelgen_ops._<op>_call, _calls.py), whose repeat path answers the
    contract and the dispatch once per key and replays the launch plan. A routed call reaches it
    only where the route's table answered the kernel for the shape (the unrouted table then
    answers the kernel too: it counts no route). Looked up on every routed call (one attribute
    read), as the public call looks up the module's launcher, so either can be spied on."""
    package = importlib.import_module("kernelgen_ops")
    return lambda: getattr(package, f"_{op}_call")


# The torch entry points of each routed operator.
ENTRIES = {
    "softmax": (
        _Entry(
            torch,
            "softmax",
            "input, dim, dtype=None, *, out=None",
            "input, dim, dtype=dtype, out=out",
            "input, dim, dtype",
            "out is None",
            torch_path=(
                "if dtype is None and out is None:",
                "    return original(input, dim)",
                "return original(input, dim, dtype=dtype, out=out)",
            ),
        ),
        # F.softmax's body, for a plain tensor and no __torch_function__ mode, is
        # input.softmax(dim) (dim given, no dtype): torch's own method here, since
        # Tensor.softmax is routed too and the call would pay the route twice.
        _Entry(
            F,
            "softmax",
            "input, dim=None, _stacklevel=3, dtype=None",
            "input, dim, _stacklevel, dtype",
            "input, dim, dtype",
            torch_path=(
                "if dtype is None and dim is not None:",
                "    return _tensor_softmax(input, dim)",
                "return original(input, dim, _stacklevel, dtype)",
            ),
        ),
        _Entry(
            torch.Tensor,
            "softmax",
            "self, dim, dtype=None",
            "self, dim, dtype=dtype",
            "self, dim, dtype",
            torch_path=(
                "if dtype is None:",
                "    return original(self, dim)",
                "return original(self, dim, dtype=dtype)",
            ),
        ),
    ),
    # F.rms_norm's body, where no __torch_function__ claims the call, is torch.rms_norm(...).
    "rms_norm": (
        _Entry(
            F,
            "rms_norm",
            "input, normalized_shape, weight=None, eps=None",
            "input, normalized_shape, weight, eps",
            "input, normalized_shape, weight, eps",
            # What F.rms_norm asks first, asked once for both tensors and the mode.
            claimed="_has_torch_function_variadic(input, weight)",
            torch_path=("return torch.rms_norm(input, normalized_shape, weight, eps)",),
        ),
    ),
}
_KERNELS = {"softmax": _softmax_kernel, "rms_norm": _rms_norm_kernel}


def _targets(op: str) -> list[tuple[object, str, Callable[[Callable], Callable]]]:
    """(owner, attribute, make_route(original)) for each torch entry point of an op."""
    kernel = _KERNELS[op](_public_call(op))
    return [
        (e.owner, e.attr, lambda original, e=e: _route(op, e, original, kernel))
        for e in ENTRIES.get(op, ())
    ]


ROUTABLE = ("softmax", "rms_norm")

# (owner, attribute) -> (what owner.__dict__ held before, our wrapper)
_patches: dict[tuple[object, str], tuple[object, Callable]] = {}
_routed: dict[str, list[tuple[object, str]]] = {}


def _present() -> list[str]:
    return [op for op in ROUTABLE if op in _runtime.manifest()["ops"]]


def _select(include: Iterable[str] | None, exclude: Iterable[str] | None) -> list[str]:
    present = _present()
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
    when asked). Built while our wrappers stand in torch's place, it holds them instead of
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
        wrapper = make(getattr(owner, attr))
        setattr(owner, attr, wrapper)
        _patches[(owner, attr)] = (before, wrapper)
        keys.append((owner, attr))
    _routed[op] = keys


def _unpatch(op: str) -> None:
    for key in _routed.pop(op):
        owner, attr = key
        before, wrapper = _patches.pop(key)
        # Someone patched over us since: their function stays, and it still calls ours.
        if vars(owner).get(attr) is not wrapper:
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
