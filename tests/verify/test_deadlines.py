"""The evaluation engine's promises that cost nothing to keep on CPU: a hanging candidate is
rejected as `timeout`, naming its case, within the per-call deadline; deadlines come from the
seed's own times; a source judged once in a run is not judged again."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from kernelgen.records import CaseResult, Verdict
from kernelgen.verify import Evaluator, sha256, verify_candidate
from kernelgen.verify.judge import DEADLINE_CAP_S

ROOT = Path(__file__).resolve().parents[2]
HANGS = Path(__file__).parent / "candidates" / "timing" / "softmax_hangs_on.py"


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _hang_on_third_size(tmp_path: Path, device: str) -> tuple[Path, str]:
    """The hanging candidate, set to hang on the third size the device runs, and that size's
    first case (its row length must not occur in the sizes before it)."""
    ev_cases = [c for c in _cases() if device == "cuda" or c.interpreter]
    sizes: list[str] = []
    for c in ev_cases:
        if c.size.name not in sizes:
            sizes.append(c.size.name)
    third = next(c for c in ev_cases if c.size.name == sizes[2])
    cols = third.dims["cols"]
    earlier = {c.dims["cols"] for c in ev_cases if c.size.name in sizes[:2]}
    assert cols not in earlier
    path = tmp_path / "hangs.py"
    path.write_text(HANGS.read_text().replace("HANG_COLS = 0", f"HANG_COLS = {cols}"))
    return path, third.name


def _cases():  # noqa: ANN202
    from kernelgen.spec import load_spec

    return load_spec("softmax").cases


def _reject_hang(tmp_path: Path, device: str) -> None:
    path, case = _hang_on_third_size(tmp_path, device)
    start = time.monotonic()
    v = verify_candidate("softmax", path, device=device, seed=5)
    waited = time.monotonic() - start
    assert not v.accepted
    assert v.category == "timeout", v.reason
    assert f"case {case}:" in (v.reason or "")
    assert f"after {DEADLINE_CAP_S[device]:.0f} s" in (v.reason or "")
    # The cases before it are quick; the deadline, not a process timeout, ends the wait.
    if device == "cpu":  # on CUDA a cold compile ahead comes first and takes its own time
        assert waited < DEADLINE_CAP_S[device] + 60


def test_hang_in_the_third_size_is_a_timeout_naming_its_case(tmp_path: Path) -> None:
    _reject_hang(tmp_path, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_hang_on_cuda_within_30_s(tmp_path: Path) -> None:
    _reject_hang(tmp_path, "cuda")


def test_deadlines_follow_the_seed_and_keep_the_cap() -> None:
    with Evaluator("softmax", "cpu", seed=1, warm=0) as ev:
        assert ev.deadline("one/float32/normal") == DEADLINE_CAP_S["cpu"]
        seed = Verdict(
            op="softmax",
            candidate="seed",
            sha256="x",
            accepted=True,
            device="cpu",
            seed=1,
            seconds=1.0,
            cases=[
                CaseResult(name="one/float32/normal", status="passed", seconds=0.01),
                CaseResult(name="odd/float32/normal", status="passed", seconds=30.0),
            ],
        )
        ev.calibrate(seed)
        assert ev.deadline("one/float32/normal") < 10  # allowance + 20x the seed's 10 ms
        assert ev.deadline("odd/float32/normal") == DEADLINE_CAP_S["cpu"]  # capped
        assert ev.deadline("never/seen") == DEADLINE_CAP_S["cpu"]


def test_the_same_source_is_judged_once(tmp_path: Path) -> None:
    seed = ROOT / "seeds" / "softmax.py"
    copy = tmp_path / "again.py"
    copy.write_text(seed.read_text())
    with Evaluator("softmax", "cpu", seed=3) as ev:
        first = verify_candidate("softmax", seed, device="cpu", evaluator=ev)
        start = time.monotonic()
        second = verify_candidate("softmax", copy, device="cpu", evaluator=ev)
        assert time.monotonic() - start < 2.0
    assert first.accepted and second.accepted
    assert first.duplicate_of is None
    assert second.duplicate_of == first.candidate
    assert second.sha256 == first.sha256 == sha256(seed.read_text())
