"""The operator contract: the shipped operators load; malformed specs fail with file and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelgen.errors import SpecError, UsageError
from kernelgen.spec import known_ops, load_spec

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def test_shipped_operators_load() -> None:
    assert {"softmax", "rms_norm", "silu_and_mul"} <= set(known_ops())
    for op in ("softmax", "rms_norm", "silu_and_mul"):
        spec = load_spec(op)
        assert spec.cases and spec.data.bench
        # The contract: odd sizes, strided layouts, every dtype, CPU-runnable cases.
        assert any(c.interpreter for c in spec.cases)
        assert any(c.size.layout != "contiguous" for c in spec.cases)
        assert {c.dtype for c in spec.cases} == {"float32", "float16", "bfloat16"}
        assert not any(c.interpreter for c in spec.cases if c.dtype == "bfloat16")
        for shape in spec.data.bench:
            cost = spec.cost(shape.dims, shape.dtype)
            assert cost.bytes > 0 and cost.flops > 0


def test_unknown_operator_lists_known(project: Path) -> None:
    with pytest.raises(UsageError, match="known: .*softmax"):
        load_spec("nope")


def _write(project: Path, text: str) -> None:
    (project / "references" / "bad.py").write_text(text)


GOOD = """
import torch
def bad(x):
    return x
def cost(dims, itemsize):
    return {"bytes": 1, "flops": 1}
SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "cols"]}],
    "dtypes": ["float32"], "dists": ["normal", "uniform"],
    "sizes": [{"name": "a", "dims": {"rows": 2, "cols": 3}, "interpreter": True}],
    "bench": [{"name": "b", "dims": {"rows": 2, "cols": 3}}],
}
"""


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"dtypes": ["float32"]', '"dtypes": ["float8"]'), r"bad\.py: SPEC\.dtypes\.0"),
        (('"cols": 3}, "interpreter"', '"col": 3}, "interpreter"'), r"needs dim 'cols'"),
        (('"dists": ["normal", "uniform"]', '"dists": ["normal"]'), r"SPEC\.dists"),
        (('"interpreter": True', '"interpreter": True, "colour": 1'), r"colour"),
        (("def bad(x):", "def bad(x, y):"), r"does not match SPEC\.inputs"),
        (("def bad(x):", "def other(x):"), r"no function named 'bad'"),
        (("def cost(dims, itemsize):", "def costs(dims, itemsize):"), r"cost: expected"),
        (("SPEC = {", "SPEC = dict(**{"), r"bad\.py:\d+: syntax error"),
        (("SPEC = {", "SPEC = 3 or {"), r"SPEC: expected a dict"),
    ],
)
def test_bad_spec_names_file_and_field(project: Path, edit: tuple[str, str], message: str) -> None:
    _write(project, GOOD.replace(*edit))
    with pytest.raises(SpecError, match=message):
        load_spec("bad")


def test_good_spec_loads(project: Path) -> None:
    _write(project, GOOD)
    spec = load_spec("bad")
    assert [c.name for c in spec.cases] == ["a/float32/normal", "a/float32/uniform"]


def test_cost_is_validated(project: Path) -> None:
    _write(project, GOOD.replace('{"bytes": 1, "flops": 1}', '{"bytes": -1}'))
    with pytest.raises(SpecError, match=r"cost\("):
        load_spec("bad").cost({"rows": 2, "cols": 3}, "float32")
