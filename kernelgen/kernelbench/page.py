"""`kernelgen report kernelbench --format html`: the suite's table as one self-contained page, in
the run report's style (report/html.py): fast_p per level against eager and torch.compile beside
the published figures and their conditions, two plots, and every problem with its status."""

from __future__ import annotations

from kernelgen.kernelbench.criteria import load_check
from kernelgen.kernelbench.published import FIGURES, Published
from kernelgen.kernelbench.results import PERF_TRIALS, TOLERANCE, TRIALS
from kernelgen.kernelbench.scores import THRESHOLDS, Row, Summary, correct, fast_p, summarize
from kernelgen.records import now
from kernelgen.report import fmt
from kernelgen.report.html import _speed, _table, css, e, plots_html
from kernelgen.report.plots import Plot, Plots, _matplotlib, _uri

_EAGER, _COMPILE, _THEIRS = "#4c72b0", "#dd8452", "#7f7f7f"


def conditions(rows: list[Row]) -> dict[str, str]:
    """Where and how the suite's figures were measured, read from its KernelBench records."""
    gpus, dtypes = set(), set()
    for r in rows:
        if r.status != "accepted" or r.run is None or r.candidate is None:
            continue
        check = load_check(r.op, r.run, r.candidate)
        if check is None:
            continue
        dtypes.add(check.dtype)
        env = check.environment
        gpus.add(env.gpu if env is not None and env.gpu else check.device)
    return {
        "gpu": ", ".join(sorted(gpus)) or fmt.MISSING,
        "dtype": ", ".join(sorted(dtypes)) or fmt.MISSING,
        "trials": f"kernelgen's verdict, then KernelBench's check: {TRIALS} random trials at "
        f"atol = rtol = {TOLERANCE:g}; times: CUDA events, {PERF_TRIALS} trials, L2 flushed",
    }


def _fraction(v: float) -> str:
    return f"{v:.0%}"


def _ours(s: Summary, label: str) -> str:
    cells = "".join(
        f'<td class="num">{_fraction(getattr(getattr(s, a), f"fast_{p:g}".replace(".", "_")))}</td>'
        for a in ("eager", "compile")
        for p in THRESHOLDS
    )
    return (
        f"<tr><td><b>{e(label)}</b></td><td class='num'>{s.problems}</td>"
        f"<td class='num'>{s.accepted}</td><td class='num'>{s.kb_correct}</td>{cells}"
        + _speed(s.eager.geomean)
        + _speed(s.compile.geomean)
        + "</tr>"
    )


def ours_html(s: Summary) -> str:
    header = ["", "problems", "accepted", "KB correct"]
    header += [f"fast<sub>{p:g}</sub> eager" for p in THRESHOLDS]
    header += [f"fast<sub>{p:g}</sub> compile" for p in THRESHOLDS]
    header += ["geomean × eager", "geomean × compile"]
    rows = [_ours(v, f"level {k}") for k, v in s.levels.items()] + [_ours(s, "all")]
    return _table(header, rows, "data", num=tuple(range(1, len(header))))


def published_html(ours: dict[str, str]) -> str:
    header = ["who", "figure", "measured on", "by", "GPU", "dtype", "trials"]

    def tr(p: Published) -> str:
        cells = (p.who, p.figure, p.scope, p.system, p.gpu, p.dtype, p.trials)
        return "<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>"

    mine = (
        "kernelgen (this suite)",
        "the table above",
        "the problems of the record",
        "the pipeline (its proposer per problem)",
        ours["gpu"],
        ours["dtype"],
        ours["trials"],
    )
    rows = [tr(p) for p in FIGURES]
    rows.append("<tr class='ours'>" + "".join(f"<td>{e(c)}</td>" for c in mine) + "</tr>")
    return _table(header, rows, "data")


def problems_html(rows: list[Row]) -> str:
    header = ["level", "problem", "operator", "status", "why", "KB correct"]
    header += ["× eager", "× compile", "device", "run"]
    body = []
    for r in rows:
        word = r.status + (f" ({r.category})" if r.category else "")
        cls = "good" if correct(r) else "bad" if r.status == "rejected" else "dim"
        kb = fmt.MISSING if r.kb_correct is None else ("yes" if r.kb_correct else "no")
        run = f"<code>{e(r.run)}</code>" if r.run else fmt.MISSING
        body.append(
            f"<tr><td class='num'>{r.level}</td><td class='num'>{r.problem}</td>"
            f"<td><code>{e(r.op)}</code></td><td class='{cls}'>{e(word)}</td>"
            f"<td><small>{e(r.reason or '')}</small></td><td>{kb}</td>"
            + _speed(r.speedup_vs_eager)
            + _speed(r.speedup_vs_compile)
            + f"<td>{e(r.device or fmt.MISSING)}</td><td>{run}</td></tr>"
        )
    return _table(header, body, "data", num=(0, 1, 6, 7))


def _speedups_plot(Figure, rows: list[Row]) -> Plot:
    timed = sorted(
        (r for r in rows if correct(r) and r.speedup_vs_eager is not None),
        key=lambda r: r.speedup_vs_eager or 0.0,
    )
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    ax.set_yscale("log", base=2)
    xs = list(range(len(timed)))
    ax.scatter(xs, [r.speedup_vs_eager for r in timed], s=12, color=_EAGER, label="× eager")
    comp = [(x, r.speedup_vs_compile) for x, r in zip(xs, timed, strict=True)]
    comp = [(x, v) for x, v in comp if v is not None]
    ax.scatter([x for x, _ in comp], [v for _, v in comp], s=12, color=_COMPILE, label="× compile")
    ax.axhline(1.0, color="black", lw=0.8)
    lines = sorted((p for p in FIGURES if p.speedup is not None), key=lambda p: -(p.speedup or 0))
    for k, p in enumerate(lines):
        ax.axhline(p.speedup, color=_THEIRS, lw=0.8, ls="--")
        # At the right end, the higher line's label above it and the next below: they are close.
        ax.annotate(
            p.label, (1.0, p.speedup), xycoords=("axes fraction", "data"),
            fontsize=7, color=_THEIRS, ha="right", va="bottom" if k % 2 == 0 else "top",
            xytext=(0, 2 if k % 2 == 0 else -2), textcoords="offset points",
        )  # fmt: skip
    ax.set_xlabel("correct problems, by speedup over eager")
    ax.set_ylabel("speedup (log)")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.spines[["top", "right"]].set_visible(False)
    return Plot(
        id="plot-speedups",
        title="Speedup per problem",
        uri=_uri(fig),
        caption="Each correct problem's speedup as KernelBench times it, over the Model in eager "
        "and under torch.compile; dashed: published averages (their conditions in the table).",
    )


def _fast_p_plot(Figure, rows: list[Row]) -> Plot:
    ps = [i / 20 for i in range(0, 61)]
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    for against, color in (("eager", _EAGER), ("compile", _COMPILE)):
        ax.plot(ps, [fast_p(rows, p, against) for p in ps], color=color, label=f"vs {against}")
    for p in FIGURES:
        if p.fast_1 is not None:
            ax.scatter([1.0], [p.fast_1], marker="x", color=_THEIRS)
            ax.annotate(
                p.label, (1.0, p.fast_1), fontsize=7, color=_THEIRS,
                xytext=(4, 2), textcoords="offset points",
            )  # fmt: skip
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fast_p")
    ax.legend(fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return Plot(
        id="plot-fast-p",
        title="fast_p",
        uri=_uri(fig),
        caption="The fraction of all problems of the record correct and faster than p times the "
        "baseline; x: published fractions at p = 1 (their conditions in the table).",
    )


def make_plots(rows: list[Row]) -> Plots:
    Figure = _matplotlib()
    if Figure is None:
        return Plots(plots=[], unavailable="matplotlib is not installed: no plots")
    return Plots(plots=[_speedups_plot(Figure, rows), _fast_p_plot(Figure, rows)])


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kernelgen on KernelBench</title>
<style>
{css}
</style>
</head>
<body>
<header><h1>kernelgen on KernelBench</h1>
<p class="sub">{counts}</p></header>
<main>
<section id="fast-p"><h2>fast_p</h2>
<p class="hint">fast<sub>p</sub>: the fraction of all problems of the record (attempted or not)
accepted by kernelgen, correct by KernelBench's check, and more than p times faster than the
baseline as KernelBench times it. fast<sub>0</sub> is the fraction correct. Geomeans are over
the accepted problems that were timed.</p>
{ours}</section>
<section id="published"><h2>Published figures</h2>
<p class="hint">As reported, with the conditions their sources give; where a condition is not
stated, the table says so.</p>
{published}</section>
<section id="plots"><h2>Plots</h2>{plots}</section>
<section id="problems"><h2>Problems</h2>{problems}</section>
</main>
<footer>Generated by kernelgen at {generated} from evaluations/kernelbench/.</footer>
</body>
</html>
"""


def render_page(rows: list[Row]) -> str:
    s = summarize(rows)
    return _PAGE.format(
        css=css(),
        counts=e(
            f"{s.problems} problems: {s.accepted} accepted, {s.kb_correct} correct by "
            f"KernelBench's check, {s.rejected} rejected, {s.not_attempted} not attempted"
        ),
        ours=ours_html(s),
        published=published_html(conditions(rows)),
        plots=plots_html(make_plots(rows)),
        problems=problems_html(rows),
        generated=e(now()),
    )
