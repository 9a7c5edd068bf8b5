"""KernelBench's own criteria beside kernelgen's: an accepted candidate of an imported problem
checked as KernelBench checks (its own sizes, 5 random trials of its get_inputs(), atol = rtol =
1e-2 against the Model's forward) and timed as it times (CUDA events, speedups over the Model in
eager and under torch.compile), so its figures compare with the published ones.

The work runs in sandboxed processes (kbworker.py, through verify/sandbox.run_isolated, as the
benchmark runs): the trials in one, the timing in another, so a crash while timing keeps the
trials. The record, KbCheck, is stored as kernelbench.json beside the candidate.

On the CPU nothing is timed (KernelBench times with CUDA events), and the trials run under the
interpreter only where the problem's own size is one it can run (SPEC's first size, the
problem's, marked `interpreter`); mostly it is not, and the record says so.
"""

from __future__ import annotations

from pathlib import Path

from kernelgen import paths, store
from kernelgen.errors import UsageError
from kernelgen.kernelbench.results import (
    KbCheck,
    KbRequest,
    KbTimed,
    KbTrials,
)
from kernelgen.spec import OpSpec, load_spec

FILE = "kernelbench.json"
CHECK_TIMEOUT_S = 900.0
TIME_TIMEOUT_S = 900.0
# Host memory of the worker: the problem's own sizes are GPU sizes, drawn on the host first.
CUDA_MEMORY_MB = 32768
CPU_MEMORY_MB = 8192
NOT_TIMED_CPU = "not run on CPU: KernelBench times with CUDA events on a GPU"


def record_path(op: str, run_id: str, cand_id: str) -> Path:
    return store.candidate_dir(op, run_id, cand_id) / FILE


def load_check(op: str, run_id: str, cand_id: str) -> KbCheck | None:
    path = record_path(op, run_id, cand_id)
    if not path.is_file():
        return None
    return KbCheck.model_validate_json(path.read_text())


def _origin(spec: OpSpec):  # noqa: ANN202 - an Origin
    origin = spec.data.origin
    if origin is None or origin.source != "kernelbench":
        raise UsageError(
            f"{spec.path}: SPEC.origin: expected a KernelBench problem "
            "(`kernelgen import kernelbench`); KernelBench's criteria need its Model"
        )
    return origin


def _worker(target: str, req: KbRequest, timeout_s: float) -> str | tuple[str, str]:
    from kernelgen.bench import QUIET_HOST
    from kernelgen.verify.sandbox import run_isolated

    outcome = run_isolated(
        f"kernelgen.kernelbench.kbworker:{target}",
        req.model_dump_json(),
        timeout_s=timeout_s,
        memory_mb=CUDA_MEMORY_MB if req.device == "cuda" else CPU_MEMORY_MB,
        device=req.device,
        env=QUIET_HOST,
    )
    if outcome.result is None:
        return outcome.category or "crash", outcome.reason or "no result"
    return outcome.result


def check_candidate(op: str, run_id: str, cand_id: str, device: str) -> KbCheck:
    """Check and time one stored candidate by KernelBench's criteria on `device`, and store the
    record beside it. A worker that dies is recorded (not raised): KernelBench counts a kernel
    that crashes as incorrect."""
    if device not in ("cpu", "cuda"):
        raise UsageError(f"--device {device}: expected cpu or cuda")
    spec = load_spec(op)
    origin = _origin(spec)
    path = store.candidate_path(op, run_id, cand_id)
    if not path.is_file():
        raise UsageError(f"{path}: no such candidate")
    from kernelgen.verify import sha256

    own = spec.data.sizes[0]
    check = KbCheck(
        op=op,
        run=run_id,
        candidate=cand_id,
        sha256=sha256(path.read_text(errors="replace")),
        file=origin.file,
        level=origin.level,
        problem=origin.problem,
        device=device,  # type: ignore[arg-type]
        dtype=spec.data.dtypes[0],
    )
    req = KbRequest(op=op, root=str(paths.root()), candidate=str(path.resolve()), device=device)  # type: ignore[arg-type]
    if device == "cpu" and not own.interpreter:
        check.correctness_not_run = (
            f"not run on CPU: the problem's own size ({_dims(own.dims)}) is past what the "
            "interpreter runs"
        )
    else:
        _trials(check, req)
    if device == "cpu":
        check.timing_not_run = NOT_TIMED_CPU
    elif check.correct:
        _timing(check, req)
    else:
        check.timing_not_run = "not run: not correct by KernelBench's check"
    store.write_atomic(record_path(op, run_id, cand_id), check.model_dump_json(indent=2))
    return check


def _trials(check: KbCheck, req: KbRequest) -> None:
    got = _worker("check_main", req, CHECK_TIMEOUT_S)
    if isinstance(got, tuple):
        check.error = f"{got[0]}: {got[1]}"
        check.correct = False
        return
    res = KbTrials.model_validate_json(got)
    check.environment = res.environment
    check.trials = res.trials
    if res.load_error is not None:
        check.error = f"the candidate did not load: {res.load_error}"
        check.correct = False
        return
    check.correct = len(res.trials) == req.trials and all(t.passed for t in res.trials)


def _timing(check: KbCheck, req: KbRequest) -> None:
    got = _worker("time_main", req, TIME_TIMEOUT_S)
    if isinstance(got, tuple):
        check.timing_not_run = f"the timing process failed ({got[0]}): {got[1]}"
        return
    res = KbTimed.model_validate_json(got)
    check.timing = res.timing
    check.environment = res.environment


def _dims(dims: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in dims.items()) or "fixed shapes"
