"""A coding agent as the proposer (kernelgen.agent and `kernelgen agent`), on CPU, in a throwaway
copy of the project. rms_norm is the operator: its CPU verification is the quickest of the three,
and only one test pays for judging a correct candidate."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "verify"))
from controls import torch_fallback  # noqa: E402

from kernelgen import store  # noqa: E402
from kernelgen.agent import session as agent  # noqa: E402
from kernelgen.cli import app  # noqa: E402
from kernelgen.errors import UsageError  # noqa: E402
from kernelgen.records import CandidateRecord  # noqa: E402
from kernelgen.run.judging import LocalJudging  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OP = "rms_norm"
SEED = (ROOT / "seeds" / f"{OP}.py").read_text()
REFERENCE = (ROOT / "references" / f"{OP}.py").read_text()
SIGNATURE = (
    "def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:"
)
BROKEN = SEED.replace(SIGNATURE, "def rms_norm(x:")
CHEAT = torch_fallback(OP)  # launches a kernel, then returns torch's own result
CORRECT = SEED.replace("# The tuner searches", "# An agent's rewrite. The tuner searches")


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "pyproject.toml").write_text("[tool.kernelgen]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def _last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_agent_session_end_to_end(project: Path) -> None:
    assert BROKEN != SEED and CORRECT != SEED
    run = agent.start_run(OP, "cpu", model="test-agent")
    assert run.settings.proposer == "agent" and run.settings.model == "test-agent"

    ctx = agent.get_context(run.id)
    assert ctx.next_candidate == "r01-c01" and ctx.parent == "seed"
    assert ctx.context.reference_source == REFERENCE and ctx.context.seed_source == SEED
    # The prompt is the llm proposer's rendering, so it quotes both sources and the spec.
    assert REFERENCE.strip()[:300] in ctx.prompt and SEED.strip()[:300] in ctx.prompt
    assert ctx.context.spec in ctx.prompt

    broken = agent.submit_candidate(run.id, BROKEN, note="first try")
    assert broken.candidate.id == "r01-c01"
    assert (broken.candidate.status, broken.candidate.category) == ("rejected", "syntax")
    cheat = agent.submit_candidate(run.id, CHEAT)
    assert cheat.candidate.id == "r02-c01" and cheat.candidate.status == "rejected"
    assert cheat.candidate.category in ("static", "provenance")
    good = agent.submit_candidate(run.id, CORRECT, note="the seed, reworded")
    assert good.accepted and good.candidate.outcome == "accepted-partial"
    assert good.candidate.cases_run > 0 and not good.timed and good.candidate.shapes == []
    assert good.candidate.parent == "seed"

    status = agent.run_status(run.id)
    assert [(c.id, c.status, c.category) for c in status.candidates] == [
        ("r01-c01", "rejected", "syntax"),
        ("r02-c01", "rejected", cheat.candidate.category),
        ("r03-c01", "accepted", None),
    ]
    assert status.pending == 0 and status.rounds_done == 3
    records = store.load_candidates(OP, run.id)
    assert all(r.proposer == "agent" and r.model == "test-agent" for r in records)
    assert store.candidate_source(OP, run.id, "r03-c01") == CORRECT
    transcript = store.load_transcript(OP, run.id, "r01-c01")
    assert transcript is not None and transcript.reply == "first try"
    assert store.load_transcript(OP, run.id, "r02-c01") is None

    # The next context carries the history and the last failure.
    after = agent.get_context(run.id)
    assert after.next_candidate == "r04-c01"
    assert [h.id for h in after.context.history] == ["r01-c01", "r02-c01", "r03-c01"]
    assert after.context.last_failure and after.context.last_failure.startswith("r02-c01")

    paths = agent.report(run.id)
    assert Path(paths.md).is_file() and Path(paths.html).is_file()
    with pytest.raises(UsageError, match="promotion needs a candidate verified and timed on CUDA"):
        agent.promote(run.id)


def test_bad_arguments_are_one_clear_error(project: Path) -> None:
    with pytest.raises(UsageError, match="known"):
        agent.start_run("no_such_op", "cpu")
    with pytest.raises(UsageError, match="expected 'cpu' or 'cuda'"):
        agent.start_run(OP, "tpu")
    run = agent.start_run(OP, "cpu")
    with pytest.raises(UsageError, match="no run 'nope'"):
        agent.get_context("nope")
    with pytest.raises(UsageError, match="expected a run id"):
        agent.run_status("../../etc")
    with pytest.raises(UsageError, match="expected text"):
        agent.submit_candidate(run.id, SEED.encode())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="empty"):
        agent.submit_candidate(run.id, "  \n")
    with pytest.raises(UsageError, match="note: expected text"):
        agent.submit_candidate(run.id, SEED, note=3)  # type: ignore[arg-type]
    # None of that reached the store.
    assert store.load_candidates(OP, run.id) == []
    assert agent.run_status(run.id).candidates == []


def test_cli_start_context_submit_status_and_resume(project: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    started = cli.invoke(app, ["agent", "start", OP, "--device", "cpu", "--json"])
    assert started.exit_code == 0, started.output
    run_id = _last_json(started.output)["run_id"]

    text = cli.invoke(app, ["agent", "context", run_id])
    assert text.exit_code == 0, text.output
    assert SIGNATURE in text.output and "r01-c01" in text.output
    as_json = cli.invoke(app, ["agent", "context", run_id, "--json"])
    assert _last_json(as_json.output)["context"]["seed_source"] == SEED

    broken = tmp_path / "broken.py"
    broken.write_text(BROKEN)
    submitted = cli.invoke(app, ["agent", "submit", run_id, str(broken), "--note", "x", "--json"])
    assert submitted.exit_code == 1, submitted.output  # rejected
    verdict = _last_json(submitted.output)
    assert verdict["candidate"]["category"] == "syntax" and verdict["candidate"]["reason"]
    missing = cli.invoke(app, ["agent", "submit", run_id, str(tmp_path / "none.py")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00")
    assert cli.invoke(app, ["agent", "submit", run_id, str(binary)]).exit_code == 2
    unknown = cli.invoke(app, ["agent", "status", "20990101-000000-agent-ffff"])
    assert unknown.exit_code == 2 and "no run" in unknown.output

    # A submission killed while it was judged leaves a pending record; `optimize --resume`
    # judges it and asks nobody for more.
    pending = CandidateRecord(
        id="r02-c01", round=2, parent="seed", proposer="agent", status="pending"
    )
    store.save_candidate(OP, run_id, pending, BROKEN.replace("def rms_norm(x:", "def rms_norm(x"))
    resumed = cli.invoke(app, ["optimize", OP, "--resume", run_id, "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert _last_json(resumed.output)["pending"] == 0

    status = cli.invoke(app, ["agent", "status", run_id, "--json"])
    assert status.exit_code == 0, status.output
    got = _last_json(status.output)
    assert [(c["id"], c["category"]) for c in got["candidates"]] == [
        ("r01-c01", "syntax"),
        ("r02-c01", "syntax"),
    ]
    shown = cli.invoke(app, ["agent", "status", run_id])
    assert "r02-c01: rejected [syntax]" in shown.output
    report = cli.invoke(app, ["agent", "report", run_id, "--json"])
    assert report.exit_code == 0, report.output
    assert Path(_last_json(report.output)["md"]).is_file()


class _Judge:
    def __init__(self, name: str) -> None:
        self.name, self.closed = name, False

    def close(self) -> None:
        self.closed = True


class _Runner:
    """What _judging and _release touch of a Loop."""

    def __init__(self, run_id: str, evaluator: _Judge | None = None) -> None:
        self.run = type("R", (), {"id": run_id, "seed_verdict": None})()
        self.device, self.prepared = "cpu", 0
        self.judging = LocalJudging(evaluator)  # type: ignore[arg-type]

    @property
    def evaluator(self) -> _Judge | None:
        return self.judging.evaluator  # type: ignore[return-value]

    def prepare(self) -> None:
        self.prepared += 1

    def close(self) -> None:
        self.judging.close()


def test_a_session_keeps_each_runs_judge_between_calls() -> None:
    first = _Judge("a")
    with agent.kept_judges():
        agent._release(_Runner("run-a", first))
        assert not first.closed  # kept, with its truth and warm runners
        again = _Runner("run-a")
        agent._judging(again)
        assert again.evaluator is first and again.prepared == 1
        other = _Runner("run-b")
        agent._judging(other)
        assert other.evaluator is None  # another run's judge is never handed over
        agent._release(again)
        with agent.kept_judges():  # nested: the outer block owns the judges
            pass
        assert not first.closed
    assert first.closed  # the session's end closes what it kept


def test_without_a_session_every_call_closes_its_judge() -> None:
    judge = _Judge("a")
    agent._release(_Runner("run-a", judge))
    assert judge.closed
    fresh = _Runner("run-a")
    agent._judging(fresh)
    assert fresh.evaluator is None


def test_a_session_keeps_only_the_newest_judges() -> None:
    judges = [_Judge(str(i)) for i in range(agent.KEPT_JUDGES + 1)]
    with agent.kept_judges():
        for i, judge in enumerate(judges):
            agent._release(_Runner(f"run-{i}", judge))
        assert judges[0].closed and not any(j.closed for j in judges[1:])
    assert all(j.closed for j in judges)
