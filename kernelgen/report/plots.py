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
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode()


def _labels(d: ReportData) -> list[str]:
    several = len({r.dtype for r in d.shapes}) > 1
    return [f"{r.shape} {r.dtype}" if several else r.shape for r in d.shapes]


def _style(ax, labels: list[str]) -> None:
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(
        labels,
        rotation=20 if len(labels) > 4 else 0,
        ha="right" if len(labels) > 4 else "center",
        fontsize=8,
    )
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _bars(ax, series: list[tuple[str, list[float | None], str]], fmt: str) -> None:
    width = 0.8 / len(series)
    for i, (name, values, color) in enumerate(series):
        xs = [k + (i - (len(series) - 1) / 2) * width for k in range(len(values))]
        ys = [v if v is not None else 0.0 for v in values]
        bars = ax.bar(xs, ys, width, label=name, color=color)
        for b, v in zip(bars, values, strict=True):
            if v is not None:
                ax.annotate(
                    fmt.format(v),
                    (b.get_x() + b.get_width() / 2, b.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=6.5,
                    xytext=(0, 1),
                    textcoords="offset points",
                )


def speedup_plot(Figure, d: ReportData) -> Plot:
    labels = _labels(d)
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot()
    _bars(
        ax,
        [
            ("vs torch eager", [r.speedup_eager for r in d.shapes], _EAGER),
            ("vs torch.compile", [r.speedup_compile for r in d.shapes], _COMPILE),
            ("vs seed", [r.speedup_seed for r in d.shapes], _SEED),
        ],
        "{:.2f}",
    )
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_ylabel("speedup (×, higher is better)")
    ax.set_title(f"{d.op}: speedup of {d.focus_label} per shape", fontsize=10)
    ax.legend(fontsize=8, frameon=False, ncols=3, loc="upper left")
    ax.margins(y=0.15)
    _style(ax, labels)
    return Plot(
        id="plot-speedup",
        title="Speedup per shape",
        uri=_uri(fig),
        caption="Median time of each peer over the time of "
        f"{d.focus_label}; the line at 1× is parity.",
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
    ax.set_ylim(0, top * 1.12)
    ax.set_title(f"{d.op}: % of the measured limit per shape", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
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
