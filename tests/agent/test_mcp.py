"""`kernelgen mcp` through the MCP SDK's own client, over stdio: a real session with the server
as a subprocess, in a throwaway copy of the project, on CPU. One run of rms_norm: the context, a
broken, a cheating and a correct candidate, the status and the report, and bad arguments that
come back as tool errors while the server keeps serving."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")  # the optional extra kernelgen[mcp]; setup.sh installs it

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_agent import BROKEN, CHEAT, CORRECT, OP  # noqa: E402

from kernelgen import store  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "pyproject.toml").write_text("[tool.kernelgen]\n")
    return tmp_path


def _server(project: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The server imports the kernelgen of this tree, not whichever one the venv installed
    # (an editable install points at one checkout; a worktree's tests must serve its own code).
    env["PYTHONPATH"] = str(ROOT)
    env["KERNELGEN_ROOT"] = str(project)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kernelgen", "mcp"], env=env, cwd=str(project)
    )


async def _session(project: Path) -> dict:
    seen: dict = {}
    async with Client(_server(project), read_timeout_seconds=900) as client:
        tools = await client.list_tools()
        seen["tools"] = {t.name for t in tools.tools}

        async def call(name: str, **arguments: object):
            result = await client.call_tool(name, arguments)
            return result

        ops = await call("list_operators")
        seen["ops"] = ops.structured_content
        started = await call("start_run", op=OP, device="cpu", model="sdk-client")
        run_id = started.structured_content["run_id"]
        seen["run_id"] = run_id
        seen["context"] = (await call("get_context", run_id=run_id)).structured_content
        for name, source in (("broken", BROKEN), ("cheat", CHEAT), ("correct", CORRECT)):
            seen[name] = (
                await call("submit_candidate", run_id=run_id, source=source, note=name)
            ).structured_content
        # Bad arguments: one clear line each, and the server answers the next call.
        seen["unknown_op"] = await call("start_run", op="gelu", device="cpu")
        seen["unknown_run"] = await call("get_context", run_id="20990101-000000-nope-0000")
        seen["not_text"] = await call("submit_candidate", run_id=run_id, source="")
        seen["cpu_profile"] = await call("profile", run_id=run_id)
        seen["status"] = (await call("run_status", run_id=run_id)).structured_content
        seen["report"] = (await call("report", run_id=run_id)).structured_content
        seen["promote"] = await call("promote", run_id=run_id)
    return seen


def test_an_mcp_session_end_to_end(project: Path) -> None:
    seen = anyio.run(_session, project)
    assert {
        "list_operators",
        "start_run",
        "get_context",
        "submit_candidate",
        "run_status",
        "profile",
        "promote",
        "report",
    } <= seen["tools"]
    ops = {o["name"]: o for o in seen["ops"]["operators"]}
    assert set(ops) >= {"softmax", "rms_norm", "silu_and_mul"}
    assert ops[OP]["seed"] == f"seeds/{OP}.py" and ops[OP]["cases"] > ops[OP]["cpu_cases"] > 0
    assert ops[OP]["bench_shapes"]

    run_id = seen["run_id"]
    ctx = seen["context"]
    assert ctx["next_candidate"] == "r01-c01" and ctx["parent"] == "seed"
    assert ctx["context"]["seed_source"] == (ROOT / "seeds" / f"{OP}.py").read_text()

    assert (seen["broken"]["candidate"]["status"], seen["broken"]["candidate"]["category"]) == (
        "rejected",
        "syntax",
    )
    assert seen["cheat"]["candidate"]["status"] == "rejected"
    assert seen["cheat"]["candidate"]["category"] in ("static", "provenance")
    good = seen["correct"]["candidate"]
    assert good["status"] == "accepted" and good["outcome"] == "accepted-partial"

    for bad, words in (
        ("unknown_op", "unknown operator 'gelu'"),
        ("unknown_run", "20990101-000000-nope-0000"),
        ("not_text", "expected the candidate module's Python source"),
        ("cpu_profile", "judged on cpu: profiling needs a CUDA run"),
    ):
        result = seen[bad]
        assert result.is_error, bad
        assert words in result.content[0].text, (bad, result.content[0].text)

    status = seen["status"]
    assert [(c["id"], c["status"]) for c in status["candidates"]] == [
        ("r01-c01", "rejected"),
        ("r02-c01", "rejected"),
        ("r03-c01", "accepted"),
    ]
    assert Path(seen["report"]["md"]).is_file() and Path(seen["report"]["html"]).is_file()
    promote = seen["promote"]  # a CPU run has no timings: refused, and why
    assert promote.is_error and "promotion needs a candidate verified and timed on CUDA" in (
        promote.content[0].text
    )
    os.environ["KERNELGEN_ROOT"] = str(project)
    try:
        records = store.load_candidates(OP, run_id)
    finally:
        del os.environ["KERNELGEN_ROOT"]
    assert all(r.proposer == "agent" and r.model == "sdk-client" for r in records)
