"""`kernelgen suite kernelbench` and `kernelgen report kernelbench`: the pipeline over
KernelBench's problems, and its fast_p table. The work is kernelgen/kernelbench/suite.py's and
scores.py's; this parses, calls, and prints."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from kernelgen.cli.common import DeviceOpt, JsonOpt, _device, app, clean_errors, emit_json, out
from kernelgen.errors import UsageError

suite = typer.Typer(no_args_is_help=True, help="Run the pipeline over a benchmark's problems.")
app.add_typer(suite, name="suite")

# Options that take several values in one use (--level 1 2), as well as comma-separated.
MANY = ("--level", "--problems")


def spread(args: list[str], many: tuple[str, ...] = MANY) -> list[str]:
    """`--level 1 2` as `--level 1 --level 2`: click gives an option one value per use, so
    each value after an option of `many`'s own, up to the next option, is one more use of it.
    The command takes no arguments, so no value is mistaken for one."""
    out: list[str] = []
    current: str | None = None
    own_value = False
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if own_value:
            out.append(arg)
            own_value = False
        elif arg.startswith("-"):
            name = arg.split("=", 1)[0]
            current = name if name in many else None
            own_value = current is not None and "=" not in arg
            out.append(arg)
        elif current is not None:
            out += [current, arg]
        else:
            out.append(arg)
    return out


class _ManyValues(typer.core.TyperCommand):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, spread(args))


@suite.command("kernelbench", cls=_ManyValues)
@clean_errors
def kernelbench(
    level: Annotated[
        list[str] | None,
        typer.Option("--level", help="levels: --level 1 2, --level 1,2 or --level 1 --level 2"),
    ] = None,
    problems: Annotated[
        list[str] | None,
        typer.Option(
            "--problems",
            help="problem numbers, LEVEL:NUMBER or op names (--problems 19 23, or 19,23)",
        ),
    ] = None,
    checkout: Annotated[
        Path | None, typer.Option("--from", help="a KernelBench checkout (or a levelN folder)")
    ] = None,
    proposer: Annotated[
        str | None,
        typer.Option(help="llm, tune, replay, files or agent; default: llm where configured"),
    ] = None,
    budget_s: Annotated[
        float | None, typer.Option("--budget-s", help="per problem: its run's time limit")
    ] = None,
    device: Annotated[DeviceOpt | None, typer.Option()] = None,
    source: Annotated[
        Path | None, typer.Option(help="files: a folder holding one <op>/ folder of candidates")
    ] = None,
    rounds: Annotated[int, typer.Option(min=1)] = 4,
    candidates: Annotated[int, typer.Option(min=1, help="per round")] = 2,
    repairs: Annotated[int, typer.Option(min=0)] = 2,
    model: Annotated[str | None, typer.Option(help="LLM model name")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    skip_conv: Annotated[
        bool, typer.Option("--skip-conv", help="leave convolutions out, with that reason")
    ] = False,
    retry: Annotated[bool, typer.Option(help="attempt again what is not accepted")] = False,
    redo: Annotated[
        bool,
        typer.Option(
            "--redo",
            help="attempt the --problems again, accepted ones too (new candidates in their "
            "folders): the new run's best replaces the record's; where it accepts nothing, the "
            "earlier entry stands; with files, one whose runs judged every file is left as is",
        ),
    ] = False,
    rejudge: Annotated[
        bool,
        typer.Option(
            "--rejudge",
            help="attempt again each accepted problem (of --problems, else all) whose run "
            "another GPU made, as an H100's on the H200: this GPU's verdict stands, a "
            "rejection too",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            min=1,
            help="problems attempted at once, each in processes of its own; they share the GPU "
            "under a lock that lets nothing run beside a timing",
        ),
    ] = 1,
    heavy: Annotated[
        int,
        typer.Option(
            min=1,
            help="of the jobs, how many may work on problems past a job's share of GPU memory "
            "(level 1's own sizes) at once",
        ),
    ] = 1,
    tune: Annotated[
        bool,
        typer.Option(
            help="search each accepted candidate's TUNE_SPACE in its run (--no-tune: a lease's "
            "time goes to the problems; tune the winners after)",
        ),
    ] = True,
    first_accepted: Annotated[
        bool,
        typer.Option(
            "--first-accepted",
            help="each run stops at its first accepted candidate, judged in the proposer's "
            "order (with --candidates 1, one a round: the fallbacks only where needed)",
        ),
    ] = False,
    bench: Annotated[
        bool,
        typer.Option(
            help="time each accepted candidate in its run too (--no-bench: only KernelBench's "
            "timing of it, which the suite makes anyway)",
        ),
    ] = True,
    promote: Annotated[
        bool,
        typer.Option(
            "--promote",
            help="promote each accepted problem into generated/ (default: kept in its run)",
        ),
    ] = False,
    name: Annotated[
        str, typer.Option(help="the state file: evaluations/kernelbench/NAME.json")
    ] = "suite",
    json_out: JsonOpt = False,
) -> None:
    """Attempt each problem of the levels (imported from --from as the suite reaches it), one
    run each within --budget-s, --jobs at a time, and check what is accepted by KernelBench's
    criteria too. Resumable: run it again and it goes on where it stopped."""
    from kernelgen.kernelbench.suite import SuiteOptions, run_suite

    options = SuiteOptions(
        name=name,
        levels=_levels(level),
        problems=_split(problems),
        proposer=proposer,
        device=_device(device),  # type: ignore[arg-type]
        budget_s=budget_s,
        rounds=rounds,
        candidates=candidates,
        repairs=repairs,
        model=model,
        base_url=base_url,
        source=str(source) if source else None,
        checkout=str(checkout) if checkout else None,
        skip_conv=skip_conv,
        retry=retry,
        redo=redo,
        rejudge=rejudge,
        promote=promote,
        jobs=jobs,
        heavy=heavy,
        tune=tune,
        first_accepted=first_accepted,
        bench=bench,
    )

    def event(message: str) -> None:
        if not json_out:
            out.print(escape(message), style="dim", soft_wrap=True)

    def done(p) -> None:  # noqa: ANN001 - a SuiteProblem
        if not json_out:
            out.print(_done_line(p), soft_wrap=True)

    run_suite(options, event, done)
    report_kernelbench(json_out=json_out, name=name, levels=options.levels)


def report_kernelbench(
    json_out: bool = False,
    fmt: str = "text",
    out_path: Path | None = None,
    name: str | None = None,
    levels: list[int] | None = None,
) -> None:
    """`kernelgen report kernelbench`: the table, --json its last line, --format html a page."""
    from kernelgen.kernelbench.scores import gather, report_json, state_dir, summarize

    rows = gather(name, levels)
    if json_out:
        emit_json(report_json(rows))
        return
    if fmt == "html":
        from kernelgen.kernelbench.page import render_page
        from kernelgen.report import write_report

        path = out_path or state_dir() / "report.html"
        write_report(path, render_page(rows))
        out.print(f"wrote {path}")
        return
    out.print(_table(rows))
    out.print(_summary(summarize(rows)))


def _split(values: list[str] | None) -> list[str]:
    return [v for text in values or [] for v in text.replace(",", " ").split()]


def _levels(values: list[str] | None) -> list[int]:
    items = _split(values)
    bad = [v for v in items if not v.isdigit()]
    if bad:
        raise UsageError(f"--level {bad[0]}: expected a level number (1, 2, ...)")
    return [int(v) for v in items] or [1, 2]


def _done_line(p) -> str:  # noqa: ANN001 - a SuiteProblem
    word = {"accepted": "green", "rejected": "red"}.get(p.status, "yellow")
    kb = "" if p.kb_correct is None else f", KB {'correct' if p.kb_correct else 'incorrect'}"
    why = f": {p.category + ' - ' if p.category else ''}{p.reason}" if p.reason else ""
    return f"[{word}]{p.status}[/{word}] {escape(p.op)}{kb}{escape(why)}"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _table(rows) -> Table:  # noqa: ANN001 - scores.Row
    t = Table(title="kernelgen on KernelBench")
    # Operator names run to 60 characters: they fold, and the figures keep their width.
    t.add_column("problem", max_width=36, overflow="fold")
    t.add_column("status (why)", min_width=20, ratio=1)
    t.add_column("KB", no_wrap=True)
    t.add_column("x eager", justify="right", no_wrap=True)
    t.add_column("x compile", justify="right", no_wrap=True)
    for r in rows:
        style = {"accepted": "green", "rejected": "red"}.get(r.status, "yellow")
        word = Text(r.status + (f" ({r.category})" if r.category else ""), style=style)
        if r.reason:
            word.append(f": {r.reason}", style="dim")
        kb = "-" if r.kb_correct is None else ("yes" if r.kb_correct else "no")
        name = Text(f"{r.level}:{r.problem} ", style="bold").append(r.op)
        t.add_row(name, word, kb, _x(r.speedup_vs_eager), _x(r.speedup_vs_compile))
    # Whose figures they are: an H100's are not the H200's the published ones are set beside.
    gpus = sorted({r.device for r in rows if r.device not in (None, "cpu", "cuda")})
    t.caption = f"measured on {', '.join(gpus)}" if gpus else None
    return t


def _summary(s) -> RenderableType:  # noqa: ANN001 - scores.Summary
    """fast_p and geomeans, one column per level and baseline: narrow enough for 80 columns."""
    parts = [*((f"level {k}", v) for k, v in s.levels.items()), ("all", s)]
    t = Table(title="fast_p over every problem of the record")
    t.add_column("")
    for label, _ in parts:
        t.add_column(f"{label}\neager", justify="right")
        t.add_column(f"{label}\ncompile", justify="right")

    def row(name: str, get) -> None:  # noqa: ANN001 - Against -> str
        t.add_row(name, *(get(getattr(v, a)) for _, v in parts for a in ("eager", "compile")))

    row("fast_0", lambda a: f"{a.fast_0:.0%}")
    row("fast_1", lambda a: f"{a.fast_1:.0%}")
    row("fast_1.5", lambda a: f"{a.fast_1_5:.0%}")
    row("geomean", lambda a: _x(a.geomean))
    row("timed", lambda a: str(a.timed))
    counts = " · ".join(
        f"{label}: {v.problems} problems, {v.accepted} accepted, {v.kb_correct} KB correct"
        for label, v in parts
    )
    # A record rejudged part-way: what each GPU's figures give, over the problems it timed.
    by_gpu = [
        f"{gpu}: {v.accepted} accepted, fast_1 {v.eager.fast_1:.0%} vs eager and "
        f"{v.compile.fast_1:.0%} vs compile, geomeans {_x(v.eager.geomean)} and "
        f"{_x(v.compile.geomean)}"
        for gpu, v in s.gpus.items()
    ]
    return Group(t, Text(counts, style="dim"), *(Text(line, style="dim") for line in by_gpu))
