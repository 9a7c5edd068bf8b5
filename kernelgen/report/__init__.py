"""Diff reports of runs (terminal, Markdown, HTML) and the library's status page.

    render_run(op)        the run report: rich renderables, plus report.md and report.html
                          written beside the run (and --out in the chosen format)
    render_status()       the status of every operator: a rich table, the JSON model, and
                          evaluations/index.html

Both return what to print, in order (``.renderables``, or ``.print(console)``); nothing here
prints by itself. ``render_status(...).data`` is the JSON model of `--all --json`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from kernelgen import paths, store
from kernelgen.bench.library import newest_record
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import now
from kernelgen.report.model import ReportData, gather, relpath
from kernelgen.report.status import LibraryStatus, OpRow, gather_status

Format = Literal["text", "md", "html"]
FORMATS: tuple[str, ...] = ("text", "md", "html")

__all__ = ["RunReport", "StatusReport", "render_run", "render_status", "ReportData"]


@dataclass
class RunReport:
    """What `kernelgen report OP` prints (renderables, in order) and the files it wrote."""

    data: ReportData
    renderables: list[RenderableType]
    written: list[Path] = field(default_factory=list)

    def print(self, console: Console) -> None:
        for r in self.renderables:
            console.print(r)


@dataclass
class StatusReport:
    """`kernelgen report --all`: the table to print, the JSON model, the page it wrote."""

    rows: list[OpRow]
    data: LibraryStatus
    renderables: list[RenderableType]
    index: Path
    json_mode: bool = False
    written: list[Path] = field(default_factory=list)

    def json_line(self) -> str:
        return self.data.model_dump_json()

    def print(self, console: Console) -> None:
        if self.json_mode:
            # The last line of stdout is the JSON object, unwrapped whatever the width.
            console.print(Raw(self.json_line()))
            return
        for r in self.renderables:
            console.print(r)


class Raw:
    """Text printed exactly as it is, neither wrapped nor cut at the terminal's width: Markdown
    or JSON on stdout must survive a pipe. (A plain renderable's lines are cropped to the width
    by Console.print; a soft-wrapped print is not, so this renders by one.)"""

    def __init__(self, text: str):
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        console.print(self.text, markup=False, highlight=False, emoji=False, soft_wrap=True)
        yield from ()


def write_run_files(data: ReportData, folder: Path) -> tuple[list[Path], str, str]:
    """Write report.md and report.html into folder; returns the paths and both texts."""
    from kernelgen.report.html import render_html
    from kernelgen.report.markdown import render_markdown

    md, page = render_markdown(data), render_html(data)
    store.write_atomic(folder / "report.md", md)
    store.write_atomic(folder / "report.html", page)
    return [folder / "report.md", folder / "report.html"], md, page


def render_run(
    op: str,
    run_id: str | None = None,
    candidate: str | None = None,
    fmt: Format = "text",
    out: Path | str | None = None,
) -> RunReport:
    """The report of one run (the latest when run_id is None), focused on its best, or on
    `candidate` against its parent.

    report.md and report.html are always written beside the run, about its best (seed -> best);
    with `candidate`, that candidate's own report.md/html also go beside it in candidates/<id>/.
    `out` additionally receives the report in `fmt` (text is the terminal output, uncoloured).
    """
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    data = gather(op, run_id, candidate)
    run_data = data if candidate is None else gather(op, data.run.id)
    written, md, page = write_run_files(run_data, Path(data.run_dir))
    if candidate is not None:
        more, md, page = write_run_files(data, store.candidate_dir(op, data.run.id, candidate))
        written += more

    from kernelgen.report.terminal import run_renderables

    renderables: list[RenderableType] = run_renderables(data) if fmt == "text" else []
    to_stdout = fmt == "md" and out is None  # Markdown on stdout stays clean for a pipe
    if out is not None:
        path = Path(out)
        text = {"text": _plain_text(renderables) if fmt == "text" else "", "md": md, "html": page}[
            fmt
        ]
        try:
            store.write_atomic(path, text)
        except OSError as e:
            raise KernelgenError(f"--out {path}: {e.strerror or e}") from None
        written.append(path)
    if to_stdout:
        renderables.append(Raw(md))
    else:
        shown = ", ".join(relpath(p) for p in written)
        renderables.append(Text(f"wrote {shown}", style="dim"))
    return RunReport(data=data, renderables=renderables, written=written)


def _plain_text(renderables: list[RenderableType]) -> str:
    console = Console(record=True, width=120, file=io.StringIO(), color_system=None)
    for r in renderables:
        console.print(r)
    return console.export_text()


def _ensure_run_report(op: str, run_id: str) -> str | None:
    """The run's report.html relative to evaluations/; (re)written when older than run.json."""
    folder = store.run_dir(op, run_id)
    page = folder / "report.html"
    try:
        if not page.is_file() or page.stat().st_mtime < (folder / "run.json").stat().st_mtime:
            write_run_files(gather(op, run_id), folder)
    except (KernelgenError, OSError):
        return None
    return page.relative_to(paths.evaluations_dir()).as_posix()


def render_status(json_mode: bool = False) -> StatusReport:
    """Every operator's status; writes evaluations/index.html with links to the run reports."""
    from kernelgen.report.html import render_status_html
    from kernelgen.report.terminal import status_table

    library = newest_record()
    rows = gather_status(library)
    written: list[Path] = []
    for r in rows:
        run_id = r.status.run or r.latest_run
        if run_id and (store.run_dir(r.status.name, run_id) / "run.json").is_file():
            r.report = _ensure_run_report(r.status.name, run_id)
            if r.report:
                written.append(paths.evaluations_dir() / r.report)
    index = paths.evaluations_dir() / "index.html"
    store.write_atomic(index, render_status_html(rows, now(), library))
    written.append(index)
    return StatusReport(
        rows=rows,
        data=LibraryStatus(ops=[r.status for r in rows]),
        renderables=[status_table(rows, library), Text(f"wrote {relpath(index)}", style="dim")],
        index=index,
        json_mode=json_mode,
        written=written,
    )
