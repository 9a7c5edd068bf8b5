"""A CPU verdict compiles the candidate for the GPU too (verify/target.py): the interpreter runs
a kernel's Python body, and accepts kernels that Triton's compiler refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.verify import target, verify_candidate

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seeds" / "silu_and_mul.py"


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_a_kernel_only_the_interpreter_accepts_is_rejected_as_compile(tmp_path: Path) -> None:
    """An annotated module global: under the interpreter a kernel reads it as any Python int;
    compiled, a kernel may read only `tl.constexpr(...)` instances (topk's seed met this on the
    H200). The interpreter's cases pass, the compile for sm_90 says why it fails."""
    annotated = tmp_path / "annotated.py"
    src = SEED.read_text()
    load = "    a = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)\n"
    assert load in src
    src = src.replace(load, load + "    a = a * ONE\n").replace(
        "@triton.jit\n", "ONE: tl.constexpr = 1.0\n\n\n@triton.jit\n", 1
    )
    annotated.write_text(src)
    v = verify_candidate("silu_and_mul", annotated, device="cpu", seed=7, gpu_target="sm_90")
    assert not v.accepted and v.category == "compile", v.reason
    assert "compiled for the GPU (sm_90) on CPU" in (v.reason or "")
    assert "Cannot access global variable ONE" in (v.reason or "")
    assert v.phases is not None and v.phases.gpu_compile > 0
    # Without the compile the interpreter's verdict is an acceptance: the check is what finds it.
    assert verify_candidate("silu_and_mul", annotated, device="cpu", seed=7).accepted


def test_targets_are_named() -> None:
    with pytest.raises(ValueError, match="unknown GPU target 'sm_80'; known: sm_90"):
        target.install("sm_80")
    result = CliRunner().invoke(
        app, ["verify", "silu_and_mul", str(SEED), "--device", "cpu", "--gpu-target", "sm_80"]
    )
    assert result.exit_code == 2
    assert "--gpu-target 'sm_80': expected none or one of sm_90" in result.output


def test_a_compile_that_hangs_is_no_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile check's runner past its deadline rejects as a timeout: a launcher that spins
    once its launch returns a compiled kernel (as a compile does, and the interpreter does not)
    passes every case and must not pass unseen."""
    from kernelgen.verify import judge

    monkeypatch.setattr(judge, "TARGET_COMPILE_S", 5.0)
    spinning = tmp_path / "spinning.py"
    launch = (
        "        _silu_and_mul_kernel[grid](y, x2, d, x2.stride(0), x2.stride(1), y.stride(0), "
        "**cfg)\n"
    )
    src = SEED.read_text()
    assert launch in src
    spun = (
        launch.replace("        _silu", "        k = _silu")
        + "        while k is not None:\n            pass\n"
    )
    spinning.write_text(src.replace(launch, spun))
    v = verify_candidate("silu_and_mul", spinning, device="cpu", seed=7, gpu_target="sm_90")
    assert not v.accepted and v.category == "timeout", v.reason
    assert "compiled for the GPU (sm_90) on CPU" in (v.reason or "")
