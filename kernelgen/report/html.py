"""The run report as one self-contained HTML page (report.html beside the run).

Everything is inline: the CSS (report.css beside this file), Pygments' highlighting classes, and the
plots as SVG data URIs. The page has no script and no external URL, so it reads the same offline.
"""

from __future__ import annotations

import difflib
import html
from functools import cache
from itertools import zip_longest
from pathlib import Path
from string import Template

from kernelgen.bench.library import TARGET_US, NewestBench
from kernelgen.report import fmt
from kernelgen.report.library import LibraryFigures, missing_note, skipped_notes, source_note
from kernelgen.report.model import ReportData, relpath
from kernelgen.report.plots import Plots, make_plots
from kernelgen.report.status import OpRow, records_used

_HERE = Path(__file__).parent
_CONTEXT = 6  # unchanged lines shown around each change in the side-by-side diff


def e(s: object) -> str:
    return html.escape(str(s), quote=True)


@cache
def _template(name: str) -> Template:
    return Template((_HERE / name).read_text())


@cache
def css() -> str:
    from pygments.formatters import HtmlFormatter

    return (_HERE / "report.css").read_text() + HtmlFormatter(style="default").get_style_defs(".hl")


def _highlight(code: str) -> list[str]:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    # Pygments closes and reopens its spans at each newline, so every line is balanced HTML.
    return highlight(code, PythonLexer(), HtmlFormatter(nowrap=True)).split("\n")


def _speed(v: float | None) -> str:
    if v is None:
        return f'<td class="num dim">{fmt.MISSING}</td>'
    cls = "good" if v >= 1.02 else "bad" if v < 0.98 else ""
    return f'<td class="num {cls}">{e(fmt.x(v))}</td>'


def _table(
    header: list[str], rows: list[str], cls: str = "", foot: str = "", num: tuple[int, ...] = ()
) -> str:
    """header cells are HTML; the columns listed in num are right-aligned numbers."""
    th = "".join(
        f'<th class="num">{h}</th>' if i in num else f"<th>{h}</th>" for i, h in enumerate(header)
    )
    tfoot = f"<tfoot>{foot}</tfoot>" if foot else ""
    return (
        f'<table class="{cls}"><thead><tr>{th}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody>{tfoot}</table>"
    )


def summary_html(d: ReportData) -> str:
    items = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in fmt.summary(d))
    return f'<dl class="summary">{items}</dl>'


def notes_html(d: ReportData) -> str:
    return "".join(f'<p class="note">{e(n)}</p>' for n in d.notes)


def shapes_html(d: ReportData) -> str:
    if not d.shapes:
        where = "the run was on CPU" if d.run.environment.device == "cpu" else "none recorded"
        return f'<p class="empty">No timings: {e(where)}.</p>'
    hint = (
        '<p class="hint">Median times in microseconds; a speedup is the peer\'s time over this '
        "kernel's (above 1× is faster); % limit is the share of the device's measured ceiling "
        "(bandwidth or bf16 rate) that the kernel reaches.</p>"
    )
    cols = fmt.shape_columns(d)
    header = [e(c.header) for c in cols]
    rows = []
    for r in d.shapes:
        cells = []
        for c in cols:
            if c.kind == "x":
                cells.append(_speed(c.get(r)))  # type: ignore[arg-type]
            elif c.kind == "us":
                strong = " strong" if c.strong else ""
                cells.append(f'<td class="num{strong}">{e(fmt.cell(c, r))}</td>')
            elif c.header.startswith("% limit"):
                cells.append(f'<td class="num">{e(fmt.cell(c, r))}</td>')
            else:
                cells.append(f"<td>{e(fmt.cell(c, r))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    first_x = next(i for i, c in enumerate(cols) if c.kind == "x")
    foot = f'<tr><td colspan="{first_x}">geomean over shapes</td>'
    foot += "".join(_speed(c.foot) if c.kind == "x" else "<td></td>" for c in cols[first_x:])
    num = tuple(i for i, c in enumerate(cols) if c.kind != "text" or c.header.startswith("%"))
    return hint + _table(header, rows, "data", foot + "</tr>", num=num)


def plots_html(plots: Plots) -> str:
    if plots.unavailable:
        return f'<p class="empty">{e(plots.unavailable)}</p>'
    figs = "".join(
        f'<figure id="{p.id}"><img alt="{e(p.title)}" src="{p.uri}">'
        f"<figcaption><b>{e(p.title)}.</b> {e(p.caption)}</figcaption></figure>"
        for p in plots.plots
    )
    return f'<div class="plots">{figs}</div>'


def history_html(d: ReportData) -> str:
    if not d.candidates:
        return '<p class="empty">No candidates yet.</p>'
    header = list(fmt.HISTORY_HEADER)
    rows = []
    for c in d.candidates:
        cls = " ".join(
            k for k, on in (("best", c.id == d.run.best), ("focus", c.id == d.focus)) if on
        )
        who = c.proposer + (f" · {c.model}" if c.model else "")
        seed_x = fmt.cand_speedup_seed(c, d.run.seed_bench)
        rows.append(
            f'<tr class="{cls}"><td class="num">{c.round}</td><td><code>{e(c.id)}</code></td>'
            f"<td><code>{e(c.parent or fmt.MISSING)}</code></td><td>{e(who)}</td>"
            f'<td><span class="badge {c.status}">{e(fmt.candidate_word(c))}</span></td>'
            f'<td>{e(c.category or "")}</td><td class="reason">{e(c.reason or "")}</td>'
            f'<td class="num">{e(fmt.x(c.speedup)) if c.speedup is not None else ""}</td>'
            f'<td class="num">'
            f"{e(fmt.x(seed_x)) if seed_x is not None else ''}</td>"
            f"<td>{e(fmt.history_marker(d, c))}</td></tr>"
        )
    legend = ""
    if any(c.speedup is not None or c.bench is not None for c in d.candidates):
        legend = f'<p class="hint">{e(fmt.HISTORY_LEGEND)}</p>'
    return _table(header, rows, "data history", num=(0, 7, 8)) + legend


def details_html(d: ReportData) -> str:
    out = []
    if d.compile:
        rows = [
            f"<tr><td><code>{e(f.kernel)}</code></td>"
            + "".join(
                f'<td class="num">{fmt.MISSING if v is None else f"{v:,}"}</td>'
                for v in (f.registers, f.spills, f.shared_bytes, f.num_warps, f.num_stages)
            )
            + "</tr>"
            for f in d.compile
        ]
        out.append(f"<h3>Compile facts of {e(d.focus_label)}</h3>")
        out.append(
            _table(
                ["kernel", "registers", "spills", "shared bytes", "warps", "stages"],
                rows,
                "data",
                num=(1, 2, 3, 4, 5),
            )
        )
    if d.failed_cases:
        rows = [
            f"<tr><td>{e(c.name)}</td>"
            + "".join(
                f'<td class="num">{fmt.MISSING if v is None else f"{v:.3g}"}</td>'
                for v in (c.max_abs_err, c.rel_err, c.torch_rel_err)
            )
            + f"<td>{e(c.note or '')}</td></tr>"
            for c in d.failed_cases
        ]
        out.append(f"<h3>Failed cases of {e(d.focus_label)}</h3>")
        out.append(
            _table(
                ["case", "max abs err", "rel err", "torch rel err", "note"],
                rows,
                "data",
                num=(1, 2, 3),
            )
        )
    return "".join(out)


def side_by_side(a: str, b: str, a_name: str, b_name: str, context: int = _CONTEXT) -> str:
    """A two-column diff table: old on the left, new on the right, highlighted Python."""
    a_lines, b_lines = a.splitlines(), b.splitlines()
    a_hl, b_hl = _highlight(a), _highlight(b)
    rows: list[str] = []

    def cell(no: int | None, code: str | None, kind: str) -> str:
        if no is None:
            return '<td class="ln"></td><td class="code empty"></td>'
        return f'<td class="ln">{no}</td><td class="code {kind}">{code or " "}</td>'

    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    groups = list(matcher.get_grouped_opcodes(context))
    shown_to = 0
    for group in groups:
        start = group[0][1]
        if start > shown_to:
            rows.append(
                f'<tr class="skip"><td colspan="4">⋯ {start - shown_to} unchanged lines</td></tr>'
            )
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for k in range(a2 - a1):
                    rows.append(
                        "<tr>"
                        + cell(a1 + k + 1, a_hl[a1 + k], "ctx")
                        + cell(b1 + k + 1, b_hl[b1 + k], "ctx")
                        + "</tr>"
                    )
                continue
            pairs = zip_longest(range(a1, a2), range(b1, b2))
            for i, j in pairs:
                left = cell(i + 1, a_hl[i], "del") if i is not None else cell(None, None, "")
                right = cell(j + 1, b_hl[j], "add") if j is not None else cell(None, None, "")
                rows.append(f"<tr>{left}{right}</tr>")
        shown_to = group[-1][2]
    if shown_to < len(a_lines):
        rows.append(
            f'<tr class="skip"><td colspan="4">⋯ {len(a_lines) - shown_to} unchanged '
            "lines</td></tr>"
        )
    head = (
        f'<thead><tr><th colspan="2">{e(a_name)}</th><th colspan="2">{e(b_name)}</th></tr></thead>'
    )
    cols = '<colgroup><col class="lnc"><col><col class="lnc"><col></colgroup>'
    return f'<table class="sbs hl" id="diff-sbs">{cols}{head}<tbody>{"".join(rows)}</tbody></table>'


def unified_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        kind = (
            "meta"
            if line.startswith(("---", "+++"))
            else "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else ""
        )
        lines.append(f'<span class="{kind}">{e(line)}</span>')
    return '<pre class="udiff" id="diff-unified">' + "\n".join(lines) + "</pre>"


def diff_html(d: ReportData) -> str:
    if not d.diff or d.base_source is None or d.focus_source is None:
        return f'<p class="empty">{e(d.diff_note or "No diff.")}</p>'
    sbs = side_by_side(
        d.base_source,
        d.focus_source,
        f"{d.base} · {d.base_path}",
        f"{d.focus_label} · {d.focus_path}",
    )
    added = sum(1 for x in d.diff.splitlines() if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in d.diff.splitlines() if x.startswith("-") and not x.startswith("---"))
    return (
        f'<p class="diffstat"><span class="plus">+{added}</span> '
        f'<span class="minus">−{removed}</span> lines</p>'
        f'<div class="sbs-wrap">{sbs}</div>'
        f"<details><summary>Unified diff (to copy)</summary>{unified_html(d.diff)}</details>"
    )


def render_html(d: ReportData) -> str:
    env = d.run.environment
    where = f"{env.gpu}, driver {env.driver or '?'}" if env.device == "cuda" else "CPU"
    foot = (
        f"Generated by kernelgen at {e(d.generated)} from {e(relpath(d.run_dir))}. "
        f"Measured on {e(where)} with torch {e(env.torch)} and Triton {e(env.triton)}."
    )
    return _template("run.html").substitute(
        title=e(f"{d.op} · {d.run.id} · kernelgen report"),
        css=css(),
        op=e(d.op),
        run=e(d.run.id),
        state=e(d.run.state),
        state_text=e("open" if fmt.is_open_agent_run(d) else d.run.state),
        summary=summary_html(d),
        notes=notes_html(d),
        shapes_title=e(d.shapes_title),
        diff_title=e(d.diff_title),
        shapes=shapes_html(d),
        plots=plots_html(make_plots(d)),
        history=history_html(d),
        details=details_html(d),
        diff=diff_html(d),
        footer=foot,
    )


def _time_class(v: float | None) -> str:
    """A time ratio's colour: good below 1 (faster), the reverse of a speedup's."""
    return "" if v is None else "good" if v <= 0.98 else "bad" if v > 1.02 else ""


def _vs_best_peer(f: LibraryFigures | None) -> str:
    mean, worst, shape = fmt.vs_best_peer(f)
    if f is None or f.time_over_best_peer is None:
        return f'<td class="num dim">{e(mean)}</td>'
    cell = f'<span class="{_time_class(f.time_over_best_peer)}">{e(mean)}</span>'
    if worst:
        cls = _time_class(f.time_over_best_peer_worst)
        cell += f' · <span class="{cls}">{e(worst)}</span> <small>{e(shape or "")}</small>'
    more = []
    if f.kernel_time_over_best_peer is not None:
        more.append(f"kernel forced: {fmt.time_over(f.kernel_time_over_best_peer)}")
    if f.decode_host_excess_us is not None:
        v = f.decode_host_excess_us
        met = {True: "met", False: "not met", None: "?"}[f.decode_host_target_met]
        more.append(
            f"decode host time {'+' if v >= 0 else '−'}{fmt.us(abs(v))} µs over eager's "
            f"(target ≤ {TARGET_US:g} µs: {met})"
        )
    if f.routed_within_noise is not None:
        past = ", ".join(f.routed_over_noise)
        more.append(
            "torch call under use(): within noise"
            if f.routed_within_noise
            else f"torch call under use(): slower past noise at {past}"
        )
    if missing_note(f):
        more.append(missing_note(f))
    if more:
        cell += f'<br><small class="dim">{e(" · ".join(more))}</small>'
    return f'<td class="num">{cell}</td>'


def render_status_html(
    rows: list[OpRow], generated: str, library: NewestBench | None = None
) -> str:
    header = [
        "operator",
        "seed",
        "generated",
        "device",
        "date",
        "× eager",
        "× compile",
        "worst shape<br><small>vs best peer</small>",
        "vs best peer (library bench)<br><small>time over the best peer's: below 1× is "
        "faster</small>",
        "% limit<br><small>median</small>",
        "run report",
    ]
    body = []
    for r in rows:
        s = r.status
        seed = e(r.seed or "missing")
        if r.seed_speedup_eager is not None:
            seed += f' <span class="dim">({e(fmt.x(r.seed_speedup_eager))} eager)</span>'
        if s.generated:
            gen = '<span class="badge accepted">yes</span>'
            if r.candidate:
                gen += f" <code>{e(r.candidate)}</code>"
            if r.proposer:
                gen += f' <span class="dim">{e(r.proposer)}</span>'
            if r.dispatch:
                # The counts stay in view; the shape lists fold, or a row runs 20 lines tall.
                gen += (
                    f'<details class="dispatch"><summary>{e(r.dispatch_brief or "dispatch")}'
                    f'</summary><small class="dim">{e(r.dispatch)}</small></details>'
                )
        else:
            gen = '<span class="dim">no</span>'
            if r.candidate:
                gen += f' <span class="dim">(best so far: <code>{e(r.candidate)}</code>)</span>'
        worst = fmt.MISSING
        if s.worst_shape_vs_best_peer is not None:
            worst = (
                f"{e(fmt.x(s.worst_shape_vs_best_peer))} <small>{e(r.worst_shape or '')}</small>"
            )
        run_id = s.run or r.latest_run
        link = e(run_id or fmt.MISSING)
        if r.report:
            link = f'<a href="{e(r.report)}"><code>{e(run_id)}</code></a>'
        if not s.run and r.latest_run:
            link = "latest: " + link
        if r.note:
            link += f'<br><span class="dim">{e(r.note)}</span>'
        body.append(
            f"<tr><td><b>{e(s.name)}</b></td><td>{seed}</td><td>{gen}</td>"
            f"<td>{e(s.device or fmt.MISSING)}</td><td>{e(r.date or fmt.MISSING)}</td>"
            + _speed(s.speedup_vs_eager)
            + _speed(s.speedup_vs_compile)
            + f'<td class="num">{worst}</td>'
            + _vs_best_peer(s.library)
            + f'<td class="num">{fmt.pct(s.limit_pct)}</td>'
            f"<td>{link}</td></tr>"
        )
    n_gen = sum(r.status.generated for r in rows)
    notes = ""
    if library is not None:
        notes = f'<p class="dim">{e(source_note(library, records_used(rows)))}</p>'
        notes += "".join(f'<p class="bad">{e(n)}</p>' for n in skipped_notes(library))
    return _template("status.html").substitute(
        css=css(),
        table=_table(header, body, "data status", num=(5, 6, 7, 8, 9)) + notes,
        counts=e(f"{len(rows)} operators, {n_gen} generated"),
        generated=e(generated),
    )
