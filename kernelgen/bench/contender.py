"""A contender's module inside the benchmark worker: loaded with its entry function, launched the
way kernelgen_ops ships it where the library takes it, and its kernels' compile facts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from kernelgen.bench.timing import describe_error
from kernelgen.errors import KernelgenError
from kernelgen.records import CompileFacts
from kernelgen.spec import load_module


def _lean_kernel_class() -> type | None:
    try:
        from kernelgen_ops._launch import LeanKernel
    except Exception:  # the library is not installed here, or fails to import
        return None
    return LeanKernel


def as_shipped(module: ModuleType, fn: Callable[..., Any], op: str) -> Callable[..., Any] | None:
    """The module's entry launched the way kernelgen_ops launches a promoted kernel: its kernels
    as lean launches (kernelgen_ops/_launch.py) and its repeat calls replayed from a launch plan
    (_plans.py). The kernels are the same, so device times are too; host times then are what the
    library would ship, which is what its dispatch table compares with torch at launch-bound
    shapes. None where the library is not importable or does not take the module: it then runs
    as written."""
    try:
        from kernelgen_ops import _launch, _plans
    except Exception:  # not installed in this environment, or broken: measure as written
        return None
    if not _launch.ACTIVE or not _launch.enabled():
        return None
    namespace = vars(module)
    _launch.install(namespace)
    _launch.host_helpers(namespace)
    if _plans.replays() and _plans.plannable(namespace, fn):
        return _plans.Planned(fn, namespace)  # type: ignore[arg-type]
    return namespace.get(op, fn)


def load_entry(path: str, name: str, op: str) -> tuple[ModuleType | None, Callable[..., Any] | str]:
    """The module and its entry function, or the module (if any) and why it cannot run."""
    try:
        module = load_module(Path(path), name)
    except KernelgenError as e:  # SpecError names the file and line already
        return None, str(e)
    except Exception as e:  # whatever the module does at import, one line
        return None, describe_error(e)
    fn = getattr(module, op, None)
    if not callable(fn):
        return module, f"{path}: no function named {op!r}"
    return module, fn


def compile_facts(module: ModuleType) -> list[CompileFacts]:
    """Registers, spills, shared memory, warps and stages of every compiled specialization of the
    module's @triton.jit kernels (autotune/heuristics wrappers unwrapped). Call after a launch:
    registers and spills are known only once a kernel has been loaded onto the device."""
    from triton.runtime.jit import JITFunction

    lean = _lean_kernel_class()
    jits: list[JITFunction] = []
    for obj in vars(module).values():
        if lean is not None and isinstance(obj, lean):  # launched as kernelgen_ops ships it
            obj = obj.jit
        seen: set[int] = set()
        # Autotuner and Heuristics keep the wrapped kernel in .fn; JITFunction.fn is the Python
        # function, so the isinstance test comes first.
        while not isinstance(obj, JITFunction) and hasattr(obj, "fn") and id(obj) not in seen:
            seen.add(id(obj))
            obj = obj.fn
        if isinstance(obj, JITFunction) and all(obj is not j for j in jits):
            jits.append(obj)
    facts: list[CompileFacts] = []
    for jit in jits:
        # Iterate, never index: device_caches is a defaultdict that would build a binder.
        for kernel_cache, *_ in list(jit.device_caches.values()):
            for compiled in list(kernel_cache.values()):
                if hasattr(compiled, "result"):  # an async-compile future
                    compiled = compiled.result()
                meta = getattr(compiled, "metadata", None)
                facts.append(
                    CompileFacts(
                        kernel=jit.fn.__name__,
                        registers=_int(getattr(compiled, "n_regs", None)),
                        spills=_int(getattr(compiled, "n_spills", None)),
                        shared_bytes=_int(getattr(meta, "shared", None)),
                        num_warps=_int(getattr(meta, "num_warps", None)),
                        num_stages=_int(getattr(meta, "num_stages", None)),
                    )
                )
    return facts


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def file_sha256(path: str) -> str:
    """The digest the verifier gives the file's source; empty when it cannot be read."""
    from kernelgen.verify import sha256

    try:
        return sha256(Path(path).read_text(errors="replace"))
    except OSError:
        return ""
