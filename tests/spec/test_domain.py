"""SPEC.domain and the cases a run draws from it: the same seed draws the same grid and another
seed another; the dims include the sizes that break kernels; every layout and value family is
made with the property it is there for, and a drawn case's name says the strides and offset its
input really has; a CPU draw fits the interpreter; a bad domain names its field."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from kernelgen.errors import SpecError
from kernelgen.spec import INTERPRETER_DTYPES, Case, Placement, TensorInput, load_spec, resolve_dim
from kernelgen.spec.draw import drawn_cases
from kernelgen.spec.inputs import case_inputs, case_seed, lay_out, place, values

DOMAIN_OPS = ["softmax", "rms_norm", "silu_and_mul", "hadamard", "router_gemm", "topk"]
SEEDS = range(12)


def _largest(op: str, case: Case) -> int:
    spec = load_spec(op)
    tensors = [t for t in spec.data.inputs if isinstance(t, TensorInput)]
    return max(math.prod(resolve_dim(d, case.dims) for d in t.shape) for t in tensors)


@pytest.mark.parametrize("op", DOMAIN_OPS)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_same_seed_same_grid_other_seed_other_grid(op: str, device: str) -> None:
    spec = load_spec(op)
    first = drawn_cases(spec, 5, device)
    assert first and all(c.drawn for c in first)
    assert drawn_cases(spec, 5, device) == first
    assert [c.name for c in drawn_cases(spec, 6, device)] != [c.name for c in first]
    assert len({c.name for c in first}) == len(first)


def test_no_domain_draws_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert drawn_cases(load_spec("softmax"), 1, "cpu", count=0) == []
    _project(tmp_path, monkeypatch, "None")  # every shipped operator has a domain
    assert load_spec("bad").data.domain is None
    assert drawn_cases(load_spec("bad"), 1, "cuda") == []


@pytest.mark.parametrize("op", DOMAIN_OPS)
def test_cpu_draws_fit_the_interpreter(op: str) -> None:
    spec = load_spec(op)
    domain = spec.data.domain
    assert domain is not None
    for seed in SEEDS:
        cases = drawn_cases(spec, seed, "cpu")
        assert len(cases) == domain.draws.cpu
        for case in cases:
            assert case.interpreter, case.name  # bf16 never, sizes within the CPU caps
            assert case.dtype in INTERPRETER_DTYPES
            assert _largest(op, case) <= domain.cpu_elements, case.name
            for name, dim in domain.dims.items():
                assert dim.lo <= case.dims[name] <= dim.hi(cpu=True), (case.name, name)


@pytest.mark.parametrize("op", DOMAIN_OPS)
def test_cuda_draws_stay_in_the_domain(op: str) -> None:
    spec = load_spec(op)
    domain = spec.data.domain
    assert domain is not None
    for seed in SEEDS:
        for case in drawn_cases(spec, seed, "cuda"):
            assert case.dist in domain.dists and case.size.layout.kind in domain.layouts
            assert case.dtype in (domain.dtypes or spec.data.dtypes)
            assert _largest(op, case) <= domain.cuda_elements, case.name
            for name, dim in domain.dims.items():
                v = case.dims[name]
                assert dim.lo <= v <= dim.hi(cpu=False), (case.name, name)
                assert dim.choices is None or v in dim.choices
                assert dim.at_most is None or v <= case.dims[dim.at_most]


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % p for p in range(2, math.isqrt(n) + 1))


def _pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def test_drawn_dims_include_the_sizes_that_break_kernels() -> None:
    spec = load_spec("softmax")
    cols = {c.dims["cols"] for s in range(40) for c in drawn_cases(spec, s, "cuda")}
    bench = {b.dims["cols"] for b in spec.data.bench}
    assert 1 in cols
    assert any(_is_prime(v) and v > 1000 for v in cols)
    assert any(not _pow2(v) and not _is_prime(v) and v % 2 for v in cols)  # odd, composite
    assert any(_pow2(v) and v > 1 for v in cols)
    assert any(_pow2(v + 1) and v > 2 for v in cols)  # a block boundary, one below
    assert any(_pow2(v - 1) and v > 2 for v in cols)  # and one above
    assert cols & bench
    assert any(v + 1 in bench or v - 1 in bench for v in cols)
    assert 262144 in cols  # the largest allowed
    # On CPU the largest is the interpreter's cap, past every width the fixed grid lists.
    cpu = {c.dims["cols"] for s in range(40) for c in drawn_cases(spec, s, "cpu")}
    listed = {c.dims["cols"] for c in spec.cases if c.interpreter}
    assert 12289 in cpu and 12289 > 2 * max(listed)
    assert len(cpu - listed) > len(cpu) // 2


def _made(op: str, count: int = 12, seeds: range = range(4)) -> list[tuple[Case, torch.Tensor]]:
    spec = load_spec(op)
    return [
        (c, case_inputs(spec, c, case_seed(s, c.name), "cpu")[0])
        for s in seeds
        for c in drawn_cases(spec, s, "cpu", count=count)
    ]


def _ints(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


@pytest.mark.parametrize("op", ["softmax", "rms_norm", "silu_and_mul", "topk"])
def test_each_layout_is_made_with_its_property(op: str) -> None:
    seen = set()
    for case, x in _made(op):
        kind = case.size.layout.kind
        seen.add(kind)
        # The name says the input's real shape, strides and offset.
        assert f"x={kind}{_ints(list(x.shape))}strides{_ints(x.stride())}" in case.name
        assert f"offset{x.storage_offset()}" in case.name
        rows = x.shape[:-1]
        if kind == "contiguous":
            assert x.is_contiguous()
        elif kind == "strided" and x.dim() >= 2:
            assert x.stride(-2) > x.shape[-1]
        elif kind == "transposed" and x.dim() >= 2 and min(x.shape[-2:]) > 1:
            assert x.stride(-2) == 1 and x.stride(-1) == max(1, x.shape[-2])
        elif kind == "leading" and x.dim() >= 3:
            # A slice of a wider tensor: the token stride spans more heads than the view has,
            # so no single row stride walks the rows.
            assert x.stride(-3) > x.shape[-2] * x.stride(-2)
            assert x.shape[-2] >= 2 and math.prod(x.shape[:-2]) >= 2
            assert x.untyped_storage().nbytes() > x.numel() * x.element_size()
        elif kind == "offset":
            assert x.storage_offset() > 0 and x.is_contiguous()
        elif kind == "expanded" and any(n > 1 for n in rows):
            assert 0 in x.stride()
    assert seen == set(load_spec(op).data.domain.layouts)


def test_a_leading_view_is_the_k_slice_of_a_fused_qkv() -> None:
    tokens, heads, dim = 5, 4, 33
    x = torch.randn(tokens, heads, dim)
    # k of a [tokens, q + k + v heads, dim] tensor: after q's 4 heads, before v's 4.
    k = place(x, Placement(kind="leading", pad=2 * heads, start=heads))
    assert torch.equal(k, x)
    assert k.stride() == (3 * heads * dim, dim, 1) and k.storage_offset() == heads * dim
    with pytest.raises(RuntimeError):
        k.view(-1, dim)  # the rows fold into no single stride
    storage = torch.empty(0).set_(k.untyped_storage())
    assert int(torch.isnan(storage).sum()) == 2 * heads * dim * tokens  # q and v: NaN


def test_offset_and_expanded_views() -> None:
    x = torch.randn(3, 4, 5)
    off = place(x, Placement(kind="offset", offset=7))
    assert torch.equal(off, x) and off.storage_offset() == 7 and off.is_contiguous()
    wide = place(x, Placement(kind="expanded"))
    assert wide.stride() == (0, 5, 1) and torch.equal(wide, x[:1].expand(3, 4, 5))
    assert place(x[:1], Placement(kind="expanded")).stride(1) == 0  # the first dim above 1


def test_a_fixed_size_layout_draws_its_numbers_as_before() -> None:
    # The fixed grid's padded rows: 3 to 15 elements, one draw from the case's generator.
    x = torch.randn(4, 10)
    got = lay_out(x, "strided", torch.Generator().manual_seed(3))
    pad = 3 + int(torch.randint(0, 13, (1,), generator=torch.Generator().manual_seed(3)))
    assert got.stride() == (10 + pad, 1) and torch.equal(got, x)
    assert lay_out(x, "contiguous", torch.Generator()) is x
    drawn = lay_out(torch.randn(2, 3, 8), "leading", torch.Generator().manual_seed(1))
    assert drawn.stride(0) > 3 * 8


def _rows(shape: list[int], dist: str, dtype: str | None = None, seed: int = 0) -> torch.Tensor:
    return values(shape, dist, torch.Generator().manual_seed(seed), dtype)


def test_a_spike_is_late_in_every_row() -> None:
    width = 5003
    x = _rows([64, width], "spike")
    where = x.argmax(dim=-1)
    # In the last quarter: past the first block of any block at most 3/4 of the row (past 1024
    # and 2048 here, and 4096 too wherever it lands past 4096).
    assert bool((where >= width - width // 4).all())
    assert bool((where > 2048).all()) and bool((where > 4096).any())
    assert float(x.max(dim=-1).values.min()) >= 1024
    assert len(set(where.tolist())) > 32  # a random position, not one column
    assert bool((_rows([3, 1], "spike")[:, 0] >= 1024).all())  # a row of one is its spike


def test_value_families_have_their_property() -> None:
    shape = [16, 257]
    assert bool((_rows(shape, "negative") < 0).all())
    up, down = _rows(shape, "sorted_up"), _rows(shape, "sorted_down")
    assert bool((up.diff(dim=-1) >= 0).all()) and bool((down.diff(dim=-1) <= 0).all())
    const = _rows(shape, "constant")
    assert bool((const == const[:, :1]).all()) and len(set(const[:, 0].tolist())) > 1
    ties = _rows(shape, "ties")
    assert bool((ties * 2 == torch.round(ties * 2)).all())
    assert all(len(set(row.tolist())) < 30 for row in ties)
    for dtype, smallest_magnitude in (("float16", 2.0**8), ("float32", 2.0**20)):
        large = _rows(shape, "large", dtype).to(getattr(torch, dtype))
        assert bool(torch.isfinite(large).all()) and float(large.abs().min()) >= smallest_magnitude
    assert bool(torch.isinf(_rows(shape, "large", "float16").half() ** 2).any())
    for dtype in ("float32", "float16", "bfloat16"):
        tiny = torch.finfo(getattr(torch, dtype)).tiny
        x = _rows(shape, "denormal", dtype).to(getattr(torch, dtype)).double()
        odd = x[1::2]
        assert bool((odd.abs() <= tiny).all()) and float((odd != 0).double().mean()) > 0.9, dtype
        assert bool((x[0::2].abs() >= tiny).any()), dtype  # even rows keep normal values too


def test_every_value_family_keeps_its_shape_and_draws_again_the_same() -> None:
    for dist in ("large", "spike", "negative", "sorted_up", "sorted_down", "constant", "ties"):
        a, b = _rows([2, 3, 40], dist), _rows([2, 3, 40], dist)
        assert a.shape == (2, 3, 40) and torch.equal(a, b), dist
        assert _rows([0, 5], dist).shape == (0, 5)


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, domain: str) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "bad.py").write_text(BAD.replace("DOMAIN", domain))
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))


BAD = """
def bad(x):
    return x
def cost(dims, itemsize):
    return {"bytes": 1, "flops": 1}
SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "cols"]}],
    "dtypes": ["float32", "float16"], "dists": ["normal", "uniform"],
    "sizes": [{"name": "a", "dims": {"rows": 2, "cols": 3}, "interpreter": True}],
    "bench": [{"name": "b", "dims": {"rows": 2, "cols": 3}}],
    "domain": DOMAIN,
}
"""
GOOD_DOMAIN = (
    '{"dims": {"cols": {"range": [1, 100]}, "rows": {"range": [1, 9]}}, "dists": ["normal", '
    '"spike"], "layouts": ["contiguous", "leading"], "lead": "rows", "max_rank": 3}'
)


def test_a_domain_loads_and_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch, GOOD_DOMAIN)
    spec = load_spec("bad")
    cases = drawn_cases(spec, 1, "cpu", count=8)
    assert {c.size.layout.kind for c in cases} <= {"contiguous", "leading", "strided"}
    assert all(c.dtype in ("float32", "float16") for c in cases)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"rows": {"range": [1, 9]}', '"rows": {"range": [9, 1]}'), r"dims\.rows: range \[9, 1\]"),
        (('"rows": {"range": [1, 9]}', '"rows": {}'), r"either range or choices"),
        (
            ('"rows": {"range": [1, 9]}}', '"rows": {"range": [1, 9]}, "n": {"range": [1, 2]}}'),
            r"dims: \['cols', 'n', 'rows'\], the inputs",
        ),  # fmt: skip
        (('"lead": "rows", "max_rank": 3', '"max_rank": 3'), r"leading needs `lead`"),
        (('"max_rank": 3', '"max_rank": 5'), r"max_rank: Input should be less than or equal to 4"),
        (
            ('"cols": {"range": [1, 100]}', '"cols": {"range": [1, 100], "at_most": "rows"}'),
            r"at_most: 'rows' is not a dim drawn before it",
        ),  # fmt: skip
        (
            ('"dists": ["normal", ', '"dtypes": ["bfloat16"], "dists": ["normal", '),
            r"outside SPEC's dtypes",
        ),  # fmt: skip
        (('"spike"]', '"spikes"]'), r"dists\.1: Input should be"),
        (('"leading"]', '"leading"], "contiguous_only": "own maker"'), r"contiguous_only"),
    ],
)
def test_a_bad_domain_names_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: tuple[str, str], message: str
) -> None:
    _project(tmp_path, monkeypatch, GOOD_DOMAIN.replace(*edit))
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.domain.*" + message):
        load_spec("bad")


def test_all_names_every_layout_and_family_and_nothing_else() -> None:
    from typing import get_args

    from kernelgen.spec.domain import Dist, Domain, Layout

    dims = {"cols": {"range": [1, 64]}}
    every = Domain.model_validate({"dims": dims, "layouts": "all", "dists": "all", "lead": "cols",
                                   "max_rank": 3})  # fmt: skip
    assert every.layouts == list(get_args(Layout)) and every.dists == list(get_args(Dist))
    with pytest.raises(ValueError, match="dists"):
        Domain.model_validate({"dims": dims, "dists": "every"})
