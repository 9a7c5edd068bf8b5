"""The run report as rich renderables; the CLI prints them (only cli.py and report print)."""

from __future__ import annotations

import difflib

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from kernelgen.report import fmt
from kernelgen.report.model import ReportData
from kernelgen.report.status import OpRow

_ADD = "on #12301c"
_DEL = "on #3a1417"
_STATUS = {"accepted": "green", "rejected": "red", "pending": "yellow"}


def summary_panel(d: ReportData) -> Panel:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
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
        why = "no timings" + (
            ": the run was on CPU" if d.run.environment.device == "cpu" else " were recorded"
        )
        return Text(f"Per shape: {why}.", style="dim")
    who = d.focus_label if d.focus else "seed"
    t = Table(
        title=f"Per shape: {who} against the seed, torch eager and torch.compile (µs, median)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_footer=True,
    )
    t.add_column("shape", footer="geomean")
    t.add_column("dtype")
    t.add_column("seed", justify="right")
    t.add_column(who, justify="right", style="bold")
    t.add_column("eager", justify="right")
    t.add_column("compile", justify="right")
    t.add_column("× eager", justify="right", footer=fmt.x(d.geomean.eager))
    t.add_column("× compile", justify="right", footer=fmt.x(d.geomean.compile))
    t.add_column("× seed", justify="right", footer=fmt.x(d.geomean.seed))
    t.add_column("% limit", justify="right")
    t.add_column("bound")
    for r in d.shapes:
        limit = fmt.pct(r.limit_pct)
        if r.seed_limit_pct is not None and r.seed_limit_pct != r.limit_pct:
            limit = f"{fmt.pct(r.seed_limit_pct)} → {limit}"
        t.add_row(
            r.shape,
            r.dtype,
            fmt.us(r.seed_us),
            fmt.us(r.best_us),
            fmt.us(r.eager_us),
            fmt.us(r.compile_us),
            _speed(r.speedup_eager),
            _speed(r.speedup_compile),
            _speed(r.speedup_seed),
            limit,
            r.bound or fmt.MISSING,
        )
    return t


def _speed(v: float | None) -> Text:
    if v is None:
        return Text(fmt.MISSING, style="dim")
    return Text(fmt.x(v), style="green" if v >= 1.02 else "red" if v < 0.98 else "")


def history_table(d: ReportData) -> RenderableType:
    if not d.candidates:
        return Text("History: no candidates yet.", style="dim")
    t = Table(title="History of candidates", title_justify="left", box=box.SIMPLE_HEAD)
    for name, kw in (
        ("round", {"justify": "right", "no_wrap": True}),
        ("id", {"no_wrap": True}),
        ("parent", {"no_wrap": True}),
        ("proposer", {}),
        ("verdict", {"no_wrap": True}),
        ("category", {"no_wrap": True}),
        ("reason", {"ratio": 1, "min_width": 16}),
        ("speedup", {"justify": "right", "no_wrap": True}),
        ("× seed", {"justify": "right", "no_wrap": True}),
        ("", {"no_wrap": True}),
    ):
        t.add_column(name, **kw)
    for c in d.candidates:
        marker = fmt.history_marker(d, c)
        t.add_row(
            str(c.round),
            c.id,
            c.parent or fmt.MISSING,
            c.proposer + (f" · {c.model}" if c.model else ""),
            Text(c.status, style=_STATUS[c.status]),
            c.category or "",
            Text(c.reason or ""),
            fmt.x(c.speedup) if c.speedup is not None else "",
            fmt.x(fmt.cand_speedup_seed(c)) if c.bench is not None else "",
            Text(marker, style="bold green" if marker.startswith("★") else "green"),
            style="bold" if c.id == d.focus else None,
        )
    return t


def details(d: ReportData) -> RenderableType | None:
    parts: list[RenderableType] = []
    if d.compile:
        t = Table(title=f"Compile facts of {d.focus_label}", title_justify="left", box=box.SIMPLE)
        for col in ("kernel", "registers", "spills", "shared bytes", "warps", "stages"):
            t.add_column(col, justify="left" if col == "kernel" else "right")
        for f in d.compile:
            t.add_row(
                f.kernel,
                *(
                    fmt.MISSING if v is None else f"{v:,}"
                    for v in (f.registers, f.spills, f.shared_bytes, f.num_warps, f.num_stages)
                ),
            )
        parts.append(t)
    if d.failed_cases:
        t = Table(title=f"Failed cases of {d.focus_label}", title_justify="left", box=box.SIMPLE)
        for col in ("case", "max abs err", "rel err", "torch rel err", "note"):
            t.add_column(col)
        for c in d.failed_cases:
            t.add_row(
                c.name,
                *(
                    fmt.MISSING if v is None else f"{v:.3g}"
                    for v in (c.max_abs_err, c.rel_err, c.torch_rel_err)
                ),
                c.note or "",
            )
        parts.append(t)
    return Group(*parts) if parts else None


def diff_text(a: str, b: str, context: int = 3) -> Text:
    """A unified diff with old/new line numbers, Python highlighting and +/- line backgrounds."""
    a_lines, b_lines = a.splitlines(), b.splitlines()
    a_hl = _highlight(a, len(a_lines))
    b_hl = _highlight(b, len(b_lines))
    out = Text()
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@\n", style="cyan")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for k in range(a2 - a1):
                    _line(out, a1 + k + 1, b1 + k + 1, " ", a_hl[a1 + k], None)
                continue
            for k in range(a1, a2):
                _line(out, k + 1, None, "-", a_hl[k], _DEL)
            for k in range(b1, b2):
                _line(out, None, k + 1, "+", b_hl[k], _ADD)
    out.rstrip()
    return out


def _highlight(code: str, n: int) -> list[Text]:
    lines = Syntax(code, "python", theme="ansi_dark").highlight(code).split("\n", allow_blank=True)
    lines = list(lines)
    return lines + [Text()] * (n - len(lines))


def _line(out: Text, old: int | None, new: int | None, sign: str, code: Text, bg: str | None):
    gutter = f"{old or '':>4} {new or '':>4} "
    out.append(gutter, style="dim")
    line = Text(f"{sign} ") + code
    if bg:
        line.stylize(bg)
        line.stylize("bold red" if sign == "-" else "bold green", 0, 1)
    out.append_text(line)
    out.append("\n")


def diff_panel(d: ReportData) -> RenderableType:
    title = f"Diff: {d.base} → {d.focus_label}"
    if d.diff_note or d.base_source is None or d.focus_source is None:
        return Panel(Text(d.diff_note or "no diff", style="dim"), title=title, title_align="left")
    sub = f"{d.base_path} → {d.focus_path}"
    body = diff_text(d.base_source, d.focus_source)
    return Panel(body, title=title, subtitle=sub, title_align="left", subtitle_align="left")


def run_renderables(d: ReportData) -> list[RenderableType]:
    parts = [
        summary_panel(d),
        notes(d),
        shape_table(d),
        history_table(d),
        details(d),
        diff_panel(d),
    ]
    return [p for p in parts if p is not None]


def status_table(rows: list[OpRow]) -> Table:
    t = Table(
        title="kernelgen library status (geomean over each operator's benchmark shapes)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    t.add_column("op", style="bold", no_wrap=True)
    t.add_column("generated", no_wrap=True)
    t.add_column("evidence", no_wrap=True)
    t.add_column("× eager", justify="right", no_wrap=True)
    t.add_column("× compile", justify="right", no_wrap=True)
    t.add_column("worst shape", no_wrap=True)
    t.add_column("% limit", justify="right", no_wrap=True)
    t.add_column("seed", no_wrap=True)
    t.add_column("run", min_width=24)
    for r in rows:
        s = r.status
        generated = Text("yes", style="green") if s.generated else Text("no", style="dim")
        if s.generated and r.candidate:
            generated.append(f" · {r.candidate}")
        evidence = "\n".join(p for p in (s.device, r.date) if p) or Text(fmt.MISSING, style="dim")
        worst = Text(fmt.MISSING, style="dim")
        if s.worst_shape_vs_best_peer is not None:
            worst = _speed(s.worst_shape_vs_best_peer)
            worst.append(f" {r.worst_shape or ''}", style="")
        if r.seed is None:
            seed = Text("missing", style="red")
        elif r.seed_speedup_eager is not None:
            seed = Text(fmt.x(r.seed_speedup_eager))
        else:
            seed = Text("present")
        run = Text(s.run or "")
        if not s.run:
            run = Text(r.note or "no run", style="dim")
            if r.latest_run:
                run.append(f" (latest {r.latest_run})")
        t.add_row(
            s.name,
            generated,
            evidence,
            _speed(s.speedup_vs_eager),
            _speed(s.speedup_vs_compile),
            worst,
            fmt.pct(s.limit_pct),
            seed,
            run,
        )
    t.caption = (
        "worst shape: smallest ratio of the faster of eager and torch.compile to the generated "
        "kernel; % limit: median over shapes; seed: the seed's speedup over eager."
    )
    t.caption_justify = "left"
    return t
