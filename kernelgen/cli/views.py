"""Rich renderables for the CLI's records (built here, printed by the commands of cli/)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kernelgen.records import BenchRecord, CandidateRecord, RunRecord, Verdict
from kernelgen.report.fmt import candidate_word, open_since, plural, verdict_word

if TYPE_CHECKING:
    from kernelgen.agent.results import RunStatus, SubmitResult
    from kernelgen.bench.profile import ProfileResult
    from kernelgen.run.optimize import OptimizeSummary


def _fmt(x: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "-" if x is None else f"{x:{spec}}{suffix}"


def ops_table(rows: list[dict[str, object]]) -> RenderableType:
    """Every operator; one whose reference does not load is marked, its error below the tables
    (an error names a file and a field: too long for a cell). Imported problems (KernelBench's)
    get a table of their own: their names are long, and they have no seed or library kernel."""
    own = [r for r in rows if not r.get("origin")]
    imported = [r for r in rows if r.get("origin")]
    table = Table(title="operators")
    for col in ("name", "seed", "generated", "cases", "cpu cases", "bench shapes"):
        table.add_column(col)
    for r in own:
        table.add_row(
            _op_name(r),
            "yes" if r["seed"] else "no",
            str(r["generated_status"]),
            *_op_cases(r),
            Text("broken: see below", style="red") if _broken(r) else ", ".join(r["bench_shapes"]),  # type: ignore[arg-type]
        )
    parts: list[RenderableType] = [table]
    if imported:
        problems = Table(title="imported problems")
        problems.add_column("name", overflow="fold")
        for col in ("cases", "cpu cases", "origin"):
            problems.add_column(col)
        for r in imported:
            problems.add_row(_op_name(r), *_op_cases(r), str(r["origin"]))
        parts.append(problems)
    parts += [
        Text.assemble((f"{r['name']}: ", "bold red"), str(r["error"])) for r in rows if _broken(r)
    ]
    return Group(*parts) if len(parts) > 1 else table


def _broken(r: dict[str, object]) -> bool:
    return r.get("error") is not None


def _op_name(r: dict[str, object]) -> Text:
    return Text(str(r["name"]), style="red" if _broken(r) else "")


def _op_cases(r: dict[str, object]) -> tuple[str, str]:
    if _broken(r):
        return "-", "-"
    return str(r["cases"]), str(r["interpreter_cases"])


def verdict_text(v: Verdict) -> Text:
    passed = sum(c.status == "passed" for c in v.cases)
    if not v.cases:
        where = "no case completed (the candidate never got through one)"
    else:
        where = f"{passed} of {plural(len(v.cases), 'case')} passed on {v.device}"
    if v.accepted:
        label = "ACCEPTED-PARTIAL" if v.outcome == "accepted-partial" else "ACCEPTED"
        style = "bold yellow" if v.outcome == "accepted-partial" else "bold green"
        text = Text.assemble((label, style), f"  {v.op}: {v.candidate}\n  {where}")
    else:
        text = Text.assemble(("REJECTED", "bold red"), f" [{v.category}] {v.reason}\n  {where}")
    # Why the rest did not run, grouped: on CPU that is the interpreter's limits, never a pass.
    reasons = Counter(c.note or "not run" for c in v.cases if c.status == "not_run")
    for note, count in sorted(reasons.items()):
        style = "yellow" if note.startswith("not run on CPU") else "dim"
        text.append(f"\n  {count} {note}", style=style)
    if v.accepted and v.device == "cpu" and reasons:
        text.append("\n  run with --device cuda for the final word", style="yellow")
    if v.duplicate_of:
        text.append(f"\n  same source as {v.duplicate_of}: judged once", style="dim")
    ph = v.phases
    compiled = (
        f" (truth {ph.truth:.1f}, compile {ph.compile:.1f}, start {ph.start:.1f}, "
        f"cases {ph.cases:.1f}, checks {ph.checks:.1f}"
        + (f", compiled for the GPU {ph.gpu_compile:.1f}" if ph.gpu_compile else "")
        + ")"
        if ph
        else ""
    )
    text.append(
        f"\n  seed {v.seed}, {v.seconds:.1f} s{compiled}, kernels: {', '.join(v.kernels) or '-'}"
    )
    if ph and ph.calls:
        c = ph.calls
        text.append(
            f"\n  {plural(c.calls, 'call')}: runner load {c.runner_load:.1f}, "
            f"flood {c.runner_flood:.1f}, call {c.runner_call:.1f}, save {c.runner_save:.1f}, "
            f"digest {c.runner_digest:.1f}; "
            f"judge wait {c.judge_wait:.1f}, read {c.judge_read:.1f}, check {c.judge_check:.1f} s",
            style="dim",
        )
    if v.sanitized:
        text.append(f"\n  compute-sanitizer clean: {', '.join(v.sanitized)}", style="green")
    return text


def bench_table(rec: BenchRecord) -> Table:
    table = Table(title=f"{rec.op} — {rec.label} on {rec.environment.gpu}")
    for col in (
        "shape",
        "dtype",
        "us",
        "eager us",
        "compile us",
        "x eager",
        "x compile",
        "GB/s",
        "TFLOP/s",
        "% limit",
        "bound",
    ):
        table.add_column(col, justify="right" if col not in ("shape", "dtype", "bound") else "left")
    for s in rec.shapes:
        table.add_row(
            s.shape,
            s.dtype,
            _fmt(s.candidate.median_us, ".1f"),
            _fmt(s.eager.median_us if s.eager else None, ".1f"),
            _fmt(s.compile.median_us if s.compile else None, ".1f"),
            _fmt(s.speedup_eager),
            _fmt(s.speedup_compile),
            _fmt(s.gbps, ".0f"),
            _fmt(s.tflops, ".2f"),
            _fmt(s.limit_pct, ".0f", "%"),
            s.bound,
        )
    c = rec.ceilings
    table.caption = (
        f"geomean x eager {_fmt(rec.geomean_eager)}, x compile "
        f"{_fmt(rec.geomean_compile)}; ceilings: copy {c.copy_gbps:.0f} GB/s, "
        f"bf16 {c.bf16_tflops:.0f} TFLOP/s, launch {c.launch_us:.1f} us"
    )
    return table


def candidate_line(rec: CandidateRecord, run: RunRecord) -> Text:
    colour = {"accepted": "green", "rejected": "red", "pending": "yellow"}[rec.status]
    word = candidate_word(rec)
    text = Text.assemble(f"{rec.id:<14}", (f"{word:<9} ", colour))
    if rec.category:
        text.append(f"[{rec.category}] ", style="red")
    if rec.reason:
        text.append(rec.reason[:160])
    if rec.speedup is not None:
        text.append(f"  x{rec.speedup:.3f} vs the best then", style="cyan")
    if rec.became_best:
        text.append("  NEW BEST", style="bold green")
    return text


def optimize_end(summary: OptimizeSummary) -> Text:
    """The last lines of `kernelgen optimize`: how the run ended, where it is, how to review it."""
    from kernelgen import store
    from kernelgen.report.model import relpath

    folder = relpath(store.run_dir(summary.op, summary.run_id))
    text = Text.assemble(
        (summary.op, "bold"),
        f" run {summary.run_id}: stopped: {summary.stopped}; best {summary.best or 'the seed'}; "
        f"promoted: {'yes' if summary.promoted else 'no'}",
    )
    text.append(f"\n  run folder: {folder}/")
    text.append(f"\n  review it:  kernelgen report {summary.op} --run {summary.run_id}")
    return text


def submit_text(result: SubmitResult) -> str:
    """`kernelgen agent submit`: each judged candidate (and its tuned child), its timings, the
    best after it."""
    lines = []
    for c in (result.candidate, result.tuned):
        if c is None:
            continue
        line = f"{c.id}: {verdict_word(c.status, c.outcome)}"
        if c.category:
            line += f" [{c.category}]"
        if c.reason:
            line += f": {c.reason}"
        if c.failing_case is not None:
            line += f" (case {c.failing_case.name})"
        lines.append(line)
        if c.outcome == "accepted-partial":
            lines.append(
                f"  accepted on the {plural(c.cases_run, 'case')} that ran; "
                f"{len(c.cases_not_run)} not run here (bf16 and GPU-only cases on CPU): "
                "a CUDA run gives the final word"
            )
        for s in c.shapes:
            lines.append(
                f"  {s.shape} {s.dtype}: {s.us:.1f} us, {s.limit_pct:.0f}% of limit "
                f"({s.bound}), vs best {_fmt(s.vs_best, '.2f', 'x')}, "
                f"vs eager {_fmt(s.vs_eager, '.2f', 'x')}, "
                f"vs compile {_fmt(s.vs_compile, '.2f', 'x')}"
            )
    if not result.timed:
        lines.append("not timed: Triton's CPU interpreter verifies, it does not time")
    lines.append(f"best: {result.best or 'the seed'}")
    return "\n".join(lines)


def agent_status_text(status: RunStatus) -> str:
    """`kernelgen agent status`: the run, whether it is open and since when it was last
    submitted to, each candidate in the words `agent submit` used."""
    state = status.state
    if status.state == "running" and status.proposer == "agent":
        state = open_since(status.candidates)
    lines = [
        f"run {status.run_id} ({status.op}, {status.device}, {status.proposer}"
        + (f" · {status.model}" if status.model else "")
        + f"; {state}): {plural(len(status.candidates), 'candidate')}, "
        f"{status.pending} pending, best {status.best or 'the seed'}"
    ]
    for c in status.candidates:
        why = f" [{c.category}]: {c.reason}" if c.category else ""
        gain = f", {c.speedup:.2f}x vs the best then" if c.speedup is not None else ""
        lines.append(f"  {c.id}: {verdict_word(c.status, c.outcome)}{gain}{why}")
    return "\n".join(lines)


def profile_table(result: ProfileResult) -> Table:
    table = Table(
        title=f"Nsight Compute: {result.op} {result.candidate} at {result.shape} "
        f"({result.dtype}{', ' + result.gpu if result.gpu else ''})"
    )
    for col in ("kernel", "us", "memory", "DRAM", "SM", "occupancy", "regs", "shared B", "grid"):
        table.add_column(col, justify="left" if col == "kernel" else "right")
    table.add_column("top stalls")
    for k in result.kernels:
        grid = "-" if k.grid_size is None else f"{k.grid_size} x {_fmt(k.block_size, 'd')}"
        table.add_row(
            k.name,
            _fmt(k.duration_us, ".1f"),
            _fmt(k.memory_pct, ".0f", "%"),
            _fmt(k.dram_pct, ".0f", "%"),
            _fmt(k.sm_pct, ".0f", "%"),
            _fmt(k.occupancy_pct, ".0f", "%"),
            _fmt(k.registers_per_thread, "d"),
            _fmt(k.shared_bytes_per_block, "d"),
            grid,
            ", ".join(f"{s.reason} {s.share_pct:.0f}%" for s in k.stalls[:3]) or "-",
        )
    return table
