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


@pytest.mark.slow  # a whole CPU verdict; test_fits_only_where_a_target_is_named covers the rule
def test_a_kernel_past_the_targets_shared_memory_is_rejected_as_compile(tmp_path: Path) -> None:
    """A kernel that compiles but cannot load: Triton checks shared memory when it loads the
    binary on the GPU, which a compile-only driver never does, so the check is made against
    sm_90's figures (sparse_attn at a 576-wide head was refused only on the H200). A 256x512 by
    512x256 fp16 product stages both operands, 512 KiB, in shared memory; it sits in a branch
    no call takes (d < 0), which the interpreter skips and the compiler still builds."""
    hungry = tmp_path / "hungry.py"
    src = SEED.read_text()
    load = "    a = tl.load(x_row + cols * stride_xn, mask=mask, other=0.0).to(tl.float32)\n"
    assert load in src
    tile = (
        "    if d < 0:\n"
        "        t = tl.load(x_row + tl.arange(0, 256)[:, None] + tl.arange(0, 512)[None, :])\n"
        "        p = tl.dot(t.to(tl.float16), tl.trans(t.to(tl.float16)))\n"
        "        tl.store(y_ptr + tl.arange(0, 256)[:, None] + tl.arange(0, 256)[None, :], p)\n"
    )
    hungry.write_text(src.replace(load, load + tile))
    v = verify_candidate("silu_and_mul", hungry, device="cpu", seed=7, gpu_target="sm_90")
    assert not v.accepted and v.category == "compile", v.reason
    assert "compiled for the GPU (sm_90) on CPU" in (v.reason or "")
    assert "shared memory, Required: " in (v.reason or "")
    assert "Hardware limit: 232448" in (v.reason or "")


def test_fits_only_where_a_target_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """No target installed (a compile-ahead runner on the GPU itself, where loading checks):
    nothing is raised; sm_90 named: the limits are its own."""
    from types import SimpleNamespace

    from triton.runtime.errors import OutOfResources

    big = SimpleNamespace(metadata=SimpleNamespace(shared=232449, num_warps=4))
    monkeypatch.setattr(target, "_installed", None)
    target.check_fits(big)
    monkeypatch.setattr(target, "_installed", "sm_90")
    with pytest.raises(OutOfResources, match="shared memory, Required: 232449"):
        target.check_fits(big)
    target.check_fits(SimpleNamespace(metadata=SimpleNamespace(shared=232448, num_warps=32)))
    with pytest.raises(OutOfResources, match="threads"):
        target.check_fits(SimpleNamespace(metadata=SimpleNamespace(shared=0, num_warps=64)))
