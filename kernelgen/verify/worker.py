"""The judge, inside the sandboxed process: load the candidate, run the case grid, return a Verdict.

Per case (stopping at the first failure, like a staged evaluation):
1. inputs A and B from fresh seeds, private bitwise copies of both;
2. the float64 ground truth and torch's own result in the case dtype, both kept alive during the
   candidate's calls (so a freed reference buffer cannot be handed back as the answer);
3. call on A under the guard (allocations poisoned with NaN, aten ops and launches recorded):
   provenance, structure, values, precision, inputs untouched, no aliasing of inputs;
4. call on B: correct too, a new buffer, and the first result unchanged (no caching, no shared
   output buffer);
5. call on a fresh copy of A: agrees with the first call (no dependence on stale memory).
On CUDA, one call per operator also runs under the profiler: every CUDA kernel in it must be one
of the candidate's Triton kernels (or a layout copy).
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from kernelgen.records import CaseResult, Verdict
from kernelgen.spec import Case, OpSpec, check_signature, load_module, load_spec
from kernelgen.verify import checks, guard, interpreter
from kernelgen.verify.checks import Failure

GPU_MEMORY_FRACTION = 0.8


class VerifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: str
    path: str
    sha256: str
    device: str
    seed: int
    root: str


class _Rejected(Exception):
    def __init__(self, failure: Failure, case: str | None = None):
        super().__init__(failure.reason)
        self.failure = failure
        self.case = case


def _candidate_line(exc: BaseException, path: Path) -> str:
    """' (line N)' for the deepest frame of the candidate's own file, through chained causes."""
    line = None
    seen: BaseException | None = exc
    while seen is not None:
        for frame in traceback.extract_tb(seen.__traceback__):
            if Path(frame.filename).resolve() == path.resolve():
                line = frame.lineno
        seen = seen.__cause__
    return f" (line {line})" if line else ""


def _frontend_error(exc: BaseException) -> bool:
    """Under the interpreter there is no compile step: an error raised by triton.language's
    own checks (a non-constexpr arange, a shape mismatch) is what the GPU compiler would report."""
    cause = exc.__cause__
    if type(exc).__name__ != "InterpreterError" or cause is None:
        return False
    frames = traceback.extract_tb(cause.__traceback__)
    return bool(frames) and "triton/language" in frames[-1].filename.replace("\\", "/")


def _classify(exc: BaseException, path: Path) -> Failure:
    """Map an exception raised by the candidate's call to a category."""
    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    where = _candidate_line(exc, path)
    if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources") or (
        _frontend_error(exc)
    ):
        return Failure("compile", f"{name}: {text}{where}")
    if (
        isinstance(exc, (torch.cuda.OutOfMemoryError, MemoryError))
        or name == "OutOfMemoryError"
        or "can't allocate memory" in text
    ):
        return Failure("oom", text)
    if "illegal memory access" in text or "CUDA error" in text:
        return Failure("crash", text)
    return Failure("crash", f"{name}: {text}{where}")


def _layout_kernel(name: str) -> bool:
    low = name.lower()
    return "copy" in low or "fill" in low


def _upcast(args: list[Any]) -> list[Any]:
    return [
        a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args
    ]


def _copies(args: list[Any]) -> list[Any]:
    """Same values, same strides, new storage."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            b = torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device)
            b.copy_(a)
            out.append(b)
        else:
            out.append(a)
    return out


class Judge:
    def __init__(self, req: VerifyRequest):
        self.req = req
        self.device = req.device
        self.spec: OpSpec = load_spec(req.op)
        self.path = Path(req.path)
        self.kernels: set[str] = set()
        self.fn: Any = None

    def load(self) -> None:
        guard.install(self.path)
        interpreter.install()
        try:
            module = load_module(self.path, "kernelgen_candidate")
        except Exception as e:  # SpecError carries the file and line already
            raise _Rejected(Failure("contract", str(e))) from None
        fn = getattr(module, self.spec.name, None)
        if not callable(fn):
            raise _Rejected(Failure("contract", f"no function named {self.spec.name!r}"))
        try:
            check_signature(fn, self.spec, self.path.name)
        except Exception as e:
            raise _Rejected(Failure("contract", str(e))) from None
        self.fn = fn

    def _call(self, args: list[Any], case: str, poison: bool = True) -> Any:
        guard.flood_free_memory(self.device)
        with guard.guarded(poison=poison) as log:
            try:
                out = self.fn(*args)
                if self.device == "cuda":
                    torch.cuda.synchronize()
            except BaseException as e:  # noqa: BLE001 - SystemExit too: it is the candidate's
                raise _Rejected(_classify(e, self.path), case) from None
        self.kernels.update(log.launches)
        if log.new_threads:
            raise _Rejected(Failure("provenance", f"started threads {log.new_threads}"), case)
        if log.forbidden:
            ops = ", ".join(sorted(set(log.forbidden)))
            raise _Rejected(
                Failure("provenance", f"torch computed in the launcher: aten {ops}"), case
            )
        if not log.launches:
            other = (
                f" (launched only {sorted(set(log.foreign_launches))})"
                if (log.foreign_launches)
                else ""
            )
            raise _Rejected(
                Failure("provenance", f"no Triton kernel of the candidate launched{other}"), case
            )
        return out

    def _judge_values(self, out: Any, ref64: Any, native: Any, case: Case) -> CaseResult:
        fail = checks.structure(out, native)
        if fail:
            raise _Rejected(fail, case.name)
        if self.spec.compare is not None:
            msg = self.spec.compare(out, ref64, case)
            if msg:
                raise _Rejected(Failure("incorrect", msg), case.name)
            return CaseResult(name=case.name, status="passed")
        tol = self.spec.tolerance(case.dtype, case.dims)
        worst, cand_err, torch_err = 0.0, 0.0, 0.0
        for o, r, n in zip(
            checks.leaves(out), checks.leaves(ref64), checks.leaves(native), strict=True
        ):
            fail, max_err = checks.values(o, r, tol)
            if fail:
                raise _Rejected(fail, case.name)
            worst = max(worst, max_err)
            cand_err = max(cand_err, checks.rel_err(o, r))
            torch_err = max(torch_err, checks.rel_err(n, r))
            fail = checks.precision(cand_err, torch_err, o.dtype, self.spec.data.error_ratio)
            if fail:
                raise _Rejected(fail, case.name)
        return CaseResult(
            name=case.name,
            status="passed",
            max_abs_err=worst,
            rel_err=cand_err,
            torch_rel_err=torch_err,
        )

    def run_case(self, case: Case, seed: int) -> CaseResult:
        from kernelgen.inputs import case_inputs, case_seed

        dev = self.device
        args_a = case_inputs(self.spec, case, case_seed(seed, case.name + "/a"), dev)
        args_b = case_inputs(self.spec, case, case_seed(seed, case.name + "/b"), dev)
        snap_a = [checks.bits(a) for a in args_a if isinstance(a, torch.Tensor)]
        pristine_a = _copies(args_a)
        with torch.no_grad():
            ref_a = self.spec.reference(*_upcast(args_a))
            native_a = self.spec.reference(*args_a)
            ref_b = self.spec.reference(*_upcast(args_b))
            native_b = self.spec.reference(*args_b)

        out_a = self._call(args_a, case.name)
        result = self._judge_values(out_a, ref_a, native_a, case)
        tensors_a = [a for a in args_a if isinstance(a, torch.Tensor)]
        if any(not torch.equal(checks.bits(a), s) for a, s in zip(tensors_a, snap_a, strict=True)):
            raise _Rejected(Failure("mutation", "an input changed during the call"), case.name)
        for o in checks.leaves(out_a):
            if any(checks.shares_memory(o, a) for a in tensors_a):
                raise _Rejected(
                    Failure("aliasing", "the output shares memory with an input"), case.name
                )
        kept = [checks.bits(o) for o in checks.leaves(out_a)]

        out_b = self._call(args_b, case.name)
        self._judge_values(out_b, ref_b, native_b, case)
        for o_b in checks.leaves(out_b):
            if any(checks.shares_memory(o_b, o_a) for o_a in checks.leaves(out_a)):
                raise _Rejected(
                    Failure(
                        "aliasing",
                        "the second call returned the first call's "
                        "buffer (cached or shared output)",
                    ),
                    case.name,
                )
        if any(
            not torch.equal(checks.bits(o), k)
            for o, k in zip(checks.leaves(out_a), kept, strict=True)
        ):
            raise _Rejected(
                Failure("stale", "the first result changed when the candidate was called again"),
                case.name,
            )

        out_a2 = self._call(pristine_a, case.name)
        fail = checks.structure(out_a2, native_a)
        if fail:
            raise _Rejected(
                Failure("stale", "the same inputs gave another structure: " + fail.reason),
                case.name,
            )
        tol = self.spec.tolerance(case.dtype, case.dims)
        for o1, o2 in zip(checks.leaves(out_a), checks.leaves(out_a2), strict=True):
            fail, _ = checks.values(o2, o1.double(), tol)
            if fail:
                raise _Rejected(
                    Failure("stale", "disagrees with itself on the same inputs: " + fail.reason),
                    case.name,
                )
        return result

    def profile_once(self, case: Case, seed: int) -> None:
        """On CUDA: every kernel of one call must be the candidate's (or a layout copy)."""
        from torch.profiler import ProfilerActivity, profile

        from kernelgen.inputs import case_inputs, case_seed

        args = case_inputs(self.spec, case, case_seed(seed, case.name + "/p"), self.device)
        try:
            self.fn(*args)  # compiled already; keep JIT work out of the trace
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                self.fn(*args)
                torch.cuda.synchronize()
        except BaseException as e:  # noqa: BLE001 - it passed this case a moment ago
            raise _Rejected(_classify(e, self.path), case.name) from None
        names = {e.name for e in prof.events() if e.device_type.name == "CUDA"}
        # Triton names a CUDA kernel exactly after its function: match names whole, so a kernel
        # called `_k` cannot vouch for every torch kernel with "_k" in its name. torch's copy
        # and fill kernels come from the layout copies and zeros the launcher may make.
        foreign = sorted(n for n in names if n not in self.kernels and not _layout_kernel(n))
        if foreign:
            raise _Rejected(
                Failure(
                    "provenance",
                    f"CUDA kernels that are not the candidate's ran: {', '.join(foreign)[:200]}",
                ),
                case.name,
            )

    def judge(self) -> Verdict:
        start = time.monotonic()
        results: list[CaseResult] = []
        failure: Failure | None = None
        cases = self.spec.cases
        try:
            self.load()
            last_run: Case | None = None
            for case in cases:
                if self.device == "cpu" and not case.interpreter:
                    why = (
                        "bf16 arithmetic is wrong in the interpreter"
                        if case.dtype == "bfloat16"
                        else "too large for the interpreter"
                    )
                    results.append(
                        CaseResult(name=case.name, status="not_run", note=f"not run on CPU: {why}")
                    )
                    continue
                results.append(self.run_case(case, self.req.seed))
                last_run = case
            # The profiler sees what no dispatch guard does (kernels launched around torch); it
            # watches the last case, the largest, where a size-triggered fallback would show.
            if self.device == "cuda" and last_run is not None:
                self.profile_once(last_run, self.req.seed)
        except _Rejected as r:
            failure = r.failure
            if r.case:
                failure = Failure(failure.category, f"case {r.case}: {failure.reason}")
                results.append(CaseResult(name=r.case, status="failed", note=failure.reason))
        done = {c.name for c in results}
        for case in cases:
            if case.name not in done:
                results.append(
                    CaseResult(
                        name=case.name,
                        status="not_run",
                        note="not run: stopped at the first failure",
                    )
                )
        return Verdict(
            op=self.spec.name,
            candidate=str(self.path),
            sha256=self.req.sha256,
            accepted=failure is None,
            category=failure.category if failure else None,
            reason=failure.reason if failure else None,
            device=self.device,  # type: ignore[arg-type]
            seed=self.req.seed,
            cases=results,
            kernels=sorted(self.kernels),
            seconds=round(time.monotonic() - start, 3),
        )


def main(request: str) -> str:
    """Sandbox target: VerifyRequest JSON in, Verdict JSON out."""
    req = VerifyRequest.model_validate_json(request)
    os.chdir(req.root)
    if req.device == "cuda":
        # The host cap (RLIMIT_AS) cannot apply to a CUDA process; cap the device memory instead.
        torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)
    torch.manual_seed(req.seed)
    from kernelgen.env import environment

    verdict = Judge(req).judge()
    verdict.environment = environment(req.device)
    return verdict.model_dump_json()
