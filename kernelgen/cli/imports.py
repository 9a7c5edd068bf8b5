"""`kernelgen import kernelbench FILE|DIR...`: operators from a benchmark's problems."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kernelgen.cli.common import JsonOpt, app, clean_errors, emit_json, out

imports = typer.Typer(no_args_is_help=True, help="Make operators of another benchmark's problems.")
app.add_typer(imports, name="import")


@imports.command("kernelbench")
@clean_errors
def kernelbench(
    paths: Annotated[
        list[Path],
        typer.Argument(help="problem files (levelN/ID_Title.py) or folders holding them"),
    ],
    force: Annotated[
        bool, typer.Option("--force", help="replace a reference that differs from the import")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Write references/kb<level>_<id>_<title>.py for each KernelBench problem: its Model as the
    reference, its sizes (and smaller ones for the CPU), its origin. No seed: torch eager is the
    baseline. One line per problem, imported or refused with why; exit 1 if any was refused."""
    from kernelgen.kernelbench import import_paths

    results = import_paths(paths, force=force)
    if json_out:
        emit_json({"imported": [r.model_dump() for r in results]})
    else:
        for r in results:
            out.print(_line(r), soft_wrap=True)
        done = sum(r.status != "refused" for r in results)
        out.print(f"{done} of {len(results)} imported")
    if any(r.status == "refused" for r in results):
        raise typer.Exit(1)


def _line(r) -> str:  # noqa: ANN001 - an Imported
    if r.status == "refused":
        name = r.op or r.file
        return f"[red]refused[/red]   {escape(name)}: {escape(r.reason or '')}"
    where = f"{r.cases} cases, {r.cpu_cases} on CPU" + (", convolution" if r.convolution else "")
    label = "[green]imported[/green]" if r.status == "imported" else "[dim]unchanged[/dim]"
    return f"{label}  {escape(r.op or '')} ({where})"
