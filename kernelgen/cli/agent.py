"""A coding agent's commands: `kernelgen agent ...` through the shell, `kernelgen mcp` over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernelgen.cli import views
from kernelgen.cli.common import DeviceOpt, JsonOpt, _device, app, clean_errors, emit_json, out
from kernelgen.errors import UsageError


@app.command("mcp")
@clean_errors
def mcp_serve():
    """Serve the agent tools (list_operators, start_run, get_context, submit_candidate,
    run_status, profile, promote, report) to a coding agent over MCP, on stdio."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "kernelgen mcp needs the MCP SDK: pip install 'kernelgen[mcp]' "
            "(scripts/setup.sh installs it)"
        ) from None
    from kernelgen.agent.mcp import serve

    serve()


agent_app = typer.Typer(
    no_args_is_help=True,
    help="A coding agent as the proposer, through the shell: start a run, read its context, "
    "submit candidates, read the verdicts.",
)
app.add_typer(agent_app, name="agent")


@agent_app.command("start")
@clean_errors
def agent_start(
    op: Annotated[str, typer.Argument(help="operator name, e.g. softmax")],
    device: Annotated[DeviceOpt | None, typer.Option(help="default: cuda when present")] = None,
    model: Annotated[str | None, typer.Option(help="the agent's model, for the record")] = None,
    json_out: JsonOpt = False,
):
    """Start a run with proposer 'agent'; prints its id (on CUDA, after the seed is timed)."""
    from kernelgen.agent import session as agent

    run = agent.start_run(op, _device(device), model)
    if json_out:
        emit_json({"run_id": run.id, "op": run.op, "device": run.settings.device})
    else:
        out.print(f"started {run.op} run {run.id} on {run.settings.device}")
        out.print(f"next: kernelgen agent context {run.id}")


@agent_app.command("context")
@clean_errors
def agent_context(run_id: Annotated[str, typer.Argument()], json_out: JsonOpt = False):
    """What the llm proposer's prompt holds: spec, reference, seed, best, timings, history,
    the last failure."""
    from kernelgen.agent import session as agent

    ctx = agent.get_context(run_id)
    if json_out:
        emit_json(ctx.model_dump(mode="json"))
    else:
        print(ctx.prompt)  # plain print: the prompt is Markdown with code, not rich markup
        print(f"\n(next candidate: {ctx.next_candidate}, judged against {ctx.parent})")


@agent_app.command("submit")
@clean_errors
def agent_submit(
    run_id: Annotated[str, typer.Argument()],
    file: Annotated[Path, typer.Argument(help="candidate module")],
    note: Annotated[
        str | None, typer.Option(help="why this candidate (kept as its transcript)")
    ] = None,
    json_out: JsonOpt = False,
):
    """Judge one candidate as the loop does: exit 0 accepted, 1 rejected, 2 usage."""
    from kernelgen.agent import session as agent

    if not file.is_file():
        raise UsageError(f"{file}: no such file; expected the candidate module")
    try:
        source = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{file}: not UTF-8 text; expected a Python module") from None
    result = agent.submit_candidate(run_id, source, note)
    if json_out:
        emit_json(result.model_dump(mode="json"))
    else:
        out.print(views.submit_text(result), markup=False, soft_wrap=True)
    raise typer.Exit(0 if result.accepted else 1)


@agent_app.command("status")
@clean_errors
def agent_status(run_id: Annotated[str, typer.Argument()], json_out: JsonOpt = False):
    """The run's candidates with their verdicts, and its best."""
    from kernelgen.agent import session as agent

    status = agent.run_status(run_id)
    if json_out:
        emit_json(status.model_dump(mode="json"))
    else:
        out.print(views.agent_status_text(status), markup=False, soft_wrap=True)


@agent_app.command("profile")
@clean_errors
def agent_profile(
    run_id: Annotated[str, typer.Argument()],
    candidate: Annotated[
        str | None, typer.Option(help="candidate id or 'seed'; default: the run's best")
    ] = None,
    shape: Annotated[
        str | None, typer.Option(help="bench shape; default: the best's worst vs its peers")
    ] = None,
    json_out: JsonOpt = False,
):
    """Nsight Compute's summary of a candidate's kernels at one bench shape (CUDA runs)."""
    from kernelgen.agent import session as agent

    result = agent.profile(run_id, candidate, shape)
    if json_out:
        emit_json(result.model_dump(mode="json"))
        return
    out.print(views.profile_table(result))
    out.print(result.summary, markup=False, soft_wrap=True)


@agent_app.command("promote")
@clean_errors
def agent_promote(run_id: Annotated[str, typer.Argument()], json_out: JsonOpt = False):
    """Sanitize the run's best and put it into generated/ (CUDA runs only); exit 1 if not."""
    from kernelgen.agent import session as agent

    result = agent.promote(run_id)
    if json_out:
        emit_json(result.model_dump(mode="json"))
    elif result.promoted:
        out.print(f"promoted {result.candidate} into {result.path}")
    else:
        out.print(f"not promoted: {result.why}", markup=False)
    raise typer.Exit(0 if result.promoted else 1)


@agent_app.command("report")
@clean_errors
def agent_report(run_id: Annotated[str, typer.Argument()], json_out: JsonOpt = False):
    """Write the run's report.md and report.html; prints their paths."""
    from kernelgen.agent import session as agent

    paths = agent.report(run_id)
    if json_out:
        emit_json(paths.model_dump(mode="json"))
    else:
        out.print(f"wrote {paths.md} and {paths.html}")
