"""The pipeline's commands: ops, new, verify, bench, optimize, promote, report."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from kernelgen.cli import views
from kernelgen.cli.common import DeviceOpt, _device, app, clean_errors, emit_json, out
from kernelgen.errors import UsageError


@app.command()
@clean_errors
def ops(json_out: Annotated[bool, typer.Option("--json", help="JSON on the last line")] = False):
    """List the operators: seed, generated version, correctness cases, benchmark shapes. One
    whose reference does not load is listed with its error, and the exit code is 2."""
    from kernelgen.package.catalog import list_ops

    rows = list_ops()
    if json_out:
        emit_json({"ops": rows})
    else:
        out.print(views.ops_table(rows))
    if any(r["error"] for r in rows):
        raise typer.Exit(2)


@app.command()
@clean_errors
def new(
    op: Annotated[str, typer.Argument(help="the new operator's name, e.g. gelu_and_mul")],
    like: Annotated[
        str,
        typer.Option(
            "--like",
            help="the operator whose shape to start from: softmax or rms_norm (row-wise), "
            "silu_and_mul (elementwise/gated), router_gemm (GEMM-like)",
        ),
    ],
):
    """Write references/OP.py and seeds/OP.py in the shape of an existing operator: its math
    under the new name, TODOs where yours goes. The seed verifies on CPU as written."""
    from kernelgen.spec.scaffold import new_op

    for line in new_op(op, like).summary():
        out.print(escape(line), soft_wrap=True)


GpusOpt = Annotated[
    str | None,
    typer.Option(
        "--gpus",
        help="N or all: one evaluation worker per GPU, each judging in sandboxes of its own "
        "(on --device cpu: N interpreter workers)",
    ),
]
RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        help="ADDRESS or auto: the workers as Ray actors (num_gpus=1) on an existing cluster; "
        + escape("needs pip install 'kernelgen[ray]'"),
    ),
]


def _workers(gpus: str | None, ray: str | None, device: str) -> None:
    """Bad --gpus / --ray values fail here, in one line, before anything starts."""
    if gpus is not None:
        from kernelgen.run.workers import local_slots, parse_gpus

        if ray is None:
            local_slots(gpus, device)
        else:
            parse_gpus(gpus, device)
    if ray is not None:
        from kernelgen.run.ray_pool import connect

        connect(ray)  # not installed, or no cluster there: one line, before anything starts


def _verdicts_table(verdicts: list[Any]) -> Table:
    t = Table(title=f"{sum(v.accepted for v in verdicts)} of {len(verdicts)} accepted")
    t.add_column("file", overflow="fold")
    for col in ("outcome", "category", "worker's device", "seconds"):
        t.add_column(col)
    for v in verdicts:
        env = v.environment
        where = (env.gpu or env.device) if env is not None else v.device
        t.add_row(v.candidate, v.outcome or "", v.category or "", where, f"{v.seconds:.1f}")
    return t


@app.command()
@clean_errors
def verify(
    op: Annotated[str, typer.Argument(help="operator name, e.g. softmax")],
    files: Annotated[list[Path], typer.Argument(help="candidate module(s)")],
    device: Annotated[DeviceOpt | None, typer.Option(help="default: cuda when present")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="the whole verdict as JSON")] = False,
    seed: Annotated[int | None, typer.Option(help="input seed (default: fresh)")] = None,
    timeout: Annotated[
        float | None,
        typer.Option(help="deadline of each call in seconds (default 50 cpu, 25 cuda)"),
    ] = None,
    sanitize: Annotated[
        bool, typer.Option(help="CUDA: also run the small cases under compute-sanitizer")
    ] = False,
    gpu_target: Annotated[
        str,
        typer.Option(
            help="CPU: after the interpreter's cases, compile the kernels for this GPU "
            "(sm_90: the H200), which the interpreter cannot stand in for; none skips it"
        ),
    ] = "sm_90",
    gpus: GpusOpt = None,
    ray: RayOpt = None,
):
    """Judge candidates: exit 0 when all are accepted (accepted-partial too: some cases not
    run), 1 when one is rejected (with category and reason), 2 usage. Several files are judged
    at once over --gpus / --ray workers, else one after another."""
    from kernelgen.run.verify_many import verify_files
    from kernelgen.verify import target

    if gpu_target != "none" and gpu_target not in target.TARGETS:
        raise UsageError(
            f"--gpu-target {gpu_target!r}: expected none or one of {', '.join(target.TARGETS)}"
        )
    dev = _device(device, ray)
    _workers(gpus, ray, dev)
    verdicts = verify_files(
        op,
        files,
        device=dev,
        seed=seed,
        timeout_s=timeout,
        sanitize=sanitize,
        gpu_target=None if gpu_target == "none" else gpu_target,
        gpus=gpus,
        ray=ray,
    )
    if json_out:
        if len(verdicts) == 1:
            emit_json(verdicts[0].model_dump(mode="json"))
        else:
            emit_json({"verdicts": [v.model_dump(mode="json") for v in verdicts]})
    else:
        for verdict in verdicts:
            if len(verdicts) > 1:  # a rejection's text does not name its file
                out.print(f"[bold]{verdict.candidate}[/bold]", soft_wrap=True)
            out.print(views.verdict_text(verdict))
        if len(verdicts) > 1:
            out.print(_verdicts_table(verdicts))
    raise typer.Exit(0 if all(v.accepted for v in verdicts) else 1)


@app.command()
@clean_errors
def bench(
    op: Annotated[str, typer.Argument()],
    file: Annotated[Path | None, typer.Argument(help="candidate module")] = None,
    seed: Annotated[bool, typer.Option("--seed", help="bench seeds/OP.py")] = False,
    generated: Annotated[
        bool, typer.Option("--generated", help="bench the library's kernel")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json")] = False,
):
    """Time a kernel against torch eager and torch.compile on every benchmark shape (CUDA)."""
    from kernelgen.package.catalog import bench_target

    label, path = bench_target(op, file, seed, generated)
    from kernelgen.bench import bench_files, save_bench

    (record,) = bench_files(op, [(label, path)], peers=True)
    saved = save_bench(record, op)
    if json_out:
        emit_json(record.model_dump(mode="json") | {"saved": str(saved)})
    else:
        out.print(views.bench_table(record))
        out.print(f"saved {saved}")


class ProposerOpt(str, Enum):
    llm = "llm"
    tune = "tune"
    replay = "replay"
    files = "files"


class _LiveObserver:
    """Rounds done, the step under way, best so far and budget, above the finished candidates.
    Without a Live (--json) it shows nothing."""

    def __init__(self, live: Live | None):
        self.live = live
        self.status = "starting"
        self.run: Any = None

    def _panel(self) -> Table:
        t = Table.grid(padding=(0, 2))
        run = self.run
        if run is not None:
            b = run.settings.budget
            # Rounds finished, as the report's "Rounds done" counts them; the round under way
            # is named by the step below ("round 2: asking ...").
            t.add_row("run", run.id, "rounds done", f"{run.rounds_done} of {b.rounds}")
            cost = f"${run.usage.cost_usd:.4f}" if run.usage.cost_usd is not None else "-"
            t.add_row(
                "best",
                run.best or "seed",
                "budget",
                f"{run.usage.tokens} tokens, {cost}, {run.elapsed_s:.0f} s",
            )
        t.add_row("now", self.status)
        return t

    def event(self, message: str) -> None:
        self.status = message
        if self.live:
            self.live.update(self._panel())

    def candidate(self, record: Any, run: Any) -> None:
        self.run = run
        if self.live and record.status != "pending":
            self.live.console.print(views.candidate_line(record, run))
        if self.live:
            self.live.update(self._panel())


class _PlainObserver:
    """Piped output (a log file, CI): one plain line per step as it starts and one per judged
    candidate, each flushed as it is printed, so a log shows where a run is from its first
    second. (A Live panel off a terminal prints only when it ends.)"""

    def __init__(self, op: str):
        self.op = op
        self.started = time.monotonic()

    def _line(self, text: str) -> None:
        elapsed = time.monotonic() - self.started
        out.print(f"{self.op} {elapsed:6.1f}s  {text}", markup=False, soft_wrap=True)

    def event(self, message: str) -> None:
        self._line(message)

    def candidate(self, record: Any, run: Any) -> None:
        if record.status != "pending":
            self._line(views.candidate_line(record, run).plain)


@app.command()
@clean_errors
def optimize(
    ops: Annotated[list[str] | None, typer.Argument(help="operators (or --all)")] = None,
    all_ops: Annotated[bool, typer.Option("--all", help="every operator")] = False,
    proposer: Annotated[
        ProposerOpt | None,
        typer.Option(help="default: llm when a model and endpoint are configured, else tune"),
    ] = None,
    model: Annotated[str | None, typer.Option(help="LLM model name")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (or OPENAI_API_KEY)")] = None,
    rounds: Annotated[int, typer.Option(min=1)] = 4,
    candidates: Annotated[int, typer.Option(min=1, help="per round")] = 2,
    repairs: Annotated[int, typer.Option(min=0, help="repair turns per failing candidate")] = 2,
    device: Annotated[DeviceOpt | None, typer.Option()] = None,
    max_tokens_total: Annotated[int | None, typer.Option(help="token budget")] = None,
    max_cost: Annotated[float | None, typer.Option(help="budget in USD")] = None,
    time_limit: Annotated[float | None, typer.Option(help="seconds")] = None,
    target_pct: Annotated[float | None, typer.Option(help="stop at this % of the limit")] = None,
    resume: Annotated[str | None, typer.Option(help="continue this run id")] = None,
    source: Annotated[
        str | None, typer.Option("--from", help="replay run id, or files folder or .py file")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
    gpus: GpusOpt = None,
    ray: RayOpt = None,
    promote: Annotated[
        bool, typer.Option(help="CUDA: sanitize the best and promote it into generated/")
    ] = True,
    tune: Annotated[
        bool, typer.Option(help="CUDA: search each accepted candidate's TUNE_SPACE as its child")
    ] = True,
    first_accepted: Annotated[
        bool,
        typer.Option(
            "--first-accepted",
            help="stop at the first accepted candidate, judged in the proposer's order",
        ),
    ] = False,
    bench: Annotated[
        bool,
        typer.Option(
            help="CUDA: time each accepted candidate against the best (--no-bench: untimed; "
            "without a seed the first accepted is the best)",
        ),
    ] = True,
):
    """Run the loop: propose, verify, tune, bench and keep the best; promote on CUDA."""
    from kernelgen.run.optimize import OptimizeOptions, optimize_op, resolve_ops

    names = resolve_ops(ops or [], all_ops, resume)
    dev = _device(device, ray)
    _workers(gpus, ray, dev)
    if resume:
        from kernelgen.agent import session as agent
        from kernelgen.propose.agent import NO_PROPOSER
        from kernelgen.store import load_run

        if load_run(names[0], resume).settings.proposer == "agent":
            status = agent.finish_pending(resume)
            if json_out:
                emit_json(status.model_dump(mode="json"))
            else:
                out.print(f"{NO_PROPOSER}; pending judgements finished")
                out.print(views.agent_status_text(status), markup=False, soft_wrap=True)
            return
    options = OptimizeOptions(
        proposer=proposer.value if proposer else None,
        model=model,
        base_url=base_url,
        api_key=api_key,
        rounds=rounds,
        candidates=candidates,
        repairs=repairs,
        device=dev,
        max_tokens_total=max_tokens_total,
        max_cost_usd=max_cost,
        time_limit_s=time_limit,
        target_pct=target_pct,
        resume=resume,
        source=source,
        gpus=gpus,
        ray=ray,
        promote=promote,
        tune=tune,
        first_accepted=first_accepted,
        bench=bench,
    )
    for name in names:
        if json_out:
            summary = optimize_op(name, options, _LiveObserver(None))
            emit_json(summary.model_dump(mode="json"))
            continue
        if out.is_terminal:
            observer = _LiveObserver(None)
            with Live(observer._panel(), console=out, refresh_per_second=4) as live:
                observer.live = live
                summary = optimize_op(name, options, observer)
            out.print()
        else:
            plain = _PlainObserver(name)
            plain.event(f"starting on {dev}" + (" (resuming)" if resume else ""))
            summary = optimize_op(name, options, plain)
        out.print(views.optimize_end(summary), soft_wrap=True)


@app.command()
@clean_errors
def promote(
    op: Annotated[str, typer.Argument()],
    run: Annotated[str | None, typer.Option("--run", help="run id")] = None,
    candidate: Annotated[str | None, typer.Option(help="default: the run's best")] = None,
    again: Annotated[
        bool,
        typer.Option(
            "--again",
            help="promote the shipped kernel again from its manifest entry (same source and "
            "figures), to re-derive its header and dispatch table",
        ),
    ] = False,
):
    """Write a run's accepted, CUDA-measured candidate into generated/kernelgen_ops."""
    from kernelgen import package

    if again == (run is not None) or (again and candidate is not None):
        raise UsageError("promote: give --run RUN [--candidate ID], or --again alone")
    path = package.promote_again(op) if again else package.promote_from_run(op, run, candidate)
    out.print(f"promoted into {path}")


class FormatOpt(str, Enum):
    text = "text"
    md = "md"
    html = "html"


@app.command()
@clean_errors
def report(
    op: Annotated[str | None, typer.Argument(help="operator (or --all)")] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", help="default: the run the library ships, else the latest"),
    ] = None,
    candidate: Annotated[str | None, typer.Option(help="diff this candidate vs its parent")] = None,
    fmt: Annotated[FormatOpt, typer.Option("--format")] = FormatOpt.text,
    out_path: Annotated[Path | None, typer.Option("--out", help="also write here")] = None,
    all_ops: Annotated[bool, typer.Option("--all", help="the library's status page")] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="with --all or kernelbench: JSON on the last line")
    ] = False,
):
    """Review a run: summary, per-shape table, history, and the diff from seed to best.
    `report kernelbench`: the KernelBench suite's fast_p table."""
    from kernelgen import report as reports

    if all_ops:
        status = reports.render_status(json_mode=json_out)
        if json_out:
            emit_json(status.data.model_dump(mode="json"))
        else:
            for item in status.renderables:
                out.print(item)
        return
    if op is None:
        raise UsageError("name an operator, or pass --all")
    if op == "kernelbench":
        # The suite's table (kbsuite.py), not an operator: imported ones are named kb<level>_...
        from kernelgen.cli.kbsuite import report_kernelbench

        return report_kernelbench(json_out=json_out, fmt=fmt.value, out_path=out_path)
    result = reports.render_run(op, run_id=run, candidate=candidate, fmt=fmt.value, out=out_path)
    for item in result.renderables:
        out.print(item)
