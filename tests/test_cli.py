"""The CLI through typer's CliRunner: JSON lines, exit codes, one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelgen.cli import app

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent / "verify"))
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
        assert row["seed"] is True and row["cases"] > 0 and row["bench_shapes"]


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
