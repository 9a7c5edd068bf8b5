"""`kernelgen import kernelbench FILE|DIR...`: one operator per KernelBench problem.

A problem file (KernelBench/levelN/ID_Title.py) becomes references/kb<N>_<ID>_<title>.py: a
reference that runs the problem's Model with its parameters and buffers as inputs, a SPEC with
the problem's own size (GPU-only where the interpreter could not run it) and smaller ones for the
CPU, drawn values at the module's own init scale, a cost model measured with FlopCounterMode, and
the file's origin. It has no seed: torch eager is its baseline, and the first accepted candidate
its first best.

The modules, in the order an import runs them: source.py reads the file and finds its size
constants; sizes.py measures it on the meta device and scales the constants down for the CPU;
probe.py runs it for real at a small size and refuses what the contract cannot hold; specgen.py
writes the SPEC; domain.py gives it its `reduction` and the domain the judge draws cases from
(shapes.py: the dims and their values, reduce.py: what the forward sums, families.py: the value
families and layouts it is defined on); writer.py writes the file; runtime.py is what the written
reference runs, and drawn.py runs it at a drawn size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen import paths
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.kernelbench.source import Refused, read

__all__ = ["Imported", "import_paths", "problem_files"]


class Imported(BaseModel):
    """What the import made of one problem file."""

    model_config = ConfigDict(extra="forbid")

    file: str
    op: str | None = None
    status: Literal["imported", "unchanged", "refused"]
    reason: str | None = Field(None, description="why it was refused")
    path: str | None = Field(None, description="the reference written")
    cases: int | None = None
    cpu_cases: int | None = None
    convolution: bool = False
    notes: list[str] = Field(default_factory=list)


def problem_files(given: list[Path]) -> list[Path]:
    """The problem files named: files as given, folders searched for levelN/ID_*.py; in level
    and problem order."""
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            hits = [p for p in path.rglob("*.py") if p.parent.name.startswith("level")]
            found += [p for p in hits if p.name.split("_", 1)[0].isdigit()]
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder")

    def order(p: Path) -> tuple[str, int, str]:
        head = p.name.split("_", 1)[0]
        return (p.parent.name, int(head) if head.isdigit() else 0, p.name)

    return sorted(dict.fromkeys(found), key=order)


def import_paths(given: list[Path], force: bool = False) -> list[Imported]:
    """Import every problem named; a refused one is recorded with its reason, never raised."""
    return [import_file(p, force) for p in problem_files(given)]


def import_file(path: Path, force: bool = False) -> Imported:
    from kernelgen.kernelbench.make import make_reference

    op = None
    try:
        pf = read(path)
        op = pf.op
        text, notes, convolution = make_reference(pf)
        target = paths.references_dir() / f"{pf.op}.py"
        status: Literal["imported", "unchanged"] = "imported"
        if target.is_file():
            old = target.read_text()
            if old == text:
                status = "unchanged"
            elif not force:
                raise Refused(path, f"{target} exists and differs (--force replaces it)")
        if status == "imported":
            _write_checked(target, text, pf.op, path)
        return _outcome(path, pf.op, status, target, convolution, notes)
    except Refused as e:
        return Imported(file=str(path), op=op, status="refused", reason=e.what)
    except KernelgenError as e:
        return Imported(file=str(path), op=op, status="refused", reason=str(e))


def _write_checked(target: Path, text: str, op: str, source: Path) -> None:
    """Write the reference, then load it as the judge will and draw one CPU case through it; a
    reference that does not hold is removed again and the problem refused with why."""
    from kernelgen.kernelbench.make import smoke

    previous = target.read_text() if target.is_file() else None
    partial = target.with_suffix(".part")
    partial.write_text(text)
    partial.replace(target)
    try:
        smoke(op)
    except KernelgenError as e:
        if previous is None:
            target.unlink()
        else:
            target.write_text(previous)
        raise Refused(source, f"the written reference does not hold: {e}") from None


def _outcome(
    path: Path, op: str, status: str, target: Path, convolution: bool, notes: list[str]
) -> Imported:
    from kernelgen.spec import load_spec

    spec = load_spec(op)
    return Imported(
        file=str(path),
        op=op,
        status=status,  # type: ignore[arg-type]
        path=str(target),
        cases=len(spec.cases),
        cpu_cases=sum(c.interpreter for c in spec.cases),
        convolution=convolution,
        notes=notes,
    )
