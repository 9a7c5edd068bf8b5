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
import importlib
from collections.abc import Callable, Iterable, Iterator
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
_compiling = torch.compiler.is_compiling
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


def _bind(names: tuple[str, ...], args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """Match a call to parameter names; None when it has arguments the route does not know."""
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    return bound


_DECLINED = object()  # a kernel call's answer "not this call": the function before takes it


def _route(
    op: str,
    first: str,
    original: Callable,
    kernel_call: Callable,
    torch_call: Callable | None = None,
) -> Callable:
    """The wrapper of one torch entry point of `op`: `kernel_call(args, kwargs)` runs the kernel
    where it may take the call, and says _DECLINED where not; every other call goes to
    `original`, unchanged.

    The dispatch table's answer comes first, for the call's tensor (its argument `first`): where
    torch's op is the one to take (the decode sizes, a device without evidence) the call goes
    straight to it, before the checks only a call to the kernel needs. A repeat shape's answer
    is one lookup made here, with _runtime.routed_key's key built inline: at those sizes it is
    the route's whole cost. It only ever sends a call to the function that was there before,
    which every call the kernel may not take gets anyway, so the order of the checks changes no
    answer.

    `torch_call(args, kwargs)`, for an entry point that is a Python function of torch's, does
    what `original`'s body does for the common forms of a call, or says _DECLINED. F.softmax's
    body calls Tensor.softmax, which is routed too: without it, a routed F.softmax call would
    pay the route twice."""
    kept = _runtime.ROUTED_KEPT.setdefault(op, {})
    by_device = not _runtime.one_table()

    def route(*args: Any, **kwargs: Any) -> Any:
        # Under dynamo, aside before any lookup: it cannot trace torch._C's device getter (on
        # the H200 that broke fullgraph=True), and it would guard the graph on the kept answers
        # (a recompile per new shape kept). Under a __torch_function__ mode too: the mode would
        # see our reads of the tensor (x.shape) as calls of its own.
        if not (_compiling() or _function_mode()):
            x = args[0] if args else kwargs.get(first)
            if type(x) in _PLAIN:
                shape = x.shape
                to_torch = kept.get((_device_index(), shape) if by_device else shape)
                if to_torch is None:
                    to_torch = _runtime.routed_to_torch(op, shape)
                if to_torch:
                    if torch_call is not None:
                        out = torch_call(args, kwargs)
                        if out is not _DECLINED:
                            return out
                    return original(*args, **kwargs)
            if not _tracing():
                out = kernel_call(args, kwargs)
                if out is not _DECLINED:
                    return out
        return original(*args, **kwargs)

    route.__name__ = route.__qualname__ = op
    route.__doc__ = original.__doc__
    route.__wrapped__ = original  # type: ignore[attr-defined]
    return route


_tensor_softmax = torch._C.TensorBase.softmax  # torch's own method, under any patch of Tensor's
_has_torch_function_unary = torch._C._has_torch_function_unary


def _functional_softmax(args: tuple, kwargs: dict) -> Any:
    """F.softmax(input, dim) or F.softmax(input, dim=dim): its body, for an input no
    __torch_function__ (override or mode) claims, is input.softmax(dim), torch's method here.
    (F.rms_norm's body, torch.rms_norm, costs nothing to skip: 10.69 against 10.66 us per call on
    the H200's host, scripts/host_floor.py, so its route has no such shortcut.)"""
    if kwargs:
        if len(args) != 1 or len(kwargs) != 1:
            return _DECLINED
        dim = kwargs.get("dim")
    elif len(args) == 2:
        dim = args[1]
    else:
        return _DECLINED
    x = args[0]
    if dim is None or _has_torch_function_unary(x):
        return _DECLINED
    return _tensor_softmax(x, dim)


def _softmax_route(
    original: Callable,
    names: tuple[str, ...],
    kernel: Callable[[], Any],
    torch_call: Callable | None = None,
) -> Callable:
    def call(args: tuple, kwargs: dict) -> Any:
        a = _bind(names, args, kwargs)
        if a is not None and a.get("dtype") is None:
            x, dim = a.get(names[0]), a.get("dim")
            if type(dim) is int and _routable(x) and (dim == -1 or dim == x.dim() - 1):
                return kernel().fast(x)
        return _DECLINED

    return _route("softmax", names[0], original, call, torch_call)


# torch's rms_norm computes in float32 for these dtypes and, with eps=None, uses float32's
# machine epsilon (opmath epsilon) whatever the input dtype; the kernel computes in float32 too.
_DEFAULT_EPS = torch.finfo(torch.float32).eps


def _rms_norm_route(original: Callable, kernel: Callable[[], Any]) -> Callable:
    names = ("input", "normalized_shape", "weight", "eps")

    def call(args: tuple, kwargs: dict) -> Any:
        a = _bind(names, args, kwargs)
        if a is None:
            return _DECLINED
        x, w, shape = a.get("input"), a.get("weight"), a.get("normalized_shape")
        eps = a.get("eps")
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

    return _route("rms_norm", names[0], original, call)


def _public_call(op: str) -> Callable[[], Any]:
    """The op's public call (kernelgen_ops._<op>_call, _calls.py), whose repeat path answers the
    contract and the dispatch once per key and replays the launch plan. A routed call reaches it
    only where the route's table answered the kernel for the shape (the unrouted table then
    answers the kernel too: it counts no route). Looked up on every routed call (one attribute
    read), as the public call looks up the module's launcher, so either can be spied on."""
    package = importlib.import_module("kernelgen_ops")
    return lambda: getattr(package, f"_{op}_call")


def _targets(op: str) -> list[tuple[object, str, Callable[[Callable], Callable]]]:
    """(owner, attribute, make_wrapper(original)) for each torch entry point of an op."""
    if op == "softmax":
        k = _public_call("softmax")
        return [
            (torch, "softmax", lambda o: _softmax_route(o, ("input", "dim", "dtype"), k)),
            (
                F,
                "softmax",
                lambda o: _softmax_route(
                    o, ("input", "dim", "_stacklevel", "dtype"), k, _functional_softmax
                ),
            ),
            (torch.Tensor, "softmax", lambda o: _softmax_route(o, ("self", "dim", "dtype"), k)),
        ]
    if op == "rms_norm":
        return [(F, "rms_norm", lambda o: _rms_norm_route(o, _public_call("rms_norm")))]
    return []


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
