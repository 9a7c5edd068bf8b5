"""The operator contract: the shipped operators load; malformed specs fail with file and field."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from kernelgen.errors import SpecError, UsageError
from kernelgen.spec import Case, OpSpec, ScalarInput, known_ops, load_spec, models, resolve_dim

ROOT = Path(__file__).resolve().parents[2]


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
    from kernelgen.spec.inputs import case_inputs

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
    """Each score within its bound, and the top-8 set where float64's 8th and 9th scores are
    more than the bound apart. The bound is relative to the products' size, here the same for
    every score: sqrt(K) products of 0.01."""
    import functools

    import torch

    spec = load_spec("router_gemm")
    assert spec.compare is not None
    case = next(c for c in spec.cases if c.size.name == "odd")
    k = case.dims["K"]
    inputs = [torch.ones(3, k, dtype=torch.float16), torch.full((16, k), 0.01)]
    limit = float(spec.module.bound(*inputs).max())
    assert limit == pytest.approx(1e-4 * 0.01 * k**0.5)
    spec.compare = functools.partial(spec.module.compare, inputs=inputs)
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
    assert msg and "at [0, 3]" in msg and "sqrt(sum_k (x_k*w_k)^2)" in msg
    nan = ref.clone()
    nan[2, 5] = float("nan")
    assert "at [2, 5]" in (spec.compare(nan, ref, case) or "")


INDEXED = (
    GOOD.replace("def bad(x):", "def bad(x, ids):")
    .replace(
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}]',
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}, '
        '{"name": "ids", "shape": ["rows"], "dtype": "int32", "layout_varies": False}]',
    )
    .replace("import torch", "import torch\nIDS = torch.int32\nROWS = 0")
)
MAKER = """
def make_inputs(size, dtype, dist, gen):
    rows, cols = size.dims["rows"], size.dims["cols"]
    x = torch.randn(rows, cols, generator=gen).to(getattr(torch, dtype))
    return [x, torch.randperm(rows + ROWS, generator=gen).to(IDS)]
"""


def test_integer_input_needs_the_references_own_maker(project: Path) -> None:
    _write(project, INDEXED)
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.inputs\.ids: int32 values need"):
        load_spec("bad")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("IDS = torch.int32", "IDS = torch.int64"),
            r"'ids' is torch\.int64 \[2\], expected torch\.int32 \[2\]",
        ),
        (("ROWS = 0", "ROWS = 1"), r"'ids' is torch\.int32 \[3\], expected torch\.int32 \[2\]"),
        (("return [x, ", "return [x, x, "), r"returned 3, expected a list of 2"),
    ],
)
def test_own_maker_is_held_to_the_spec(project: Path, edit: tuple[str, str], message: str) -> None:
    from kernelgen.spec.inputs import case_inputs

    _write(project, INDEXED + MAKER)
    spec = load_spec("bad")
    x, ids = case_inputs(spec, spec.cases[0], seed=0, device="cpu")
    assert str(ids.dtype) == "torch.int32" and sorted(ids.tolist()) == [0, 1]
    _write(project, (INDEXED + MAKER).replace(*edit))
    spec = load_spec("bad")
    with pytest.raises(SpecError, match=r"bad\.py: make_inputs\('a', 'float32'\): " + message):
        case_inputs(spec, spec.cases[0], seed=0, device="cpu")


COUNTED = (
    GOOD.replace("def bad(x):", "def bad(x, k):")
    .replace(
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}]',
        '"inputs": [{"name": "x", "shape": ["rows", "cols"]}, '
        '{"kind": "scalar", "name": "k", "dim": "k"}]',
    )
    .replace('{"rows": 2, "cols": 3}', '{"rows": 2, "cols": 3, "k": 2}')
)
COUNTED_MAKER = """
def make_inputs(size, dtype, dist, gen):
    x = torch.randn(size.dims["rows"], size.dims["cols"], generator=gen).to(getattr(torch, dtype))
    return [x, size.dims["k"]]
"""


def test_scalar_given_by_a_dim(project: Path) -> None:
    """An int argument that is one of the size's dims (topk's k), not a fixed value."""
    from kernelgen.spec.inputs import case_inputs

    _write(project, COUNTED + COUNTED_MAKER)
    spec = load_spec("bad")
    k = spec.data.inputs[1]
    assert isinstance(k, ScalarInput) and k.dim == "k" and k.value is None
    assert k.value_for({"rows": 2, "cols": 3, "k": 2}) == 2
    assert case_inputs(spec, spec.cases[0], seed=0, device="cpu")[1] == 2
    eps = ScalarInput(name="eps", value=1e-6)
    assert eps.value_for({"k": 2}) == 1e-6
    # The default maker passes it too.
    _write(project, COUNTED)
    spec = load_spec("bad")
    assert case_inputs(spec, spec.cases[0], seed=0, device="cpu")[1] == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"dim": "k"}', '"dim": "k", "value": 3}'), r"inputs\.1\.scalar.*either value or dim"),
        (('"dim": "k"}', "}"), r"inputs\.1\.scalar.*either value or dim"),
        (
            ('"cols": 3, "k": 2}, "interpreter"', '"cols": 3}, "interpreter"'),
            r"sizes\.a: scalar 'k' is dim 'k'",
        ),
    ],
)
def test_bad_dim_scalar_names_file_and_field(
    project: Path, edit: tuple[str, str], message: str
) -> None:
    _write(project, (COUNTED + COUNTED_MAKER).replace(*edit))
    with pytest.raises(SpecError, match=r"bad\.py: .*" + message):
        load_spec("bad")


def test_compare_gets_the_inputs_where_it_asks_for_them(project: Path) -> None:
    """A compare with a fourth parameter is given the call's arguments; one with three is
    called as before."""
    import torch

    compare = """
def compare(out, ref, case, inputs):
    return None if inputs[1] == 2 else f"k {inputs[1]}"
"""
    _write(project, COUNTED + COUNTED_MAKER + compare)
    spec = load_spec("bad")
    assert spec.judge(None, None, spec.cases[0], [None, 2]) is None
    assert spec.judge(None, None, spec.cases[0], [None, 3]) == "k 3"
    gemm = load_spec("router_gemm")
    case = next(c for c in gemm.cases if c.size.name == "one_token")
    x, w = torch.randn(1, 200, dtype=torch.float16), torch.randn(9, 200)
    ref = x.double() @ w.double().T
    assert gemm.judge(ref.float(), ref, case, [x, w]) is None


def test_fused_moe_spec() -> None:
    spec = load_spec("fused_moe")
    assert {c.dtype for c in spec.cases} == {"float16", "bfloat16"}
    assert all(c.fixed_dtypes == ("float32",) for c in spec.cases)
    cpu = [c for c in spec.cases if c.interpreter]
    assert cpu and all(c.dtype == "float16" for c in cpu)
    dims = [c.dims for c in cpu]
    # Odd sizes, powers of two, more than one 64-wide block, k=1, k>1 and k=E, every layout of x.
    assert any(d["H"] % 16 and d["I"] % 16 for d in dims)
    assert any(_pow2(d["H"]) and _pow2(d["I"]) for d in dims)
    assert any(d["H"] > 64 for d in dims) and any(d["I"] > 64 for d in dims)
    assert {1, 2, 3} <= {d["k"] for d in dims} and any(d["k"] == d["E"] for d in dims)
    assert {c.size.layout for c in cpu} == {"contiguous", "strided", "transposed"}
    # Interpreter time: a program per token-slot row and per token, ~3 ms each.
    assert all(d["M"] * d["k"] <= 40 for d in dims)
    # Qwen3-30B-A3B's experts, and Mixtral-8x7B's, DeepSeek-V3's and Qwen3-235B-A22B's over 8 GPUs.
    experts = [(128, 8, 2048, 768), (8, 2, 4096, 1792), (256, 8, 7168, 256), (128, 8, 4096, 192)]
    models = {(c.dims["E"], c.dims["k"], c.dims["H"], c.dims["I"]) for c in spec.cases}
    assert set(experts) <= models
    ladder = [(m, *e) for e in experts[:2] for m in (1, 16, 128, 1024, 4096)]
    assert [tuple(b.dims[d] for d in "MEkHI") for b in spec.data.bench] == [
        *ladder,
        (128, *experts[2]),
        (4096, *experts[3]),
    ]
    # x and y; w1 (2I x H) and w2 (H x I) of min(E, M*k) = 6 experts; 8 bytes of routing a slot.
    cost = spec.cost({"M": 2, "E": 8, "k": 3, "H": 5, "I": 7}, "bfloat16")
    assert cost.bytes == 2 * 2 * 5 * 2 + 6 * 3 * 7 * 5 * 2 + 2 * 3 * 8
    assert cost.flops == 2 * 3 * (6 * 7 * 5 + 6 * 7 + 2 * 5)
    decode = spec.cost(spec.data.bench[0].dims, "bfloat16")  # M=1: 8 of 128 experts move
    assert decode.bytes == 2 * 2048 * 2 + 8 * 3 * 768 * 2048 * 2 + 8 * 8


@pytest.mark.parametrize("seed", range(3))
def test_fused_moe_routing(seed: int) -> None:
    """ids distinct per row and in range, weights in (0, 1); each size routes as it is named,
    and the grid holds k=1 with every token on one expert and experts that get no token."""
    import torch

    from kernelgen.spec.inputs import case_inputs

    spec = load_spec("fused_moe")
    one_expert_k1 = idle = False
    for case in (c for c in spec.cases if c.interpreter):
        x, w1, w2, tw, ids = case_inputs(spec, case, seed, "cpu")
        m, e, k = (case.dims[d] for d in ("M", "E", "k"))
        assert (x.dtype, w1.dtype, w2.dtype) == (torch.float16,) * 3, case.name
        assert (tw.dtype, ids.dtype) == (torch.float32, torch.int32), case.name
        assert int(ids.min()) >= 0 and int(ids.max()) < e, case.name
        assert bool((ids.sort(dim=1).values.diff(dim=1) > 0).all()), case.name
        assert bool(((tw > 0) & (tw < 1)).all()) and tw.unique().numel() == m * k, case.name
        used = ids.unique().numel()
        mode = spec.module.routing(case.size.name)
        if mode == "one_expert":
            assert bool((ids[:, 0] == ids[0, 0]).all()), case.name
            one_expert_k1 |= k == 1 and used == 1
        if mode == "idle":
            assert used <= e - min(e - k, e // 2), case.name
        idle |= used < e
    assert one_expert_k1 and idle


def test_fused_moe_bench_routing_is_balanced() -> None:
    """Bench shapes touch min(E, M*k) experts, each with M*k/E slots (+-1): cost() is exact."""
    from kernelgen.spec import BenchShape
    from kernelgen.spec.inputs import make_inputs

    spec = load_spec("fused_moe")
    for m, e, k in ((5, 16, 3), (40, 16, 3), (1, 128, 8)):
        shape = BenchShape(name=f"M{m}", dims={"M": m, "E": e, "k": k, "H": 8, "I": 4})
        ids = make_inputs(spec, shape, "bfloat16", "normal", m, "cpu")[4]
        counts = ids.flatten().bincount(minlength=e)
        assert int((counts > 0).sum()) == min(e, m * k)
        assert int(counts.max()) - int(counts[counts > 0].min()) <= 1


def test_fused_moe_torch_baselines() -> None:
    """The reference in fp16 is fp32 math rounded once (torch's yardstick for the error ratio),
    and the eager peer agrees with it: both well inside the verifier's tolerance."""
    from kernelgen.spec.inputs import case_inputs
    from kernelgen.verify import checks

    spec = load_spec("fused_moe")
    for case in (c for c in spec.cases if c.interpreter):
        args = case_inputs(spec, case, 0, "cpu")
        ref = spec.reference(*[a.double() if a.is_floating_point() else a for a in args])
        tol = spec.tolerance(case.dtype, case.dims)
        for fn in (spec.reference, spec.eager):
            out = fn(*args)
            assert checks.values(out, ref, tol)[0] is None, (case.name, fn.__name__)
            # fp16 rounds to 11 bits: a mean error of about a quarter of 2^-11 relative.
            assert checks.rel_err(out, ref) < 2**-11, (case.name, fn.__name__)


def test_decode_attn_spec() -> None:
    spec = load_spec("decode_attn")
    assert {c.dtype for c in spec.cases} == {"bfloat16", "float16", "float32"}
    cpu = [c for c in spec.cases if c.interpreter]
    assert {c.dtype for c in cpu} == {"float16", "float32"}
    # Interpreter time: a program per (request, query head), a few ms per page it walks.
    assert len(cpu) <= 12
    assert all(c.dims["B"] * c.dims["Hq"] * (c.dims["L"] // c.dims["page"] + 1) <= 128 for c in cpu)
    dims = [c.dims for c in cpu]
    # One token; a length ending mid-page, past one page, at every page size; exactly one page;
    # several lengths in a batch; GQA ratio 1 and > 1; a head dim no power of two; q strided
    # and column-major.
    assert any(d["B"] == 1 and d["L"] == 1 for d in dims)
    mid_page = {d["page"] for d in dims if d["L"] % d["page"] and d["L"] > d["page"]}
    assert mid_page == set(spec.module.PAGES) == {16, 32, 64}
    assert any(d["B"] == 1 and d["L"] == d["page"] for d in dims)
    assert any(d["B_long"] < d["B"] for d in dims)
    assert {d["Hq"] == d["Hkv"] for d in dims} == {True, False}
    assert any(not _pow2(d["D"]) for d in dims)
    assert {c.size.layout for c in cpu} == {"contiguous", "strided", "transposed"}
    assert {"wide", "specials"} <= {c.dist for c in cpu}
    # Every table row has an entry past its pages and the cache pages no request owns.
    assert all(d["P"] > -(-d["L"] // d["page"]) for d in (c.dims for c in spec.cases))
    # The GPU cases and bench shapes: named `<model>_<what>_p<page>`, with that model's heads
    # and that page; every page size twice in each; Llama-3-70B's 64 query heads over 8 KV
    # heads of 128 and Qwen3's among them; a 128K request.
    gpu = [c.size for c in spec.cases if not c.size.interpreter]
    for named in (gpu, spec.data.bench):
        pages = []
        for size in named:
            model = models.model_of(size.name)
            assert model in spec.module.MODELS, size.name
            m = models.MODELS[model]
            heads = tuple(size.dims[k] for k in ("Hq", "Hkv", "D"))
            assert heads == (m.heads, m.kv_heads, m.head_dim), size.name
            assert size.name.endswith(f"_p{size.dims['page']}"), size.name
            pages.append(size.dims["page"])
        assert sorted(set(pages)) == [16, 32, 64] and min(map(pages.count, pages)) >= 2
    assert spec.module._heads("llama3_70b") == {"hq": 64, "hkv": 8, "d": 128}
    assert any(s.name.startswith("qwen3_") for s in spec.data.bench)
    assert max(c.dims["L"] for c in spec.cases if not c.size.interpreter) >= 131072
    # The batches of BASELINES.md (its floors were at 8 KV heads of 128: live K and V at 4.27
    # TB/s), now at the named models' heads and pages.
    batches = ["64x0.5K", "64x4K", "32x128+32x4K", "2x32K+30x4K", "1x64K+15x4K", "1x128K+31x4K"]
    assert [b.name.split("_")[-2] for b in spec.data.bench] == batches
    floors = [31.4, 251.5, 129.7, 180.7, 121.8, 247.5]
    for shape, floor in zip(spec.data.bench, floors, strict=True):
        tokens, _ = spec.module.live_tokens(shape.dims)
        assert round(tokens * 8 * 128 * 2 * 2 / 4.27e12 * 1e6, 1) == floor, shape.name
    # 2 requests of 100 and 1 of 10 tokens: 5 pages of 32 (3 of 16 for the short one, 2 in
    # pages of 64); K and V, q and out, lengths and table.
    dims = {"B": 3, "L": 100, "B_long": 2, "L_rest": 10, "Hq": 4, "Hkv": 2, "D": 8, "P": 5}
    for page, pages in ((16, 15), (32, 9), (64, 5)):
        cost = spec.cost({**dims, "page": page, "N": pages + 4}, "bfloat16")
        assert cost.bytes == 210 * 2 * 8 * 2 * 2 + 2 * 3 * 4 * 8 * 2 + 4 * (3 + pages)
        assert cost.flops == 210 * 4 * (4 * 8 + 5) + 3 * 4 * 8


def _decode_invariants(spec: OpSpec, size, args: list, drawn: bool) -> None:
    """What make_inputs promises (references/decode_attn.py), for one batch."""
    _, k_cache, v_cache, table, lens, scale = args
    d = size.dims
    others = d["B"] - d["B_long"]
    lens_l = lens.tolist()
    assert min(lens_l) >= 1 and max(lens_l) == d["L"], size.name
    assert sum(n == d["L"] for n in lens_l) >= d["B_long"], size.name
    if drawn:  # the other requests each drew a length from [1, L_rest]
        assert all(n <= d["L_rest"] for n in sorted(lens_l)[:others]), size.name
        lo, hi = spec.module.SPEC["inputs"][-1]["draw"]
        assert lo <= scale <= hi, size.name
    else:
        assert sorted(lens_l) == sorted([d["L"]] * d["B_long"] + [d["L_rest"]] * others)
        assert scale == 128**-0.5
    assert int(table.min()) >= 0 and int(table.max()) < d["N"], size.name
    page = d["page"]
    assert k_cache.shape == v_cache.shape == (d["N"], page, d["Hkv"], d["D"]), size.name
    owned = [table[b, : -(-n // page)].tolist() for b, n in enumerate(lens_l)]
    mine = [p for row in owned for p in row]
    assert len(set(mine)) == len(mine), size.name  # no page is shared or repeated
    unused = set(range(d["N"])) - set(mine)
    assert unused, size.name
    for b, n in enumerate(lens_l):
        assert set(table[b, -(-n // page) :].tolist()) <= unused, size.name
    for cache in (k_cache, v_cache):
        # Poison everywhere no live token is: whole spare pages and the tail of a last page.
        assert bool(cache[sorted(unused)].isnan().all()), size.name
        for b, n in enumerate(lens_l):
            tokens = cache[owned[b]].flatten(0, 1)
            assert bool(tokens[n:].isnan().all()), size.name


@pytest.mark.parametrize("seed", range(3))
def test_decode_attn_inputs(seed: int) -> None:
    """Pages distinct and owned by one request each, lengths as the size describes them, NaN
    in every slot past a request's length and every table entry past its pages pointing at a
    page no request owns; finite live values except under `specials`."""
    import torch

    from kernelgen.spec.inputs import case_inputs

    spec = load_spec("decode_attn")
    for case in (c for c in spec.cases if c.interpreter):
        args = case_inputs(spec, case, seed, "cpu")
        _decode_invariants(spec, case.size, args, drawn=True)
        q, k_cache = args[0], args[1]
        lens, table, page = args[4].tolist(), args[3], case.dims["page"]
        live = torch.cat([
            k_cache[table[b, : -(-n // page)].long()].flatten(0, 1)[:n] for b, n in enumerate(lens)
        ])  # fmt: skip
        assert bool(live.isfinite().all()) == (case.dist != "specials"), case.name
        assert q.is_contiguous() == (case.size.layout == "contiguous"), case.name


def test_decode_attn_bench_batches() -> None:
    """Bench batches as named: exact lengths (cost() is exact there), one spare page, a table
    as wide as the longest request; drawn with 1 head and D = 1 to stay small."""
    from kernelgen.spec import BenchShape
    from kernelgen.spec.inputs import make_inputs

    spec = load_spec("decode_attn")
    for shape in spec.data.bench:
        small = BenchShape(name=shape.name, dims={**shape.dims, "Hq": 2, "Hkv": 1, "D": 1})
        args = make_inputs(spec, small, "bfloat16", "normal", 0, "cpu")
        _decode_invariants(spec, small, args, drawn=False)
        _, pages = spec.module.live_tokens(shape.dims)
        width = -(-shape.dims["L"] // shape.dims["page"])
        assert shape.dims["N"] == pages + 1 and shape.dims["P"] == width


def test_decode_attn_torch_baselines() -> None:
    """The reference in the case dtype is fp32 math rounded once (torch's yardstick for the
    error ratio), and the SDPA peer agrees with it: both inside the verifier's tolerance, NaN
    and infinities where float64 has them."""
    from kernelgen.spec.inputs import case_inputs
    from kernelgen.verify import checks

    spec = load_spec("decode_attn")
    for case in (c for c in spec.cases if c.interpreter):
        args = case_inputs(spec, case, 0, "cpu")
        up = [a.double() if getattr(a, "is_floating_point", lambda: False)() else a for a in args]
        ref = spec.reference(*up)
        tol = spec.tolerance(case.dtype, case.dims)
        for fn in (spec.reference, spec.eager):
            out = fn(*args)
            assert checks.values(out, ref, tol)[0] is None, (case.name, fn.__name__)
            # fp16: the output's rounding, about a quarter of 2^-11 relative on average; fp32:
            # the arithmetic's own, a few fp32 units.
            bound = 2**-11 if case.dtype == "float16" else 2**-20
            assert checks.rel_err(out, ref) < bound, (case.name, fn.__name__)


def test_hadamard_reference() -> None:
    import torch

    """The butterfly reference is x @ H * D^-0.5 for H[i, j] = (-1)^popcount(i & j): the dense
    peer's matrix, built from that definition; orthonormal and symmetric, so an involution."""
    spec = load_spec("hadamard")
    for d in (64, 1024):
        h = torch.tensor(
            [[(-1.0) ** bin(i & j).count("1") for j in range(d)] for i in range(d)],
            dtype=torch.float64,
        )
        x = torch.randn(3, d, dtype=torch.float64)
        torch.testing.assert_close(spec.reference(x), x @ h * d**-0.5)
        torch.testing.assert_close(spec.eager(x), x @ h * d**-0.5)
        torch.testing.assert_close(spec.reference(spec.reference(x)), x)
    assert all(c.dims["D"] & (c.dims["D"] - 1) == 0 for c in spec.cases)
