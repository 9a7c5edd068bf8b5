"""The CLI through typer's CliRunner: JSON lines, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelgen.cli import app

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parents[1] / "verify"))
from controls import zeros  # noqa: E402


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KERNELGEN_ROOT", raising=False)


def test_ops_json() -> None:
    result = CliRunner().invoke(app, ["ops", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output.strip().splitlines()[-1])
    names = {o["name"] for o in data["ops"]}
    assert {"softmax", "rms_norm", "silu_and_mul"} <= names
    for row in data["ops"]:
        assert row["cases"] > 0 and row["bench_shapes"]
        # Every operator written here has a seed; an imported problem starts from torch eager.
        assert row["seed"] is (row["origin"] is None), row["name"]


def test_ops_table() -> None:
    result = CliRunner().invoke(app, ["ops"])
    assert result.exit_code == 0 and "softmax" in result.output


def test_verify_rejected_exits_1_with_category(tmp_path: Path) -> None:
    path = tmp_path / "zeros.py"
    path.write_text(zeros("softmax"))
    result = CliRunner().invoke(app, ["verify", "softmax", str(path), "--device", "cpu", "--json"])
    assert result.exit_code == 1
    verdict = json.loads(result.output.strip().splitlines()[-1])
    assert verdict["accepted"] is False and verdict["category"] == "incorrect"


def test_verify_static_rejection_is_fast_and_readable(tmp_path: Path) -> None:
    path = tmp_path / "cheat.py"
    path.write_text("import os\n\ndef softmax(x):\n    return x\n")
    result = CliRunner().invoke(app, ["verify", "softmax", str(path), "--device", "cpu"])
    assert result.exit_code == 1
    assert "REJECTED" in result.output and "static" in result.output


def test_verify_seed_accepted() -> None:
    result = CliRunner().invoke(
        app, ["verify", "silu_and_mul", "seeds/silu_and_mul.py", "--device", "cpu"]
    )
    assert result.exit_code == 0, result.output
    assert "ACCEPTED" in result.output and "not run on CPU" in result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["verify", "nope", "x.py"], "unknown operator 'nope'; known:"),
        (["verify", "softmax", "missing.py"], "no such file"),
        (["bench", "softmax"], "exactly one of"),
        (["optimize"], "name an operator"),
        (["optimize", "softmax", "--proposer", "files", "--device", "cpu"], "--from"),
        (["report"], "name an operator"),
        (["promote", "softmax"], "--run RUN [--candidate ID], or --again alone"),
        (["promote", "softmax", "--again", "--run", "r"], "or --again alone"),
        (["promote", "softmax", "--again", "--candidate", "c"], "or --again alone"),
        (
            [
                "optimize",
                "softmax",
                "--proposer",
                "llm",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
                "--max-cost",
                "1",
                "--device",
                "cpu",
            ],
            "--max-cost needs prices",
        ),
    ],
)
def test_usage_errors_exit_2(args: list[str], words: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert "Traceback" not in result.output


def test_bench_without_cuda_says_so() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("has CUDA")
    result = CliRunner().invoke(app, ["bench", "softmax", "--seed"])
    assert result.exit_code == 2
    assert "no CUDA device" in result.output


# A spec whose validator raises ValueError: pydantic words it "Value error, inputs: duplicate ...".
BROKEN_REFERENCE = """
def broken_op(x):
    return x


SPEC = {
    "inputs": [{"name": "x", "shape": ["n"]}, {"name": "x", "shape": ["n"]}],
    "dtypes": ["float32"],
    "dists": ["normal", "uniform"],
    "sizes": [{"name": "s", "dims": {"n": 4}}],
    "bench": [{"name": "b", "dims": {"n": 4}}],
}


def cost(dims, itemsize):
    return {"bytes": 0, "flops": 0}
"""


@pytest.fixture
def tmp_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The references and seeds in a folder of their own: runs and reports land there."""
    import shutil

    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def test_ops_lists_every_valid_operator_and_marks_the_broken(tmp_project: Path) -> None:
    (tmp_project / "references" / "broken_op.py").write_text(BROKEN_REFERENCE)
    result = CliRunner().invoke(app, ["ops", "--json"])
    assert result.exit_code == 2, result.output  # a spec error, after the whole listing
    rows = {o["name"]: o for o in json.loads(result.output.strip().splitlines()[-1])["ops"]}
    valid = sorted(p.stem for p in (ROOT / "references").glob("[!_]*.py"))
    assert sorted(rows) == sorted([*valid, "broken_op"])
    assert all(rows[n]["error"] is None and rows[n]["cases"] > 0 for n in valid)
    error = rows["broken_op"]["error"]
    assert error.endswith("broken_op.py: SPEC.inputs: duplicate names in ['x', 'x']"), error
    table = CliRunner().invoke(app, ["ops"])
    assert (
        table.exit_code == 2 and "softmax" in table.output and "broken: see below" in table.output
    )
    assert "broken_op: " in table.output and "Value error" not in table.output


def test_a_malformed_spec_exits_2_in_one_line(tmp_project: Path) -> None:
    (tmp_project / "references" / "broken_op.py").write_text(BROKEN_REFERENCE)
    seed = tmp_project / "seeds" / "softmax.py"
    result = CliRunner().invoke(app, ["verify", "broken_op", str(seed), "--device", "cpu"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "SPEC.inputs: duplicate names" in result.output
    assert "Value error" not in result.output and "Traceback" not in result.output


def test_optimize_piped_says_each_step_as_it_starts_and_where_to_look(tmp_project: Path) -> None:
    """Not a terminal (a log file): a plain line per step, and the last lines name the run, its
    folder and the command that reviews it."""
    folder = tmp_project / "proposals"
    folder.mkdir()
    (folder / "a.py").write_text("import os\n\ndef softmax(x):\n    return x\n")  # static: fast
    args = ["optimize", "softmax", "--proposer", "files", "--from", str(folder)]
    result = CliRunner().invoke(
        app, [*args, "--rounds", "1", "--candidates", "1", "--device", "cpu"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    run_id = next(p for p in (tmp_project / "evaluations" / "softmax").iterdir()).name
    steps = [m[1] for m in (re.match(r"softmax +[\d.]+s  (.*)", line) for line in lines) if m]
    assert steps[:4] == [
        "starting on cpu",
        f"run {run_id} started: evaluations/softmax/{run_id}/",
        "round 1: asking files for 1",
        "verifying r01-c01",
    ], lines
    assert re.match(r"r01-c01\s+rejected\s+\[static\]", steps[4]), steps
    assert lines[-3].startswith(f"softmax run {run_id}: stopped: ")
    assert lines[-2] == f"  run folder: evaluations/softmax/{run_id}/"
    assert lines[-1] == f"  review it:  kernelgen report softmax --run {run_id}"


def test_agent_submit_and_status_say_the_same(tmp_project: Path) -> None:
    """A CPU verdict is partial (bf16 and GPU-only cases not run): submit and status both say
    accepted-partial; the open run says when it was last submitted to; counts agree in number."""
    runner = CliRunner()
    started = runner.invoke(app, ["agent", "start", "router_gemm", "--device", "cpu", "--json"])
    assert started.exit_code == 0, started.output
    run_id = json.loads(started.output.strip().splitlines()[-1])["run_id"]
    seed = tmp_project / "seeds" / "router_gemm.py"
    submitted = runner.invoke(app, ["agent", "submit", run_id, str(seed)])
    assert submitted.exit_code == 0, submitted.output
    assert submitted.output.startswith("r01-c01: accepted-partial\n  accepted on the ")
    status = runner.invoke(app, ["agent", "status", run_id])
    assert status.exit_code == 0, status.output
    head, row = status.output.splitlines()[:2]
    assert re.search(r"; open, last submission \d{4}-\d\d-\d\d \d\d:\d\d UTC\): 1 candidate,", head)
    assert row == "  r01-c01: accepted-partial"
    # The context names the torch and Triton the candidate is judged with, not fixed versions.
    ctx = runner.invoke(app, ["agent", "context", run_id, "--json"])
    import torch
    import triton

    software = f"torch {torch.__version__}, Triton {triton.__version__}"
    context = json.loads(ctx.output.strip().splitlines()[-1])
    assert context["context"]["software"] == software
    assert f"Your kernels are judged\nwith {software}." in context["prompt"]
