"""The operator contract: the shipped operators load; malformed specs fail with file and field."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from kernelgen.errors import SpecError, UsageError
from kernelgen.spec import Case, OpSpec, ScalarInput, known_ops, load_spec, resolve_dim

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


def _width(spec: OpSpec, case: Case) -> int:
    """The last dimension of the first input: the row length a kernel blocks over."""
    first = spec.data.inputs[0]
    if first.name in case.size.shapes:
        return case.size.shapes[first.name][-1]
    return resolve_dim(first.shape[-1], case.dims)  # type: ignore[union-attr]


def _rows(spec: OpSpec, case: Case) -> int:
    first = spec.data.inputs[0]
    if first.name in case.size.shapes:
        return math.prod(case.size.shapes[first.name][:-1])
    return math.prod(resolve_dim(d, case.dims) for d in first.shape[:-1])  # type: ignore[union-attr]


def _pow2(n: int) -> bool:
    return n > 1 and n & (n - 1) == 0


@pytest.mark.parametrize("op", ["softmax", "rms_norm", "silu_and_mul"])
def test_grid_covers_what_cheats_exploit(op: str) -> None:
    spec = load_spec(op)
    cpu = [c for c in spec.cases if c.interpreter]
    gpu = [c for c in spec.cases if not c.size.interpreter]
    # Widths that are multiples of 64 and powers of two: where a kernel drops its mask.
    cpu_pow2 = {_width(spec, c) for c in cpu if _pow2(_width(spec, c))}
    assert any(w % 64 == 0 for w in cpu_pow2) and len(cpu_pow2) >= 3, cpu_pow2
    assert any(_pow2(_width(spec, c)) and _width(spec, c) >= 65536 for c in gpu)
    # More rows than a persistent grid: 132 SMs x 64 programs on the H200, 4 x 132 on CPU.
    assert any(_rows(spec, c) > 132 * 64 for c in gpu)
    assert any(_rows(spec, c) > 4 * 132 for c in cpu)
    # NaN, +inf, -inf and an all -inf row, in CPU cases of more than 2 rows.
    assert any(c.dist == "specials" and _rows(spec, c) > 2 for c in cpu)


def test_rms_norm_eps_is_drawn() -> None:
    spec = load_spec("rms_norm")
    eps = next(i for i in spec.data.inputs if isinstance(i, ScalarInput))
    assert eps.draw is not None and eps.draw[0] < eps.value < eps.draw[1]
    assert any(c.dist == "small" and c.interpreter for c in spec.cases)


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


SCALAR = GOOD.replace("def bad(x):", "def bad(x, eps):").replace(
    '"inputs": [{"name": "x", "shape": ["rows", "cols"]}]',
    '"inputs": [{"name": "x", "shape": ["rows", "cols"]}, '
    '{"kind": "scalar", "name": "eps", "value": 1e-6, "draw": [1e-8, 1e-2]}]',
)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("[1e-8, 1e-2]", "[1e-2, 1e-8]"), r"0 < lo < hi"),
        (("[1e-8, 1e-2]", "[0.0, 1e-2]"), r"0 < lo < hi"),
        (("[1e-8, 1e-2]", "[-1.0, 1.0]"), r"0 < lo < hi"),
        (("[1e-8, 1e-2]", "[1e-3, 1e-3]"), r"0 < lo < hi"),
        (("[1e-8, 1e-2]", "[1e-8, float('inf')]"), r"0 < lo < hi"),
        (("[1e-8, 1e-2]", "[1e-8]"), r"\.1: Field required"),
        (('"value": 1e-6', '"value": 1'), r"only a float scalar can be drawn"),
        (('"value": 1e-6', '"value": True'), r"only a float scalar can be drawn"),
    ],
)
def test_bad_draw_range_names_file_and_field(
    project: Path, edit: tuple[str, str], message: str
) -> None:
    _write(project, SCALAR.replace(*edit))
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.inputs\.1\.scalar\.draw.*" + message):
        load_spec("bad")


def test_unknown_input_kind_names_file_and_field(project: Path) -> None:
    _write(project, SCALAR.replace('"kind": "scalar"', '"kind": "vector"'))
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.inputs\.1: kind: expected"):
        load_spec("bad")


def test_drawn_scalar_spec_loads(project: Path) -> None:
    _write(project, SCALAR)
    eps = load_spec("bad").data.inputs[1]
    assert isinstance(eps, ScalarInput) and eps.draw == (1e-8, 1e-2) and eps.value == 1e-6


def test_good_spec_loads(project: Path) -> None:
    _write(project, GOOD)
    spec = load_spec("bad")
    assert [c.name for c in spec.cases] == ["a/float32/normal", "a/float32/uniform"]


def test_cost_is_validated(project: Path) -> None:
    _write(project, GOOD.replace('{"bytes": 1, "flops": 1}', '{"bytes": -1}'))
    with pytest.raises(SpecError, match=r"cost\("):
        load_spec("bad").cost({"rows": 2, "cols": 3}, "float32")


FIXED = (
    GOOD.replace("def bad(x):", "def bad(x, w):")
    .replace(
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}]',
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}, '
        '{"name": "w", "shape": ["cols"], "dtype": "WDTYPE"}]',
    )
    .replace('"dtypes": ["float32"]', '"dtypes": ["float16", "bfloat16"]')
)


@pytest.mark.parametrize(("wdtype", "cpu"), [("float32", True), ("bfloat16", False)])
def test_fixed_dtype_input_keeps_its_dtype(project: Path, wdtype: str, cpu: bool) -> None:
    """The case dtype drives x; w keeps its own, and a bf16 one keeps the case off the CPU."""
    from kernelgen.inputs import case_inputs

    _write(project, FIXED.replace("WDTYPE", wdtype))
    spec = load_spec("bad")
    for case in spec.cases:
        x, w = case_inputs(spec, case, seed=0, device="cpu")
        assert str(x.dtype) == f"torch.{case.dtype}" and str(w.dtype) == f"torch.{wdtype}"
        assert case.interpreter == (cpu and case.dtype != "bfloat16"), case.name


def test_router_gemm_spec() -> None:
    spec = load_spec("router_gemm")
    assert {c.dtype for c in spec.cases} == {"float16", "bfloat16"}
    assert all(c.fixed_dtypes == ("float32",) for c in spec.cases)
    cpu = [c for c in spec.cases if c.interpreter]
    assert cpu and all(c.dtype == "float16" for c in cpu)
    # top-8 is a choice on every case, and the CPU cases are small (interpreter time).
    assert all(c.dims["N"] > 8 for c in spec.cases)
    assert all(c.dims["M"] * c.dims["N"] * c.dims["K"] < 2_000_000 for c in cpu)
    assert any(c.dims["K"] % 16 for c in cpu) and any(c.size.layout == "transposed" for c in cpu)
    assert {(c.dims["N"], c.dims["K"]) for c in spec.cases if not c.size.interpreter} >= {
        (256, 7168),
        (192, 4096),
    }
    cost = spec.cost({"M": 2, "N": 3, "K": 5}, "bfloat16")
    assert (cost.bytes, cost.flops) == (2 * 5 * 2 + 3 * 5 * 4 + 2 * 3 * 4, 2 * 2 * 3 * 5)


def test_router_gemm_compare_rule() -> None:
    """Max-abs within the bound, and the top-8 set where float64's 8th and 9th scores are more
    than the bound apart."""
    import torch

    spec = load_spec("router_gemm")
    assert spec.compare is not None
    case = next(c for c in spec.cases if c.size.name == "odd")
    limit = spec.module.bound(case.dims["K"])
    ref = torch.arange(16, dtype=torch.float64).flip(0).repeat(3, 1) * limit  # 15b, 14b, ... 0
    ref[1, 8] = ref[1, 7] - 0.5 * limit  # row 1: 8th and 9th within the bound: either pick
    ref[2, 8] = ref[2, 7] - 1.5 * limit  # row 2: apart by more than the bound: decided
    assert spec.compare(ref.float(), ref, case) is None
    swapped = ref.clone()
    for row in (1, 2):  # each score moved by under the bound, the 8th and 9th trade places
        swapped[row, 7] -= 0.8 * limit
        swapped[row, 8] += 0.8 * limit
    swapped[1, 8] = swapped[1, 7] + 1e-3 * limit
    only_undecided = ref.clone()
    only_undecided[1] = swapped[1]
    assert spec.compare(only_undecided, ref, case) is None
    msg = spec.compare(swapped, ref, case)
    assert msg and msg.startswith("token 2: top-8 experts") and "1 of 3 tokens" in msg
    far = ref.clone()
    far[0, 3] += 1.01 * limit
    msg = spec.compare(far, ref, case)
    assert msg and "at [0, 3]" in msg and "sqrt(K)" in msg
    nan = ref.clone()
    nan[2, 5] = float("nan")
    assert "at [2, 5]" in (spec.compare(nan, ref, case) or "")
