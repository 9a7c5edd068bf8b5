"""The small cases under NVIDIA's compute-sanitizer, before a kernel is promoted: memcheck finds
out-of-bounds and misaligned accesses that land in memory the output check never reads, racecheck
finds shared-memory races that a passing run does not rule out (programs that ran in a lucky
order). Each tool runs a fresh runner wrapped by the sanitizer; a report is a rejection.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kernelgen.verify.checks import Failure, Rejected, classify
from kernelgen.verify.protocol import Call, Load
from kernelgen.verify.session import Dead, Runner

if TYPE_CHECKING:
    from kernelgen.spec import Case, OpSpec
    from kernelgen.verify.truth import Truths

# The sanitizer's own exit code for "found something", apart from any code the program returns.
_FOUND = 86
TOOLS = {"memcheck": "memcheck", "racecheck": "race"}
SANITIZED_DEADLINE_S = 300.0
_SUMMARY = re.compile(r"(ERROR SUMMARY|RACECHECK SUMMARY): (\d+) (errors?|hazards?)")


def executable() -> str | None:
    """KERNELGEN_COMPUTE_SANITIZER names one (tests put a stand-in there), else the CUDA one."""
    override = os.environ.get("KERNELGEN_COMPUTE_SANITIZER")
    if override:
        return override
    return shutil.which("compute-sanitizer") or (
        "/usr/local/cuda/bin/compute-sanitizer"
        if Path("/usr/local/cuda/bin/compute-sanitizer").is_file()
        else None
    )


class Run(Protocol):
    """What the sanitizer needs of the run's judge (judge.Evaluator): the operator, its truth,
    and how to start a runner."""

    spec: OpSpec
    truths: Truths
    device: str
    env: dict[str, str]
    memory_mb: int
    folder: Path


def check(ev: Run, path: Path, cases: list[Case]) -> list[str]:
    """Run each tool over `cases`; returns the tools that ran clean, raises Rejected on a find."""
    tool = executable()
    if tool is None:
        raise Rejected(Failure("crash", "compute-sanitizer was asked for and is not installed"))
    clean: list[str] = []
    for name, category in TOOLS.items():
        wrapper = [tool, "--tool", name, "--error-exitcode", str(_FOUND), "--print-limit", "4"]
        if name == "racecheck":
            wrapper += ["--racecheck-report", "hazard"]
        folder = ev.folder / f"sanitize-{name}"
        runner = Runner(ev.device, ev.env, ev.memory_mb, folder, wrapper=wrapper)
        try:
            reply = runner.ask(
                Load(path=str(path), entry=ev.spec.name, arg_names=ev.spec.arg_names),
                SANITIZED_DEADLINE_S,
                f"loading under {name}",
            )
            for case in cases:
                if isinstance(reply, Dead) or not reply.ok:
                    break
                truth = ev.truths.get(case)
                reply = runner.ask(
                    Call(
                        inputs=str(truth.variants["a"].file),
                        outputs=str(folder / "out.pt"),
                        guard=False,
                        fill="nan",
                    ),
                    SANITIZED_DEADLINE_S,
                    f"case {case.name} under {name}",
                )
            if isinstance(reply, Dead):
                raise Rejected(Failure(reply.category, f"under {name}: {reply.reason}"))
            if not reply.ok and reply.error is not None:
                raise Rejected(classify(reply.error))
            code = runner.finish(SANITIZED_DEADLINE_S)
            report = runner.stdout() + runner.stderr()
            found = [m for m in _SUMMARY.finditer(report) if int(m.group(2)) > 0]
            if code == _FOUND or found:
                first = next(
                    (ln.strip() for ln in report.splitlines() if ln.startswith("========= ") and
                     ("Invalid" in ln or "hazard" in ln.lower() or "race" in ln.lower())),
                    found[0].group(0) if found else f"{name} reported errors",
                )  # fmt: skip
                raise Rejected(Failure(category, f"compute-sanitizer {name}: {first[:240]}"))  # type: ignore[arg-type]
            if code is None:
                raise Rejected(Failure("timeout", f"{name} did not finish"))
            clean.append(name)
        finally:
            runner.close()
    return clean
