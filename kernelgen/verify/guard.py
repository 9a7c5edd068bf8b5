"""Run-time provenance: which aten ops and which Triton kernels ran during one candidate call.

Two instruments, installed in the sandboxed process before the candidate is imported:
- a launch recorder on Triton's JIT (and interpreter) `run`, which notes every kernel launch and
  whether the kernel was defined in the candidate's file;
- a dispatch guard (TorchDispatchMode) that records every aten op the launcher runs and fills each
  tensor it allocates with the call's fill (fills.py: a poison, NaN among others, or plausible
  values), so an output the kernel never writes shows instead of whatever the allocator had
  lying around.

The guard is paused only while Triton's interpreter copies a launch's tensor arguments to the host
and back (its own torch work). Everything else inside a launch stays in view: a grid callable that
computes with the launcher's tensors, and, in the interpreter, a kernel body that calls methods of
a `tl.constexpr` argument (which arrives there as the real torch tensor).
A dispatch mode sees only its own thread; threads are forbidden statically and checked here too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kernelgen.verify import fills

aten = torch.ops.aten

# The launcher may allocate, take views and make layout copies; everything else is compute that
# belongs in a kernel. Names are aten overload packets.
_ALLOCATION = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
_ZEROED = {"zeros", "zeros_like", "new_zeros", "zero_"}
_VIEWS = {
    "view",
    "_unsafe_view",
    "reshape",
    "as_strided",
    "t",
    "transpose",
    "permute",
    "unsqueeze",
    "squeeze",
    "expand",
    "slice",
    "select",
    "split",
    "split_with_sizes",
    "chunk",
    "unbind",
    "narrow",
    "alias",
    "detach",
    "view_as",
    "flatten",
    "unflatten",
    "lift_fresh",
    "_reshape_alias",
    "sym_size",
    "sym_stride",
    "sym_numel",
    "sym_storage_offset",
    "is_contiguous",
    "dim",
    "size",
    "stride",
    "numel",
    "unfold",
}
_COPIES = {"clone", "copy_", "contiguous", "_to_copy", "_copy_from", "_copy_from_and_resize"}
ALLOWED = _ALLOCATION | _ZEROED | _VIEWS | _COPIES


@dataclass
class CallLog:
    """What one guarded call did."""

    aten_ops: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    launches: list[str] = field(default_factory=list)
    foreign_launches: list[str] = field(default_factory=list)
    new_threads: list[str] = field(default_factory=list)


class _DispatchGuard(TorchDispatchMode):
    def __init__(self, log: CallLog, draw: fills.Draw, casts_allowed: bool):
        super().__init__()
        self.log = log
        self.draw = draw
        self.casts_allowed = casts_allowed

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if _Recorder.paused:
            return out
        name = func.overloadpacket.__name__
        self.log.aten_ops.append(name)
        if name not in ALLOWED:
            self.log.forbidden.append(name)
        elif not self.casts_allowed and _changes_dtype(name, args, kwargs):
            # A dtype cast in the launcher is arithmetic done outside the kernel: `.to(dtype)`,
            # `copy_` from another dtype, and item assignment (a `copy_` into a view) alike.
            self.log.forbidden.append(f"{name} (dtype cast)")
        elif name in _ALLOCATION and isinstance(out, torch.Tensor):
            fills.fill(out, self.draw)
        return out


def _changes_dtype(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    first = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if first is None:
        return False
    if name == "_to_copy":
        dtype = kwargs.get("dtype")
        return dtype is not None and dtype != first.dtype
    if name in ("copy_", "_copy_from", "_copy_from_and_resize"):
        src = args[1] if len(args) > 1 else None
        return isinstance(src, torch.Tensor) and src.dtype != first.dtype
    return False


class _Recorder:
    """Patches Triton's launch entry points once per process."""

    installed = False
    paused = 0
    candidate_file: str | None = None
    log: CallLog | None = None

    @classmethod
    def install(cls, candidate_file: Path | None) -> None:
        if candidate_file is not None:
            cls.candidate_file = str(candidate_file.resolve())
        if cls.installed:
            return
        from triton.runtime import jit

        targets = [jit.JITFunction]
        try:
            from triton.runtime import interpreter

            targets.append(interpreter.InterpretedFunction)
        except ImportError:  # pragma: no cover - every Triton we support has it
            pass
        for klass in targets:
            klass.run = cls._wrap(klass.run)  # type: ignore[method-assign]
        try:
            from triton.runtime.interpreter import GridExecutor

            for name in ("_init_args_hst", "_restore_args_dev"):
                setattr(GridExecutor, name, cls._paused(getattr(GridExecutor, name)))
        except ImportError:  # pragma: no cover - every Triton we support has it
            pass
        cls.installed = True

    @classmethod
    def _paused(cls, method):  # noqa: ANN001, ANN206
        """The interpreter's own copies of a launch's arguments to the host and back."""

        def paused(self, *args, **kwargs):  # noqa: ANN001, ANN202
            cls.paused += 1
            try:
                return method(self, *args, **kwargs)
            finally:
                cls.paused -= 1

        return paused

    @classmethod
    def _wrap(cls, run):  # noqa: ANN001, ANN206
        def recorded_run(self, *args, **kwargs):  # noqa: ANN001, ANN202
            fn = getattr(self, "fn", None)
            code = getattr(fn, "__code__", None)
            name = getattr(fn, "__name__", repr(fn))
            if cls.log is not None and not kwargs.get("warmup", False):
                mine = code is not None and str(Path(code.co_filename).resolve()) == (
                    cls.candidate_file
                )
                (cls.log.launches if mine else cls.log.foreign_launches).append(name)
            return run(self, *args, **kwargs)

        return recorded_run


def install(candidate_file: Path | None) -> None:
    """Put the launch recorder in place; call before the candidate is imported."""
    _Recorder.install(candidate_file)


def set_candidate(candidate_file: Path) -> None:
    """Whose kernels count as the candidate's own: those defined in this file."""
    _Recorder.candidate_file = str(candidate_file.resolve())


@contextmanager
def guarded(fill: str = "nan", casts_allowed: bool = False, seed: int = 0) -> Iterator[CallLog]:
    """Record the aten ops, kernel launches and new threads of the enclosed call; fill what
    it allocates with the family `fill` (fills.py), its values drawn from `seed`."""
    log = CallLog()
    before = {t.ident for t in threading.enumerate()}
    _Recorder.log = log
    try:
        with _DispatchGuard(log, fills.Draw(fill, seed), casts_allowed):
            yield log
    finally:
        _Recorder.log = None
        log.new_threads = [t.name for t in threading.enumerate() if t.ident not in before]


def flood_free_memory(device: str, fill: str = "nan", seed: int = 0, megabytes: int = 512) -> None:
    """Fill the device memory the caching allocator will hand out next (stale-memory defence)
    with the family `fill`: fills.flood."""
    fills.flood(device, fill, seed, megabytes)
