"""The candidate's side of verification: a sandboxed process that holds the candidate and nothing
of the judge's. `python -m kernelgen.verify.runner DEVICE REQUEST_FD REPLY_FD`.

It starts warm (torch imported, CUDA initialised, the instruments installed) before it knows which
candidate it will hold, then serves the judge's requests (protocol.py) one at a time: load the
candidate, compile for some argument layouts, call the entry on inputs (lent by CUDA IPC, or from
a file) and hand back what it returns (lent, or saved). It never sees the reference, the ground
truth, the comparisons, the seed or the verdict. The protocol runs over two inherited pipe
descriptors, not stdout, so whatever the candidate prints cannot be read as an answer.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# The judge owns every decision; this process only reports. Keep imports to what serving needs.
from kernelgen.verify.protocol import (
    Call,
    CallLog,
    Compile,
    Exit,
    Failed,
    Leaf,
    Load,
    Reply,
    Request,
    RunnerCosts,
    Shared,
    TensorMeta,
)

GPU_MEMORY_FRACTION = 0.8


def _frontend_error(exc: BaseException) -> bool:
    """Under the interpreter there is no compile step: an error raised by triton.language's own
    checks (a non-constexpr arange, a shape mismatch) is what the GPU compiler would report."""
    cause = exc.__cause__
    if type(exc).__name__ != "InterpreterError" or cause is None:
        return False
    frames = traceback.extract_tb(cause.__traceback__)
    return bool(frames) and "triton/language" in frames[-1].filename.replace("\\", "/")


def _message(exc: BaseException) -> str:
    """One line for the verdict. A Triton CompilationError prints "at L:C:", a source excerpt
    down to a caret and then the error, which a chain of them (one per jit function called,
    each naming its call site) leaves to the innermost: its error and the source line it
    points at are added, since the first line alone ("at 10:12:") tells an agent nothing."""
    from triton.compiler.errors import CompilationError

    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    inner: CompilationError | None = None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CompilationError):
            inner = seen
        seen = seen.__cause__
    if inner is None:
        return first[:500]
    error = inner.error_message or ""
    if not error and inner.__cause__ is not None:
        error = f"{type(inner.__cause__).__name__}: {inner.__cause__}"
    lineno = getattr(inner.node, "lineno", None)
    lines = (inner.src or "").splitlines()
    where = lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""
    detail = f" `{where}`:" if where else ""
    error = " ".join(error.split())
    return f"{first}{detail} {error}".strip()[:500]


def _failed(exc: BaseException, path: Path | None) -> Failed:
    from kernelgen.verify.libdevice import Lacking

    cause: BaseException | None = exc
    while cause is not None:  # not the candidate's failure: the interpreter's (libdevice.py)
        if isinstance(cause, Lacking):
            return Failed(type="InterpreterLacks", message=str(cause))
        cause = cause.__cause__
    line = None
    seen: BaseException | None = exc
    while seen is not None and path is not None:
        for frame in traceback.extract_tb(seen.__traceback__):
            if Path(frame.filename).resolve() == path:
                line = frame.lineno
        seen = seen.__cause__
    return Failed(
        type=type(exc).__name__,
        message=_message(exc),
        line=line,
        frontend=_frontend_error(exc),
    )


class Runner:
    def __init__(self, device: str):
        import torch

        from kernelgen.verify import configs, guard, interpreter, tensors

        self.torch = torch
        self.guard = guard
        self.configs = configs
        self.tensors = tensors
        self.device = device
        self.fn: Any = None
        self.path: Path | None = None
        self.kept: dict[str, list[Any]] = {}
        self.casts_allowed = os.environ.get("KERNELGEN_CASTS_ALLOWED") == "1"
        compile_only = os.environ.get("KERNELGEN_COMPILE_ONLY") == "1"
        if device == "cuda":
            torch.cuda.init()
            # The host cap (RLIMIT_AS) cannot apply to a CUDA process; cap the device memory.
            torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)
            torch.empty(1, device="cuda")
        guard.install(None)
        interpreter.install()
        configs.install(compile_all=compile_only)
        warm_up = os.environ.get("KERNELGEN_RUNNER_WARMUP", "1") == "1"
        if warm_up and not compile_only:  # compilers make no calls
            from kernelgen.verify import warmup

            warmup.run(guard, tensors, device)
        if compile_only:
            gpu = os.environ.get("KERNELGEN_COMPILE_TARGET")
            if gpu:  # a CPU verdict's compile check: the GPU is named, not present
                from kernelgen.verify import target

                target.install(gpu)
            _launch_means_compile()
        import triton  # noqa: F401 - imported before the candidate, like everything it uses

    # ---- requests ----------------------------------------------------------------------------

    def load(self, req: Load) -> Reply:
        import inspect

        from kernelgen.spec import load_module

        self.path = Path(req.path).resolve()
        self.guard.set_candidate(self.path)
        try:
            module = load_module(self.path, "kernelgen_candidate")
        except Exception as e:  # SpecError carries the file and line already
            return Reply(ok=False, error=Failed(type="ContractError", message=str(e)))
        fn = getattr(module, req.entry, None)
        if not callable(fn):
            return Reply(
                ok=False,
                error=Failed(type="ContractError", message=f"no function named {req.entry!r}"),
            )
        params = list(inspect.signature(fn).parameters.values())
        names = [p.name for p in params]
        extra = [p.name for p in params[len(req.arg_names) :] if p.default is p.empty]
        if names[: len(req.arg_names)] != req.arg_names or extra:
            want = ", ".join(req.arg_names)
            return Reply(
                ok=False,
                error=Failed(
                    type="ContractError",
                    message=f"{self.path.name}: {req.entry}({', '.join(names)}) must take the "
                    f"reference's parameters ({want}), and no others without defaults",
                ),
            )
        self.fn = fn
        return Reply(ok=True, spaces=self.configs.register(module))

    def compile(self, req: Compile) -> Reply:
        from contextlib import nullcontext

        from kernelgen import gpulock

        torch = self.torch
        for layout in req.layouts:
            # A compile makes the layout's tensors (and the launcher its outputs) for real: a
            # limit case's are GBs, held as the host's one limit case at a time, like its calls.
            big = self.device == "cuda" and _nbytes(torch, layout) > self.tensors.CACHED_BYTES
            with gpulock.limit_case("compiling ahead at its layout") if big else nullcontext():
                try:
                    args = [_empty_like_meta(torch, a, self.device) for a in layout]
                    self.fn(*args)
                except BaseException as e:  # noqa: BLE001 - reported; the judge decides
                    return Reply(ok=False, error=_failed(e, self.path))
                finally:
                    args = []
                    if big:
                        self._uncache()
        return Reply(ok=True)

    def call(self, req: Call) -> Reply:
        if self.device == "cuda":
            self.torch.cuda.ipc_collect()  # free the outputs the judge has copied and let go
            self._uncache()
        reply = self._call(req)
        if self.device == "cuda":
            self._uncache()  # the call's inputs and scratch, freed with _call's frame
        return reply

    def _uncache(self) -> None:
        self.tensors.give_back_cache()

    def _call(self, req: Call) -> Reply:
        torch, guard, tensors = self.torch, self.guard, self.tensors
        costs = RunnerCosts()
        mark = time.monotonic()
        if req.shared is not None:  # copies of the judge's, in memory of this process's own
            args = [tensors.borrow(a) if isinstance(a, Shared) else a for a in req.shared]
        else:
            assert req.inputs is not None  # the protocol takes one or the other
            args = torch.load(req.inputs, map_location=self.device, weights_only=True)
        self._sync()
        inputs = [a for a in args if isinstance(a, torch.Tensor)]
        log = CallLog()
        cuda_kernels: list[str] | None = None
        start = time.monotonic()
        costs.load = start - mark
        try:
            with torch.no_grad(), self.configs.pinned(req.pin):
                for _ in range(req.repeat):
                    out = None  # the last call's result only; earlier ones are freed first
                    mark = time.monotonic()
                    guard.flood_free_memory(self.device, req.fill, req.fill_seed)
                    self._sync()
                    costs.flood += time.monotonic() - mark
                    if req.profile:
                        out, cuda_kernels, seen = self._profiled(args, req)
                        _merge(log, seen)
                    elif req.guard:
                        with guard.guarded(req.fill, self.casts_allowed, req.fill_seed) as seen:
                            out = self.fn(*args)
                            self._sync()
                        _merge(log, seen)
                    else:
                        out = self.fn(*args)
                        self._sync()
        except BaseException as e:  # noqa: BLE001 - SystemExit too: it is the candidate's
            return Reply(ok=False, error=_failed(e, self.path), log=log)
        seconds = time.monotonic() - start
        costs.call = seconds - costs.flood
        is_tuple = isinstance(out, (tuple, list))
        leaves = list(out) if is_tuple else [out]
        saved = [x.detach() if type(x) is torch.Tensor else None for x in leaves]
        mark = time.monotonic()
        shared: list[Shared | None] | None = None
        if req.share_outputs and all(x is None or x.is_cuda for x in saved):
            # Lent, not copied: torch keeps each block out of reuse until the judge lets it go.
            try:
                shared = [tensors.lend(x) if x is not None else None for x in saved]
            except RuntimeError as e:  # memory torch cannot share (not its allocator's)
                failed = _failed(e, None)
                failed.message = f"its output could not be lent to the judge: {failed.message}"
                return Reply(ok=False, error=failed, log=log)
        else:  # the judge reads a file (a CPU leaf, wrong already, still gets its verdict)
            torch.save(saved, req.outputs)
        costs.save = time.monotonic() - mark
        if req.keep:
            self.kept[req.keep] = [x for x in saved if x is not None]
        mark = time.monotonic()
        reply = Reply(
            ok=True,
            tuple_out=is_tuple,
            leaves=[_leaf(x) for x in leaves],
            inputs=[tensors.span(t) for t in inputs],
            input_digests=[tensors.storage_digest(t) for t in inputs],
            kept={k: [tensors.storage_digest(t) for t in self.kept.get(k, [])] for k in req.report},
            kept_spans={k: [tensors.span(t) for t in self.kept.get(k, [])] for k in req.report},
            log=log if req.guard or req.profile else None,
            cuda_kernels=cuda_kernels,
            seconds=round(seconds, 4),
            shared=shared,
        )
        costs.digest = time.monotonic() - mark
        reply.costs = RunnerCosts(**{k: round(v, 5) for k, v in costs.model_dump().items()})
        return reply

    # ---- helpers -----------------------------------------------------------------------------

    def _sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def _profiled(self, args: list[Any], req: Call) -> tuple[Any, list[str], Any]:
        """One call under the CUDA profiler (CUPTI) and the guard: the kernels the GPU actually
        ran, whatever launched them, and the guard's record of the same call. Compiled already
        by the calls before it, so no JIT work is in the trace."""
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with self.guard.guarded(req.fill, self.casts_allowed, req.fill_seed) as seen:
                out = self.fn(*args)
                self._sync()
        names = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
        return out, names, seen


def _merge(log: CallLog, seen: Any) -> None:
    log.forbidden += seen.forbidden
    log.launches += seen.launches
    log.foreign += seen.foreign_launches
    log.threads += seen.new_threads


def _leaf(x: Any) -> Leaf:
    import torch

    from kernelgen.verify import tensors

    if not isinstance(x, torch.Tensor):
        return Leaf(type=type(x).__name__)
    return Leaf(
        type="Tensor" if type(x) is torch.Tensor else type(x).__name__,
        dtype=str(x.dtype).removeprefix("torch."),
        shape=list(x.shape),
        device=str(x.device),
        span=tensors.span(x) if type(x) is torch.Tensor else None,
    )


def _nbytes(torch: Any, layout: list[TensorMeta | float | int | bool]) -> int:
    return sum(
        a.storage * getattr(torch, a.dtype).itemsize for a in layout if isinstance(a, TensorMeta)
    )


def _empty_like_meta(torch: Any, a: TensorMeta | float | int | bool, device: str) -> Any:
    if not isinstance(a, TensorMeta):
        return a
    base = torch.empty(max(a.storage, 1), dtype=getattr(torch, a.dtype), device=device)
    return base.as_strided(a.shape, a.stride, a.offset)


def _launch_means_compile() -> None:
    """Compile-ahead runners: every Triton launch compiles (into the shared cache) and returns
    without running, so the launcher's outputs are never read."""
    from triton.runtime.jit import JITFunction

    from kernelgen.verify import target

    run = JITFunction.run

    def compile_only(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        kernel = run(self, *args, grid=grid, warmup=True, **kwargs)
        target.check_fits(kernel)  # what loading it on the named GPU would refuse
        return kernel

    JITFunction.run = compile_only  # type: ignore[method-assign]


def serve(device: str, requests: int, replies: int) -> None:
    import pydantic

    inbox = os.fdopen(requests, "r", encoding="utf-8")
    outbox = os.fdopen(replies, "w", encoding="utf-8")
    adapter = pydantic.TypeAdapter(Request)

    def send(reply: Reply) -> None:
        outbox.write(reply.model_dump_json() + "\n")
        outbox.flush()

    # Where a judging runner's time goes (scripts/profile_verify.py): written after every
    # request, since the judge kills a runner as soon as it has its answers.
    profile_dir = os.environ.get("KERNELGEN_RUNNER_PROFILE")
    runner = Runner(device)
    sampler = None
    if profile_dir:  # started warm: the samples are of the requests, not of the imports
        from kernelgen.verify.sampler import Sampler

        sampler = Sampler().start()
    send(Reply(ok=True))  # warm: the judge may hand over a candidate now
    for line in inbox:
        req = adapter.validate_json(line)
        if isinstance(req, Exit):
            break
        if isinstance(req, Load):
            send(runner.load(req))
        elif isinstance(req, Compile):
            send(runner.compile(req))
        elif isinstance(req, Call):
            send(runner.call(req))
        if sampler is not None:
            sampler.write(Path(profile_dir) / f"runner-{os.getpid()}.txt")
    # Skip interpreter teardown: a candidate's atexit hooks or corrupted heap have nothing to
    # say once the judge has its answers.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
