"""The report's plots, drawn with matplotlib (imported lazily: only the HTML page needs it) and
returned as self-contained SVG data URIs, so the page needs nothing from the network."""

from __future__ import annotations

import base64
import io
import sys

from pydantic import BaseModel, ConfigDict

from kernelgen.report.model import ReportData

_EAGER, _COMPILE, _SEED, _BEST = "#4c72b0", "#dd8452", "#55a868", "#8172b3"


class Plot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    caption: str
    uri: str


class Plots(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plots: list[Plot]
    unavailable: str | None = None


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        return None
    # The object-oriented Figure API below never opens a window; Agg stays the default backend
    # unless the caller already chose one by importing pyplot.
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure


def _uri(fig) -> str:
    import matplotlib

    buf = io.BytesIO()
    # No date, and ids hashed from a fixed salt rather than a fresh uuid: the same figures make
    # the same bytes, so a committed report is not rewritten for nothing.
    with matplotlib.rc_context({"svg.hashsalt": "kernelgen"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode()


def _labels(d: ReportData) -> list[str]:
    several = len({r.dtype for r in d.shapes}) > 1
    return [f"{r.shape} {r.dtype}" if several else r.shape for r in d.shapes]


def _style(ax, labels: list[str]) -> None:
    many = len(labels) > 7
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(
        labels, rotation=25 if many else 0, ha="right" if many else "center", fontsize=8
    )
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3, which="major")
    ax.set_axisbelow(True)


def _bars(
    ax, series: list[tuple[str, list[float | None], str]], fmt: str, base: float = 0.0
) -> None:
    """Grouped bars, each drawn from base (0, or 1× for speedups: up is faster, down slower)."""
    width = 0.8 / len(series)
    for i, (name, values, color) in enumerate(series):
        xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(values))]
        heights = [v - base if v is not None else 0.0 for v in values]
        ax.bar(xs, heights, width, bottom=base, label=name, color=color)
        for x, v in zip(xs, values, strict=True):
            if v is not None:
                ax.annotate(
                    fmt.format(v),
                    (x, v),
                    ha="center",
                    va="bottom" if v >= base else "top",
                    fontsize=6.5,
                    xytext=(0, 1 if v >= base else -1),
                    textcoords="offset points",
                )


def speedup_plot(Figure, d: ReportData) -> Plot:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    series = [
        ("vs torch eager", [r.speedup_eager for r in d.shapes], _EAGER),
        ("vs torch.compile", [r.speedup_compile for r in d.shapes], _COMPILE),
    ]
    if d.focus is not None:
        series.append(("vs seed", [r.speedup_seed for r in d.shapes], _SEED))
    values = [v for _, vs, _ in series for v in vs if v is not None] or [1.0]
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    # Log scale, bars from 1x: 2x faster and 2x slower are the same length, and one shape that
    # is 10x faster does not flatten the others.
    ax.set_yscale("log", base=2)
    lo, hi = min(min(values), 1.0) / 1.6, max(max(values), 1.0) * 1.8
    ax.set_ylim(lo, hi)
    ticks = [2.0**k for k in range(-10, 11) if lo <= 2.0**k <= hi]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    _bars(ax, series, "{:.2f}", base=1.0)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("speedup (log; above 1× is faster)")
    ax.set_title(f"{d.op}: speedup of {d.focus_label} per shape", fontsize=10)
    ax.legend(fontsize=8, frameon=False, ncols=3, loc="upper left")
    _style(ax, _labels(d))
    return Plot(
        id="plot-speedup",
        title="Speedup per shape",
        uri=_uri(fig),
        caption=f"Median time of each peer over the time of {d.focus_label}, on a log scale: "
        "bars up from 1× are faster, bars down are slower.",
    )


def rounds_plot(Figure, d: ReportData) -> Plot:
    labels = _labels(d)
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    xs = list(range(len(d.rounds)))
    for k, name in enumerate(labels):
        ys = [p.times_us[k] for p in d.rounds]
        ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o", ms=3.5, label=name)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([p.label for p in d.rounds], fontsize=8)
    ax.set_xlabel("after round")
    ax.set_ylabel("best time (µs, log)")
    ax.set_title(f"{d.op}: best time per round", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    changes = [p.best for p in d.rounds]
    caption = "Median time of the best kernel after each round, per shape; best after the "
    caption += "last round: " + changes[-1] + "."
    return Plot(id="plot-rounds", title="Best time per round", uri=_uri(fig), caption=caption)


def limit_plot(Figure, d: ReportData) -> Plot:
    labels = _labels(d)
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    series = [("seed", [r.seed_limit_pct for r in d.shapes], _SEED)]
    if d.focus is not None:
        series.append((d.focus_label, [r.limit_pct for r in d.shapes], _BEST))
    _bars(ax, series, "{:.0f}%")
    ax.axhline(100, color="black", lw=0.8, ls="--")
    ax.set_ylabel("% of the device limit")
    top = max([100.0] + [v for _, vs, _ in series for v in vs if v is not None])
    ax.set_ylim(0, top * 1.25)
    ax.set_title(f"{d.op}: % of the measured limit per shape", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper right", ncols=2)
    pairs = zip(labels, d.shapes, strict=True)
    _style(ax, [f"{n}\n({r.bound})" if r.bound else n for n, r in pairs])
    return Plot(
        id="plot-limit",
        title="% of the limit per shape",
        uri=_uri(fig),
        caption="Share of the binding ceiling (copy bandwidth or bf16 matmul rate) "
        "measured on the device; decode-sized shapes are bound by launch, not by it.",
    )


def make_plots(d: ReportData) -> Plots:
    if not d.timed:
        return Plots(plots=[], unavailable="No plots: this run has no timings.")
    Figure = _matplotlib()
    if Figure is None:
        return Plots(
            plots=[],
            unavailable="Plots unavailable: matplotlib is not installed "
            "(pip install 'kernelgen[report]').",
        )
    plots = [speedup_plot(Figure, d)]
    if len(d.rounds) > 1:
        plots.append(rounds_plot(Figure, d))
    if any(r.limit_pct is not None for r in d.shapes):
        plots.append(limit_plot(Figure, d))
    return Plots(plots=plots)
