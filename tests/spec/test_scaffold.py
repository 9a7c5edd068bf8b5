"""`kernelgen new OP --like EXISTING`: both files written, every bad input one line and exit 2,
the new operator listed, and each shape's seed accepted by `kernelgen verify` on CPU as written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.spec import load_spec
from kernelgen.spec.scaffold import SHAPES, TODO, render
from kernelgen.verify.static import check_source

ROOT = Path(__file__).resolve().parents[2]
# The fastest shape to verify on CPU (14 s on the 2-core machine) runs by default; the others
# (20-30 s each) are slow.
FAST = "router_gemm"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def _new(*args: str):
    return CliRunner().invoke(app, ["new", *args])


def test_new_writes_the_reference_and_the_seed(project: Path) -> None:
    result = _new("gelu_and_mul", "--like", "silu_and_mul")
    assert result.exit_code == 0, result.output
    reference = project / "references" / "gelu_and_mul.py"
    seed = project / "seeds" / "gelu_and_mul.py"
    assert "references/gelu_and_mul.py" in result.output
    assert "kernelgen verify gelu_and_mul seeds/gelu_and_mul.py --device cpu" in result.output
    # The reference computes silu_and_mul's math under the new name; the seed is its kernel.
    spec = load_spec("gelu_and_mul")
    assert spec.reference.__name__ == "gelu_and_mul" and spec.arg_names == ["x"]
    x = torch.randn(3, 10, generator=torch.Generator().manual_seed(0))
    assert torch.equal(spec.reference(x), load_spec("silu_and_mul").reference(x))
    source = seed.read_text()
    assert "def _gelu_and_mul_kernel(" in source and "silu_and_mul(" not in source
    assert check_source(source, "gelu_and_mul") == []
    todos = sum(TODO in line for p in (reference, seed) for line in p.read_text().splitlines())
    assert f"the {todos} TODOs" in result.output


def test_ops_lists_the_new_operator(project: Path) -> None:
    assert _new("scaled_softmax", "--like", "softmax").exit_code == 0
    result = CliRunner().invoke(app, ["ops", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output.strip().splitlines()[-1])["ops"]}
    row = rows["scaled_softmax"]
    assert row["seed"] is True and row["error"] is None
    assert row["interpreter_cases"] > 0 and row["bench_shapes"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["softmax", "--like", "rms_norm"], "references/softmax.py already exists"),
        (["gelu_and_mul", "--like", "nope"], "--like 'nope': unknown operator; known: act_quant"),
        (
            ["gelu_and_mul", "--like", "topk"],
            "--like topk: the scaffold cannot take its shape; it takes row-wise (softmax, "
            "rms_norm); elementwise/gated (silu_and_mul); GEMM-like (router_gemm)",
        ),
        (["GeluAndMul", "--like", "softmax"], "'GeluAndMul': an operator name is a lowercase"),
        (["gelu-and-mul", "--like", "softmax"], "'gelu-and-mul': an operator name is a lowercase"),
        (["2x_softmax", "--like", "softmax"], "'2x_softmax': an operator name is a lowercase"),
        (["_private", "--like", "softmax"], "'_private': an operator name is a lowercase"),
        (["lambda", "--like", "softmax"], "'lambda': a Python keyword"),
        (["sum", "--like", "softmax"], "'sum': Python's builtin of that name"),
        (["torch", "--like", "softmax"], "'torch': a name the reference, the seed or"),
        (["enable", "--like", "softmax"], "'enable': a name the reference, the seed or"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(project: Path, args: list[str], words: str) -> None:
    before = sorted(p.name for p in (project / "references").iterdir())
    result = _new(*args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and words in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert sorted(p.name for p in (project / "references").iterdir()) == before


def test_an_existing_seed_alone_stops_it_and_nothing_is_written(project: Path) -> None:
    (project / "seeds" / "gelu_and_mul.py").write_text("# someone's work in progress\n")
    result = _new("gelu_and_mul", "--like", "silu_and_mul")
    assert result.exit_code == 2
    assert "seeds/gelu_and_mul.py already exists" in result.output
    assert not (project / "references" / "gelu_and_mul.py").exists()
    assert (project / "seeds" / "gelu_and_mul.py").read_text() == "# someone's work in progress\n"


def test_a_project_without_the_operator_starts_from_its_shape(project: Path) -> None:
    # The templates carry the shape: --like needs no references/router_gemm.py.
    (project / "references" / "router_gemm.py").unlink()
    (project / "seeds" / "router_gemm.py").unlink()
    assert _new("lora_b", "--like", "router_gemm").exit_code == 0
    assert load_spec("lora_b").arg_names == ["x", "w"]


@pytest.mark.parametrize("like", sorted(SHAPES))
def test_every_shape_renders_a_loadable_spec_and_a_seed_the_static_rules_accept(
    project: Path, like: str
) -> None:
    op = "a_twenty_char_op_xyz"  # a long name: no rendered line passes ruff's 100
    reference, seed = render(op, like)
    for text in (reference, seed):
        assert "$" not in text
        assert max(len(line) for line in text.splitlines()) <= 100
    assert check_source(seed, op) == []
    (project / "references" / f"{op}.py").write_text(reference)
    spec = load_spec(op)
    assert spec.cases and any(c.interpreter for c in spec.cases)


@pytest.mark.parametrize(
    "like", [pytest.param(k, marks=[] if k == FAST else [pytest.mark.slow]) for k in sorted(SHAPES)]
)
def test_the_scaffold_verifies_on_cpu_as_written(project: Path, like: str) -> None:
    op = f"new_{like}"
    assert _new(op, "--like", like).exit_code == 0
    result = CliRunner().invoke(app, ["verify", op, f"seeds/{op}.py", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "ACCEPTED" in result.output


def test_a_candidate_may_name_the_shared_lookup_and_nothing_else_of_the_library() -> None:
    # What every seed's _config calls: allowed. Anything else of kernelgen_ops: not.
    seed = (ROOT / "seeds" / "softmax.py").read_text()
    assert "from kernelgen_ops._runtime import nearest_bucket" in seed
    assert check_source(seed, "softmax") == []
    imports = "import triton.language as tl\n"
    package = seed.replace(imports, imports + "import kernelgen_ops\n")
    assert [v.rule for v in check_source(package, "softmax")] == ["forbidden-import"]
    # The module may be imported; its other names stay unlisted (the shipped kernels, the tables).
    module = seed.replace(imports, imports + "import kernelgen_ops._runtime\n")
    for use in ("kernelgen_ops.softmax(x)", "kernelgen_ops._runtime.tuned('softmax')"):
        called = module.replace("    return y.view(x.shape)", f"    return {use}")
        assert [v.rule for v in check_source(called, "softmax")] == ["unlisted-name"], use
