"""The judge of untrusted candidates: static rules (static.py), then the run's judge (judge.py, in
this process), whose judging of each candidate (verdict.py) drives the candidate's sandboxed runner
(runner.py) case by case."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelgen.errors import UsageError
from kernelgen.records import Verdict
from kernelgen.spec import load_spec
from kernelgen.verify.sandbox import DEFAULT_MEMORY_MB

if TYPE_CHECKING:
    from kernelgen.verify.judge import Evaluator

__all__ = ["DEFAULT_MEMORY_MB", "Evaluator", "sha256", "static_gate", "verify_candidate"]


def __getattr__(name: str) -> Any:
    # The judge (and torch) load on first use: the sandboxed processes start in this package,
    # and the candidate's runner must not import the judge's code at all.
    if name == "Evaluator":
        from kernelgen.verify.judge import Evaluator

        return Evaluator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sha256(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def _rejected(
    op: str,
    path: Path,
    digest: str,
    device: str,
    seed: int,
    category: str,
    reason: str,
    seconds: float = 0.0,
) -> Verdict:
    return Verdict(
        op=op,
        candidate=str(path),
        sha256=digest,
        accepted=False,
        outcome="rejected",
        category=category,  # type: ignore[arg-type]
        reason=reason,
        device=device,  # type: ignore[arg-type]
        seed=seed,
        seconds=round(seconds, 3),
    )


def static_gate(op: str, path: Path, source: str, device: str, seed: int) -> Verdict | None:
    """Syntax and static rules, in this process: cheap, and no candidate code runs."""
    from kernelgen.verify.static import check_source

    digest = sha256(source)
    try:
        violations = check_source(source, op)
    except SyntaxError as e:
        return _rejected(op, path, digest, device, seed, "syntax", f"line {e.lineno}: {e.msg}")
    if violations:
        v = violations[0]
        more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
        return _rejected(
            op, path, digest, device, seed, "static", f"line {v.line}: [{v.rule}] {v.reason}{more}"
        )
    return None


def verify_candidate(
    op: str,
    path: Path,
    *,
    device: str,
    seed: int | None = None,
    timeout_s: float | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    sanitize: bool = False,
    evaluator: Evaluator | None = None,
    gpu_target: str | None = None,
) -> Verdict:
    """Judge one candidate file by the candidate contract. Never raises for anything the
    candidate does; raises UsageError for an unknown operator or a missing file.

    `evaluator` is the run's judge (ground truth, warm runners, compile cache, deadlines, the
    sources already judged); without one, a judge is made for this candidate alone.
    `timeout_s` caps each call's deadline. `gpu_target` (CPU only; verify/target.py): after
    the interpreter's cases pass, compile the candidate's kernels for that GPU too."""
    load_spec(op)  # unknown operator -> UsageError listing the known ones
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    source = path.read_text(errors="replace")
    if evaluator is not None:
        seed = evaluator.seed
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    gate = static_gate(op, path, source, device, seed)
    if gate is not None:
        return gate
    from kernelgen.env import environment
    from kernelgen.verify.judge import Evaluator

    own = evaluator is None
    ev = evaluator or Evaluator(
        op,
        device,
        seed=seed,
        memory_mb=memory_mb,
        deadline_s=timeout_s,
        sanitize=sanitize,
        keep_warm=False,
        gpu_target=gpu_target,
    )
    try:
        verdict = ev.verify(path, source, sha256(source))
    finally:
        if own:
            ev.close()
    return verdict.model_copy(update={"environment": environment(device)})
