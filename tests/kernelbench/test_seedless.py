"""An imported operator has no seed: torch eager is its baseline, and the first accepted
candidate becomes its best. Everything else is as for a shipped operator: the same judge, store,
context and report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.agent import session as agent
from kernelgen.cli import app
from kernelgen.errors import UsageError
from kernelgen.kernelbench import import_paths
from kernelgen.run.loop import NO_SEED
from kernelgen.run.optimize import OptimizeOptions, open_workers, optimize_op

HERE = Path(__file__).parent
OP = "kb1_1_softmax"
GOOD = (HERE / "candidates" / "softmax_rows.py").read_text()
AGAIN = GOOD.replace("(the plain Triton softmax)", "(the plain Triton softmax, reworded)")
BROKEN = GOOD.replace("def kb1_1_softmax(x: torch.Tensor)", "def kb1_1_softmax(x:")


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "references").mkdir()
    (tmp_path / "seeds").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (result,) = import_paths([HERE / "problems" / "level1" / "1_Softmax.py"])
    assert result.status == "imported"
    yield tmp_path


class _Quiet:
    def event(self, message: str) -> None:
        pass

    def candidate(self, record: object, run: object) -> None:
        pass


def test_an_agent_run_starts_from_torch_eager_and_takes_its_first_accepted_as_best(
    project: Path,
) -> None:
    started = CliRunner().invoke(app, ["agent", "start", OP, "--device", "cpu", "--json"])
    assert started.exit_code == 0, started.output
    run_id = json.loads(started.output.strip().splitlines()[-1])["run_id"]

    ctx = agent.get_context(run_id)
    assert ctx.parent == "seed" and ctx.context.best_id is None
    assert ctx.context.seed_source == NO_SEED and ctx.context.best_source == NO_SEED
    assert "No seed" in ctx.prompt and ctx.context.reference_source in ctx.prompt

    broken = agent.submit_candidate(run_id, BROKEN)
    assert broken.candidate.status == "rejected" and agent.run_status(run_id).best is None
    good = agent.submit_candidate(run_id, GOOD)
    assert good.accepted and good.candidate.became_best and good.candidate.parent == "seed"
    assert agent.run_status(run_id).best == good.candidate.id
    # The best is now a candidate: the next context shows it, and the next one accepted on CPU
    # (where nothing is timed) does not replace it.
    assert agent.get_context(run_id).context.best_source == GOOD
    again = agent.submit_candidate(run_id, AGAIN)
    assert again.accepted and not again.candidate.became_best
    assert again.candidate.parent == good.candidate.id
    assert agent.run_status(run_id).best == good.candidate.id

    md = Path(agent.report(run_id).md).read_text()
    assert f"{OP} has no seed: torch eager (its reference) is the baseline" in md
    assert f"references/{OP}.py" in md  # the diff starts from the reference


def test_optimize_on_cpu_keeps_the_first_accepted_candidate(project: Path) -> None:
    folder = project / "proposals"
    folder.mkdir()
    (folder / "a_broken.py").write_text(BROKEN)
    (folder / "b_good.py").write_text(GOOD)
    (folder / "c_again.py").write_text(AGAIN)
    options = OptimizeOptions(
        proposer="files",
        source=str(folder),
        device="cpu",
        rounds=1,
        candidates=3,
        repairs=0,
    )
    summary = optimize_op(OP, options, _Quiet())
    records = store.load_candidates(OP, summary.run_id)
    got = {c.id: (c.status, c.became_best) for c in records}
    assert got == {
        "r01-c01": ("rejected", False),
        "r01-c02": ("accepted", True),
        "r01-c03": ("accepted", False),
    }
    assert summary.best == "r01-c02"
    assert store.load_run(OP, summary.run_id).seed_bench is None


def test_a_pool_is_refused_for_an_operator_without_a_seed(project: Path) -> None:
    with pytest.raises(UsageError, match="has no seed: run it without --gpus or --ray"):
        open_workers(OP, "cpu", OptimizeOptions(device="cpu", gpus="2"))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_the_first_accepted_candidate_is_timed_against_eager(project: Path) -> None:
    folder = project / "proposals"
    folder.mkdir()
    (folder / "a_good.py").write_text(GOOD)
    options = OptimizeOptions(
        proposer="files",
        source=str(folder),
        device="cuda",
        rounds=1,
        candidates=1,
        repairs=0,
    )
    summary = optimize_op(OP, options, _Quiet())
    run = store.load_run(OP, summary.run_id)
    (rec,) = store.load_candidates(OP, run.id)
    assert rec.status == "accepted" and rec.became_best and run.best == rec.id
    assert run.seed_verdict is None and run.seed_bench is None
    assert rec.bench is not None and rec.speedup == rec.bench.geomean_eager
    with pytest.raises(UsageError, match="has no seed"):
        agent.profile(run.id, "seed")


def test_a_gpu_only_import_is_not_run_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its CPU verdicts would run no case: no evidence, and no first best made of it."""
    level = tmp_path / "level1"
    level.mkdir()
    text = (HERE / "problems" / "level1" / "1_Softmax.py").read_text()
    (level / "7_Softmax_literal.py").write_text(
        text.replace("torch.rand(batch_size, features)", "torch.rand(64, 3000)")
    )
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert import_paths([level])[0].cpu_cases == 0
    with pytest.raises(UsageError, match="no case the CPU interpreter can run"):
        agent.start_run("kb1_7_softmax_literal", "cpu")
