"""`kernelgen mcp`: the agent session (kernelgen/agent.py) as an MCP server over stdio, for coding
agents that speak MCP (Claude Code, Cursor, Codex, Gemini CLI). Written with the official SDK
(`mcp` 2.x, the optional extra `kernelgen[mcp]`).

The tools are the shell's `kernelgen agent` commands, with the same records behind them: each
opens the run from the store and leaves everything there, so a server that dies loses nothing
and `kernelgen agent status` sees what it did. A tool's failure comes back to the agent as one
line naming what was expected (a tool error), never as the end of the server; the candidate runs
sandboxed in the judge's processes, never in this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kernelgen.agent import session as agent
from kernelgen.errors import KernelgenError

T = TypeVar("T")

INSTRUCTIONS = """\
kernelgen verifies, times and keeps Triton kernels you write. Workflow: list_operators, then
start_run(op) (device cuda where there is one), then repeat: get_context(run_id) for the spec,
reference, seed, current best, per-shape timings against the peers and the last failure; write
the whole candidate module; submit_candidate(run_id, source, note). The verdict says why a
candidate was rejected (category, reason, failing case) and, on CUDA, how it timed against the
best, torch eager and torch.compile. On CUDA, profile(run_id) gives Nsight Compute's view of
the best at its worst shape (memory and SM throughput, occupancy, registers, warp stalls), and
the next context quotes it. promote(run_id) ships the best into kernelgen_ops;
report(run_id) gives the report's paths."""


def _guarded(call: Callable[[], T]) -> T:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return call()
    except KernelgenError as e:
        raise ToolError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - a bug of ours reaches the agent as one line
        raise ToolError(f"internal error: {type(e).__name__}: {e}") from None


def build() -> Any:
    """The server, its tools registered (not yet serving)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("kernelgen", instructions=INSTRUCTIONS)

    @server.tool()
    def list_operators() -> agent.Operators:
        """The operators: seed, what kernelgen_ops ships, cases, benchmark shapes, runs."""
        return _guarded(agent.list_operators)

    @server.tool()
    def start_run(op: str, device: str | None = None, model: str | None = None) -> agent.RunStatus:
        """A new run of `op` with proposer 'agent' on 'cpu' or 'cuda' (default: cuda where
        present); `model` names you in the records. On CUDA the seed is judged and timed first."""
        return _guarded(lambda: agent.run_status(agent.start_run(op, device, model).id))

    @server.tool()
    def get_context(run_id: str) -> agent.AgentContext:
        """What to read before writing the next candidate: spec, reference, seed, best source,
        per-shape timings with % of limit and bound, compile facts, history, last failure."""
        return _guarded(lambda: agent.get_context(run_id))

    @server.tool()
    def submit_candidate(run_id: str, source: str, note: str | None = None) -> agent.SubmitResult:
        """Judge a candidate module (the whole file): static rules, sandbox, correctness on the
        case grid; on CUDA the bench against the best and the acceptance rule. `note` is kept as
        the candidate's transcript."""
        return _guarded(lambda: agent.submit_candidate(run_id, source, note))

    @server.tool()
    def run_status(run_id: str) -> agent.RunStatus:
        """The run's candidates with their verdicts, its best and what is pending."""
        return _guarded(lambda: agent.run_status(run_id))

    @server.tool()
    def profile(
        run_id: str, candidate: str | None = None, shape: str | None = None
    ) -> agent.ProfileResult:
        """Nsight Compute's summary of a candidate's kernels at one bench shape (CUDA runs):
        memory and SM throughput as % of peak, occupancy, registers per thread, shared memory,
        block and grid, the top warp stall reasons. Default: the best (else the seed) at its
        worst shape against the best peer; get_context then quotes it."""
        return _guarded(lambda: agent.profile(run_id, candidate, shape))

    @server.tool()
    def promote(run_id: str) -> agent.PromoteResult:
        """Ship the run's best into kernelgen_ops (CUDA-measured, sanitizer-checked runs only)."""
        return _guarded(lambda: agent.promote(run_id))

    @server.tool()
    def report(run_id: str) -> agent.ReportPaths:
        """Write the run's report and return the paths of report.md and report.html."""
        return _guarded(lambda: agent.report(run_id))

    return server


def serve() -> None:
    # The server lives as long as the agent's session: each run's judge (ground truth, warm
    # runners) is made once and kept between tool calls.
    with agent.kept_judges():
        build().run("stdio")
