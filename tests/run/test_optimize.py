"""`kernelgen optimize` end to end on CPU, against a scripted OpenAI-compatible server on loopback
(the real openai client), in a throwaway copy of the project."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where fake_llm.py lives
from fake_llm import FakeLLM, spawn  # noqa: E402

from kernelgen.cli import app  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SEED = (ROOT / "seeds" / "softmax.py").read_text()
USAGE = {"prompt_tokens": 1000, "completion_tokens": 200}


def reply(code: str, prose: str = "Here is the kernel.") -> dict:
    return {"reply": f"{prose}\n\n```python\n{code}\n```\n", "usage": USAGE}


GOOD_1 = SEED
GOOD_2 = SEED.replace('DEFAULT_CONFIG = {"num_warps": 4}', 'DEFAULT_CONFIG = {"num_warps": 8}')
SYNTAX_ERROR = SEED.replace("def softmax(x: torch.Tensor) -> torch.Tensor:", "def softmax(x:")
NO_COMPILE = SEED.replace("cols = tl.arange(0, BLOCK_SIZE)", "cols = tl.arange(0, n_cols)")
WRONG = SEED.replace("y = num / tl.sum(num, axis=0)", "y = num / (tl.sum(num, axis=0) + 1.0)")
CHEAT = SEED.replace("    return y.view(x.shape)", "    return torch.softmax(x, dim=-1)")
PROSE = {
    "reply": "I would restructure the reduction, but I will not write code today.",
    "usage": USAGE,
}


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project's operators, so runs land in a throwaway evaluations/."""
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "pyproject.toml").write_text("[tool.kernelgen]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "KERNELGEN_MODEL", "KERNELGEN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_llm_run_judges_every_reply(project: Path) -> None:
    script = [
        PROSE,  # r01-c01: no code
        reply(SYNTAX_ERROR),  # r01-c01-fix1
        reply(GOOD_1),  # r01-c01-fix2: accepted
        {"status": 500},  # retried...
        reply(NO_COMPILE),  # r02-c01: compile error
        reply(WRONG),  # r02-c01-fix1: wrong values
        reply(CHEAT),  # r02-c01-fix2: torch fallback
        {"status": 429, "retry_after": 0},
        reply(GOOD_2),  # r03-c01: accepted
    ]
    with FakeLLM(script, default=PROSE) as server:
        result = CliRunner().invoke(
            app,
            [
                "optimize",
                "softmax",
                "--proposer",
                "llm",
                "--base-url",
                server.url,
                "--model",
                "fake-coder",
                "--rounds",
                "6",
                "--candidates",
                "1",
                "--device",
                "cpu",
                "--json",
            ],
        )
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    summary = _last_json(result.output)
    assert set(summary) == {
        "op",
        "run_id",
        "proposer",
        "device",
        "stopped",
        "candidates",
        "best",
        "promoted",
        "tokens",
        "cost_usd",
    }
    assert summary["op"] == "softmax" and summary["proposer"] == "llm"
    assert summary["device"] == "cpu" and summary["promoted"] is False
    verdicts = {c["id"]: (c["status"], c["category"]) for c in summary["candidates"]}
    assert verdicts["r01-c01"] == ("rejected", "no_code")
    assert verdicts["r01-c01-fix1"] == ("rejected", "syntax")
    assert verdicts["r01-c01-fix2"] == ("accepted", None)
    assert verdicts["r02-c01"] == ("rejected", "compile")
    assert verdicts["r02-c01-fix1"] == ("rejected", "incorrect")
    assert verdicts["r02-c01-fix2"] == ("rejected", "static")
    assert verdicts["r03-c01"] == ("accepted", None)
    for later in ("r04-c01", "r05-c01", "r06-c01"):
        assert verdicts[later] == ("rejected", "no_code")
    assert all(c["reason"] for c in summary["candidates"] if c["status"] == "rejected")
    # Every reply is one candidate; the 500 and the 429 were retried (two more requests) but
    # neither is a candidate nor spent tokens.
    assert len(requests) == len(summary["candidates"]) + 2
    assert summary["tokens"] == len(summary["candidates"]) * 1200
    assert summary["cost_usd"] is None

    first = json.dumps(requests[0]["messages"])
    assert json.dumps((ROOT / "references" / "softmax.py").read_text())[1:-1][:200] in first
    assert json.dumps(SEED)[1:-1][:200] in first
    # The syntax error's text reaches the repair prompt that follows it.
    syntax_reason = next(c["reason"] for c in summary["candidates"] if c["id"] == "r01-c01-fix1")
    # Requests: r01-c01, its fix1, then fix2 -- whose prompt must quote fix1's failure.
    repair_prompt = "\n".join(m["content"] for m in requests[2]["messages"])
    assert syntax_reason in repair_prompt

    run_dir = project / "evaluations" / "softmax" / summary["run_id"]
    run = json.loads((run_dir / "run.json").read_text())
    assert run["state"] == "finished" and run["stopped"]
    transcript = json.loads((run_dir / "candidates" / "r01-c01" / "transcript.json").read_text())
    assert "will not write code" in transcript["reply"]


def test_budget_stops_cleanly(project: Path) -> None:
    with FakeLLM([], default=PROSE) as server:
        result = CliRunner().invoke(
            app,
            [
                "optimize",
                "softmax",
                "--proposer",
                "llm",
                "--base-url",
                server.url,
                "--model",
                "m",
                "--rounds",
                "5",
                "--candidates",
                "1",
                "--repairs",
                "0",
                "--max-tokens-total",
                "2500",
                "--device",
                "cpu",
                "--json",
            ],
        )
    assert result.exit_code == 0, result.output
    summary = _last_json(result.output)
    assert "token budget" in summary["stopped"]
    assert summary["tokens"] == 3 * 1200  # the request that crossed the budget was paid for
    assert len(summary["candidates"]) == 3


def test_no_llm_configured_runs_the_tuner(project: Path) -> None:
    result = CliRunner().invoke(app, ["optimize", "silu_and_mul", "--device", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    summary = _last_json(result.output)
    assert summary["proposer"] == "tune"
    assert "cannot time" in summary["stopped"]
    assert [c["status"] for c in summary["candidates"]] == ["accepted", "accepted"]


def test_files_and_replay(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_good.py").write_text(GOOD_1)
    (folder / "b_cheat.py").write_text(CHEAT)
    runner = CliRunner()
    first = runner.invoke(
        app,
        [
            "optimize",
            "softmax",
            "--proposer",
            "files",
            "--from",
            str(folder),
            "--rounds",
            "1",
            "--candidates",
            "2",
            "--repairs",
            "0",
            "--device",
            "cpu",
            "--json",
        ],
    )
    assert first.exit_code == 0, first.output
    files_run = _last_json(first.output)
    assert [(c["status"], c["category"]) for c in files_run["candidates"]] == [
        ("accepted", None),
        ("rejected", "static"),
    ]
    again = runner.invoke(
        app,
        [
            "optimize",
            "softmax",
            "--proposer",
            "replay",
            "--from",
            files_run["run_id"],
            "--rounds",
            "1",
            "--candidates",
            "2",
            "--repairs",
            "0",
            "--device",
            "cpu",
            "--json",
        ],
    )
    assert again.exit_code == 0, again.output
    replayed = _last_json(again.output)
    assert [(c["status"], c["category"]) for c in replayed["candidates"]] == [
        ("accepted", None),
        ("rejected", "static"),
    ]


def test_kill_minus_nine_and_resume(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"steps": [reply(GOOD_1), reply(GOOD_2), reply(GOOD_1)], "default": PROSE})
    )
    log = tmp_path / "requests.jsonl"
    server, url = spawn(script, tmp_path / "port", log)
    cmd = [
        sys.executable,
        "-c",
        "from kernelgen.cli import app; app()",
        "optimize",
        "softmax",
        "--proposer",
        "llm",
        "--base-url",
        url,
        "--model",
        "m",
        "--rounds",
        "3",
        "--candidates",
        "1",
        "--repairs",
        "0",
        "--device",
        "cpu",
        "--json",
    ]
    try:
        proc = subprocess.Popen(
            cmd, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        runs = project / "evaluations" / "softmax"
        target = None
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            found = list(runs.glob("*/candidates/r02-c01/record.json"))
            if found and json.loads(found[0].read_text())["status"] == "pending":
                target = found[0]
                break
            time.sleep(0.2)
        assert target is not None, "never caught r02-c01 while it was being judged"
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its sandboxed verifier
        proc.wait()
        run_dir = target.parents[2]
        before = (run_dir / "candidates" / "r01-c01" / "record.json").read_bytes()
        assert json.loads(before)["status"] == "accepted"

        resumed = subprocess.run(
            [
                sys.executable,
                "-c",
                "from kernelgen.cli import app; app()",
                "optimize",
                "softmax",
                "--resume",
                run_dir.name,
                "--base-url",
                url,
                "--json",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=400,
        )
        assert resumed.returncode == 0, resumed.stderr
        summary = _last_json(resumed.stdout)
        assert summary["run_id"] == run_dir.name
        assert [c["id"] for c in summary["candidates"]] == ["r01-c01", "r02-c01", "r03-c01"]
        assert all(c["status"] == "accepted" for c in summary["candidates"])
        # Nothing judged twice: r01's record is byte for byte what it was before the kill,
        # and the endpoint was asked once per candidate.
        assert (run_dir / "candidates" / "r01-c01" / "record.json").read_bytes() == before
        assert len(log.read_text().splitlines()) == 3
    finally:
        server.kill()
        server.wait()
