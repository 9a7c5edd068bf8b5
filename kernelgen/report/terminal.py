"""The run report and the status table as rich renderables; the CLI prints them.

Tables pick their layout from the width they are given: every column on a wide terminal; on a
narrow one (80 columns) the long cells (reasons, run ids, devices) move below the table instead of
being cut to an ellipsis.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kernelgen.bench.library import NewestBench
from kernelgen.report import fmt
from kernelgen.report.library import missing_note, skipped_notes, source_note
from kernelgen.report.model import ReportData
from kernelgen.report.status import OpRow, records_used

WIDE = 110  # columns from which a table shows every column
_ADD = "on #12301c"
_DEL = "on #3a1417"
_STATUS = {"accepted": "green", "rejected": "red", "pending": "yellow"}


class Responsive:
    """Renders wide(...) or narrow(...) depending on the width available when printed."""

    def __init__(
        self,
        wide: Callable[[], RenderableType],
        narrow: Callable[[], RenderableType],
        min_width: int = WIDE,
    ):
        self.wide, self.narrow, self.min_width = wide, narrow, min_width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.wide() if options.max_width >= self.min_width else self.narrow()


def _table(title: str, **kw) -> Table:
    # SIMPLE_HEAD draws a space between columns; one more on the right makes two.
    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        collapse_padding=True,
        **kw,
    )


def _speed(v: float | None) -> Text:
    if v is None:
        return Text(fmt.MISSING, style="dim")
    return Text(fmt.x(v), style="green" if v >= 1.02 else "red" if v < 0.98 else "")


def _time_over(v: float | None, text: str) -> Text:
    """A time ratio: green below 1 (faster), the reverse of a speedup's colours."""
    if v is None:
        return Text(fmt.MISSING, style="dim")
    return Text(text, style="green" if v <= 0.98 else "red" if v > 1.02 else "")


def summary_panel(d: ReportData) -> Panel:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for k, v in fmt.summary(d):
        grid.add_row(k, Text(v))
    return Panel(grid, title=f"kernelgen report · {d.op}", title_align="left", border_style="cyan")


def notes(d: ReportData) -> RenderableType | None:
    if not d.notes:
        return None
    return Group(*(Text("! " + n, style="yellow") for n in d.notes))


def shape_table(d: ReportData) -> RenderableType:
    if not d.shapes:
        where = "the run was on CPU" if d.run.environment.device == "cpu" else "none recorded"
        return Text(f"Per shape: no timings ({where}).", style="dim")
    return Responsive(lambda: _shapes(d, wide=True), lambda: _shapes(d, wide=False))


def _shapes(d: ReportData, wide: bool) -> Table:
    dtypes = sorted({r.dtype for r in d.shapes})
    one_dtype = len(dtypes) == 1
    title = f"{d.shapes_title} (µs, median" + (f", {dtypes[0]})" if one_dtype else ")")
    t = _table(title, show_footer=True)
    cols = fmt.shape_columns(d, dtype=not one_dtype, bound=wide)
    for i, c in enumerate(cols):
        header = c.header.removesuffix(" µs")  # the title says µs
        if c.header.startswith("% limit") and not wide:
            header = "% limit"
        t.add_column(
            header,
            justify="left" if c.kind == "text" and i < 2 else "right",
            footer="geomean" if i == 0 else _speed(c.foot) if c.kind == "x" else "",
            style="bold" if c.strong else None,
            no_wrap=True,
        )
    for r in d.shapes:
        cells: list[RenderableType] = []
        for c in cols:
            if c.kind == "x":
                cells.append(_speed(c.get(r)))  # type: ignore[arg-type]
            elif c.header.startswith("% limit") and not wide:
                cells.append(fmt.pct(r.limit_pct))
            else:
                cells.append(fmt.cell(c, r))
        t.add_row(*cells)
    return t


def history_table(d: ReportData) -> RenderableType:
    if not d.candidates:
        return Text("History: no candidates yet.", style="dim")
    return Responsive(lambda: _history(d, wide=True), lambda: _history(d, wide=False))


def _history(d: ReportData, wide: bool) -> RenderableType:
    # The proposer is in the summary; a column only when candidates came from several.
    who = {(c.proposer, c.model) for c in d.candidates}
    t = _table("History of candidates")
    t.add_column("round", justify="right", no_wrap=True)
    for name in ("id", "parent"):
        t.add_column(name, no_wrap=True)
    if len(who) > 1:
        t.add_column("proposer")
    t.add_column("verdict", no_wrap=True)
    t.add_column("category", no_wrap=True)
    if wide:
        t.add_column("reason", ratio=1, min_width=16)
    t.add_column("× best then", justify="right", no_wrap=True)
    t.add_column("× seed", justify="right", no_wrap=True)
    t.add_column("", no_wrap=True)
    reasons = []
    for c in d.candidates:
        marker = fmt.history_marker(d, c)
        cells: list[RenderableType] = [str(c.round), c.id, c.parent or fmt.MISSING]
        if len(who) > 1:
            cells.append(c.proposer + (f" · {c.model}" if c.model else ""))
        cells += [Text(fmt.candidate_word(c), style=_STATUS[c.status]), c.category or ""]
        if wide:
            cells.append(Text(c.reason or ""))
        elif c.reason:
            reasons.append(Text.assemble((f"{c.id}: ", "bold"), c.reason))
        cells += [
            fmt.x(c.speedup) if c.speedup is not None else "",
            fmt.x(fmt.cand_speedup_seed(c, d.run.seed_bench)) if c.bench is not None else "",
            Text(marker, style="bold green" if marker.startswith("★") else "green"),
        ]
        t.add_row(*cells, style="bold" if c.id == d.focus and not d.focus_is_best else None)
    if any(c.speedup is not None or c.bench is not None for c in d.candidates):
        t.caption, t.caption_justify = fmt.HISTORY_LEGEND, "left"
    return Group(t, *reasons) if reasons else t


def details(d: ReportData) -> RenderableType | None:
    parts: list[RenderableType] = []
    if d.compile:
        t = _table(f"Compile facts of {d.focus_label}")
        for col in ("kernel", "registers", "spills", "shared bytes", "warps", "stages"):
            t.add_column(col, justify="left" if col == "kernel" else "right")
        for f in d.compile:
            values = (f.registers, f.spills, f.shared_bytes, f.num_warps, f.num_stages)
            t.add_row(f.kernel, *(fmt.MISSING if v is None else f"{v:,}" for v in values))
        parts.append(t)
    if d.failed_cases:
        t = _table(f"Failed cases of {d.focus_label}")
        for col in ("case", "max abs err", "rel err", "torch rel err", "note"):
            t.add_column(col)
        for c in d.failed_cases:
            errs = (c.max_abs_err, c.rel_err, c.torch_rel_err)
            t.add_row(c.name, *(fmt.MISSING if v is None else f"{v:.3g}" for v in errs), c.note)
        parts.append(t)
    return Group(*parts) if parts else None


def diff_grid(a: str, b: str, context: int = 3) -> Table:
    """A unified diff with old/new line numbers, Python highlighting and +/- line backgrounds;
    a long line wraps inside the code column, under its own indentation."""
    a_lines, b_lines = a.splitlines(), b.splitlines()
    a_hl, b_hl = _highlight(a, len(a_lines)), _highlight(b, len(b_lines))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunk = f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"
        grid.add_row("", "", "", Text(hunk, style="cyan"))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for k in range(a2 - a1):
                    grid.add_row(str(a1 + k + 1), str(b1 + k + 1), " ", a_hl[a1 + k])
                continue
            for k in range(a1, a2):
                grid.add_row(str(k + 1), "", Text("-", style="bold red"), a_hl[k], style=_DEL)
            for k in range(b1, b2):
                grid.add_row("", str(k + 1), Text("+", style="bold green"), b_hl[k], style=_ADD)
    return grid


def _highlight(code: str, n: int) -> list[Text]:
    lines = list(Syntax(code, "python", theme="ansi_dark").highlight(code).split("\n"))
    return lines + [Text()] * (n - len(lines))


def diff_panel(d: ReportData) -> RenderableType:
    title = d.diff_title
    if not d.diff or d.base_source is None or d.focus_source is None:
        return Panel(Text(d.diff_note or "No diff.", style="dim"), title=title, title_align="left")
    return Panel(
        diff_grid(d.base_source, d.focus_source),
        title=title,
        subtitle=f"{d.base_path} → {d.focus_path}",
        title_align="left",
        subtitle_align="left",
    )


def run_renderables(d: ReportData) -> list[RenderableType]:
    parts = [summary_panel(d), notes(d), shape_table(d), history_table(d), details(d)]
    return [p for p in parts if p is not None] + [diff_panel(d)]


def status_table(rows: list[OpRow], library: NewestBench | None = None) -> RenderableType:
    """The status table; `library`, the library benchmark's records as found, says below it
    which one the figures come from and which files were passed over."""
    notes: list[RenderableType] = []
    if library is not None:
        notes.append(Text(source_note(library, records_used(rows)), style="dim"))
        notes += [Text(n, style="yellow") for n in skipped_notes(library)]
    return Responsive(
        lambda: _status(rows, notes, wide=True), lambda: _status(rows, notes, wide=False), 120
    )


def _vs_best_peer(r: OpRow, wide: bool) -> Text:
    """In the table the worst shape goes on a line of its own, so that the column leaves the run
    ids beside it room at 140 columns."""
    f = r.status.library
    mean, worst, shape = fmt.vs_best_peer(f)
    cell = _time_over(f.time_over_best_peer if f else None, mean)
    if worst and f is not None:
        cell.append("\n" if wide else " · ")
        cell.append_text(_time_over(f.time_over_best_peer_worst, worst))
        if shape:
            cell.append(("\n" if wide else " ") + shape)
    missing = missing_note(f)
    if missing and cell.plain != fmt.MISSING:
        cell.append(("\n" if wide else " · ") + missing, style="dim")
    return cell


def _status(rows: list[OpRow], notes: list[RenderableType], wide: bool) -> RenderableType:
    t = _table("kernelgen library status (geomean over each operator's benchmark shapes)")
    t.add_column("op", style="bold", no_wrap=True)
    t.add_column("generated", no_wrap=True)
    if wide:
        t.add_column("evidence", no_wrap=True)
    t.add_column("× eager", justify="right", no_wrap=True)
    t.add_column("× compile", justify="right", no_wrap=True)
    t.add_column("worst shape" if wide else "worst", no_wrap=True)
    if wide:
        t.add_column("vs best peer\n(library bench)", no_wrap=True)
    t.add_column("% limit", justify="right", no_wrap=True)
    t.add_column("seed", no_wrap=True)
    if wide:
        t.add_column("run", min_width=24, overflow="fold")
    below: list[RenderableType] = []
    for r in rows:
        s = r.status
        generated = Text("yes", style="green") if s.generated else Text("no", style="dim")
        if s.generated and r.candidate and wide:
            generated.append(f" · {r.candidate}")
        if s.generated and r.dispatch and wide:
            generated.append(f"\n{r.dispatch}", style="dim")
        worst = Text(fmt.MISSING, style="dim")
        if s.worst_shape_vs_best_peer is not None:
            worst = _speed(s.worst_shape_vs_best_peer)
            if wide:
                worst.append(f" {r.worst_shape or ''}", style="")
        if r.seed is None:
            seed = Text("missing", style="red")
        elif r.seed_speedup_eager is not None:
            seed = Text(fmt.x(r.seed_speedup_eager))
        else:
            seed = Text("yes")
        run = Text(s.run or "")
        if not s.run:
            run = Text(r.note or "no run", style="dim")
            if r.latest_run:
                run.append(f"; latest {r.latest_run}")
        evidence = "\n".join(p for p in (s.device, r.date) if p) or Text(fmt.MISSING, style="dim")
        cells: list[RenderableType] = [s.name, generated]
        if wide:
            cells.append(evidence)
        cells += [_speed(s.speedup_vs_eager), _speed(s.speedup_vs_compile), worst]
        if wide:
            cells.append(_vs_best_peer(r, wide))
        cells += [fmt.pct(s.limit_pct), seed]
        if wide:
            cells.append(run)
        else:
            where = ", ".join(p for p in (s.device, r.date) if p)
            below.append(
                Text.assemble((f"{s.name}: ", "bold"), f"{where}, run " if where else "", run)
            )
            if s.generated and r.dispatch:
                below.append(Text(f"  dispatch: {r.dispatch}", style="dim"))
            if s.library is not None:
                below.append(Text.assemble("  vs best peer: ", _vs_best_peer(r, wide)))
        t.add_row(*cells)
    t.caption = (
        "worst shape: the smallest ratio of the faster of eager and torch.compile to the "
        "generated kernel; % limit: median over shapes; seed: the seed's speedup over eager "
        "(yes: a seed without timings). vs best peer (library bench): kernelgen_ops' device "
        "time over the fastest peer timed at each shape (eager, torch.compile, Liger, FlagGems, "
        "the serving libraries' kernels), geomean and worst shape; below 1× is faster; no "
        "figure: the peers timed for it that have none there, and why."
    )
    t.caption_justify = "left"
    below += notes
    return Group(t, *below) if below else t
