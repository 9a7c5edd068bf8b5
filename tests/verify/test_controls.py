"""For every operator: the seed is accepted and every negative control is rejected, on CPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from controls import CONTROLS, OP_CONTROLS, OPS, ROOT  # noqa: E402

from kernelgen.verify import verify_candidate  # noqa: E402


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize("op", sorted(OPS))
def test_seed_accepted(op: str) -> None:
    v = verify_candidate(op, ROOT / "seeds" / f"{op}.py", device="cpu", seed=1)
    assert v.accepted, v.reason
    assert v.cases_run > 0
    # bf16 cases are reported as not run on CPU, never as passed.
    assert all(c.status == "not_run" for c in v.cases if "/bfloat16/" in c.name)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_control_rejected(op: str, control: str, tmp_path: Path) -> None:
    build, categories = CONTROLS[control]
    path = tmp_path / f"{control}.py"
    path.write_text(build(op))
    v = verify_candidate(op, path, device="cpu", seed=2)
    assert not v.accepted
    assert v.category in categories, f"{v.category}: {v.reason}"
    assert v.reason


@pytest.mark.parametrize(("op", "control"), sorted(OP_CONTROLS))
def test_op_control_rejected(op: str, control: str, tmp_path: Path) -> None:
    """Shortcuts particular to one operator, rejected for the reason named."""
    build, categories, phrase = OP_CONTROLS[(op, control)]
    path = tmp_path / f"{control}.py"
    path.write_text(build(op))
    v = verify_candidate(op, path, device="cpu", seed=2)
    assert not v.accepted
    assert v.category in categories, f"{v.category}: {v.reason}"
    assert phrase in (v.reason or ""), v.reason


HONEST = {
    "softmax": "softmax_online.py",
    "rms_norm": "rms_norm_contiguous.py",
    "silu_and_mul": "silu_and_mul_flat.py",
}


HONEST_EXTRA = [
    # Every config judged alone on every case: ~110 s in the interpreter (its first config has a
    # 64-wide block); test_autotune_configs.py judges autotuned twins on two cases in CI.
    pytest.param("softmax", "softmax_autotuned_persistent.py", marks=pytest.mark.slow),
    # A program per token and a summation order unlike the seed's: ~35 s in the interpreter.
    pytest.param("router_gemm", "router_gemm_gemv.py", marks=pytest.mark.slow),
    # One fused kernel without the seed's scratch buffer: ~30 s in the interpreter.
    pytest.param("fused_moe", "fused_moe_fused.py", marks=pytest.mark.slow),
    # Split-KV with a log-sum-exp merge, a page lookup per token and tl.dot scores: ~15 s.
    pytest.param("decode_attn", "decode_attn_split.py", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("op", "name"), sorted(HONEST.items()) + HONEST_EXTRA)
def test_honest_other_style_accepted(op: str, name: str) -> None:
    path = Path(__file__).parent / "candidates" / name
    v = verify_candidate(op, path, device="cpu", seed=3)
    assert v.accepted, v.reason
