"""An imported problem judged as any operator is: a plain Triton kernel for the imported softmax
is accepted by `kernelgen verify` on CPU, and KernelBench's own adversarial kernels (its eval's
unit tests: a result reused from the reference's run, inputs zeroed so the reference agrees with
zeros, work on a non-default stream), written here as kernelgen candidates for an imported square
matmul, are each rejected for their reason (candidates/, each docstring says how it cheats)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.kernelbench import import_paths
from kernelgen.verify import verify_candidate

HERE = Path(__file__).parent
CANDIDATES = HERE / "candidates"
PROBLEMS = [HERE / "problems" / "level1" / f for f in ("1_Softmax.py", "2_Square_matmul.py")]
MATMUL = "kb1_2_square_matmul"

# file -> (category, words of the reason)
HACKS = {
    # KernelBench's result-reuse kernel: the output never written, hoping for the memory where
    # the reference's result was; the judge's poisoned memory shows it unwritten.
    "result_reuse.py": ("incorrect", "entries off"),
    # A result kept from an earlier call and returned again: module state, through an alias.
    "cached_result.py": ("static", "module-state"),
    # KernelBench's input-modification kernel: the truth is the judge's, computed before.
    "zero_inputs.py": ("incorrect", "entries off"),
    # An output zeroed and never written.
    "zeros_unwritten.py": ("incorrect", "entries off"),
    # KernelBench's non-default-stream kernel: the static rules refuse streams.
    "side_stream.py": ("static", "torch.cuda.Stream"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("kb-hacks")
    (root / "references").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNELGEN_ROOT", str(root))
        mp.chdir(root)
        assert [r.status for r in import_paths(PROBLEMS)] == ["imported", "imported"]
        yield root


def test_a_plain_triton_softmax_is_accepted_on_cpu(project: Path) -> None:
    got = CliRunner().invoke(
        app,
        ["verify", "kb1_1_softmax", str(CANDIDATES / "softmax_rows.py"), "--device", "cpu"]
        + ["--seed", "3", "--json"],
    )
    assert got.exit_code == 0, got.output
    verdict = json.loads(got.output.strip().splitlines()[-1])
    assert verdict["accepted"] and verdict["outcome"] == "accepted-partial"
    ran = {c["name"] for c in verdict["cases"] if c["status"] == "passed"}
    # The small and odd sizes run on CPU; the problem's own size waits for the GPU. The cases
    # drawn from its domain run too (test_domains.py).
    fixed = {name for name in ran if not name.startswith("drawn")}
    assert fixed == {f"{s}/float32/{d}" for s in ("small", "odd") for d in ("normal", "uniform")}


def test_an_honest_matmul_is_accepted(project: Path) -> None:
    v = verify_candidate(MATMUL, CANDIDATES / "matmul_tiled.py", device="cpu", seed=5)
    assert v.accepted, f"{v.category}: {v.reason}"


@pytest.mark.parametrize("name", sorted(HACKS))
def test_kernelbench_hacks_are_rejected_for_their_reason(project: Path, name: str) -> None:
    category, words = HACKS[name]
    v = verify_candidate(MATMUL, CANDIDATES / name, device="cpu", seed=5, timeout_s=60)
    assert not v.accepted
    assert v.category == category and words in (v.reason or ""), f"{v.category}: {v.reason}"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("name", sorted(HACKS))
def test_kernelbench_hacks_are_rejected_on_cuda(project: Path, name: str) -> None:
    """On the GPU the real cases: a caching allocator that could hand back the reference's
    result, and a second stream that a default-stream timer would not wait for."""
    category, _ = HACKS[name]
    v = verify_candidate(MATMUL, CANDIDATES / name, device="cuda", seed=5, timeout_s=120)
    assert not v.accepted and v.category == category, f"{v.category}: {v.reason}"
