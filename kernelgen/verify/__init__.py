"""The judge of untrusted candidates: static rules here, everything else in a sandboxed process."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from kernelgen import paths
from kernelgen.errors import UsageError
from kernelgen.records import Verdict
from kernelgen.spec import load_spec
from kernelgen.verify.sandbox import run_isolated

DEFAULT_TIMEOUT_S = {"cpu": 900.0, "cuda": 300.0}
DEFAULT_MEMORY_MB = 8192


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
) -> Verdict:
    """Judge one candidate file by the candidate contract. Never raises for anything the
    candidate does; raises UsageError for an unknown operator or a missing file."""
    load_spec(op)  # unknown operator -> UsageError listing the known ones
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    source = path.read_text(errors="replace")
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    gate = static_gate(op, path, source, device, seed)
    if gate is not None:
        return gate
    # Imported here: the sandbox's child starts in this package and must not pay for torch.
    from kernelgen.verify.worker import VerifyRequest

    request = VerifyRequest(
        op=op,
        path=str(path.resolve()),
        sha256=sha256(source),
        device=device,
        seed=seed,
        root=str(paths.root()),
    )
    outcome = run_isolated(
        "kernelgen.verify.worker:main",
        request.model_dump_json(),
        timeout_s=timeout_s or DEFAULT_TIMEOUT_S[device],
        memory_mb=memory_mb,
        device=device,
    )
    if outcome.result is None:
        return _rejected(
            op,
            path,
            sha256(source),
            device,
            seed,
            outcome.category or "crash",
            outcome.reason or "no result",
            outcome.seconds,
        )
    return Verdict.model_validate_json(outcome.result)
