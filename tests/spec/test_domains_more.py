"""SPEC.domain of the operators with their own input makers (act_quant, fp8_gemm, fused_moe,
decode_attn, sparse_attn): each validates and draws the same grid from the same seed; the drawn
dims keep the operator's invariants (K in whole 128-wide groups, k at most E, Hq whole groups of
Hkv, a table and a cache that hold the lengths), and the inputs its maker draws for them do too
(distinct experts, valid pages, indices as a top-k emits them); a drawn case's name says the
layout its input really has. The domain's words for these (multiple_of, maker dims, derived
dims, heads) name the field when misused."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from kernelgen.errors import SpecError
from kernelgen.spec import INTERPRETER_DTYPES, Case, TensorInput, load_spec, resolve_dim
from kernelgen.spec.draw import drawn_cases
from kernelgen.spec.inputs import case_inputs, case_seed

OPS = ["act_quant", "fp8_gemm", "fused_moe", "decode_attn", "sparse_attn"]
SEEDS = range(10)


def _largest(op: str, case: Case) -> int:
    tensors = [t for t in load_spec(op).data.inputs if isinstance(t, TensorInput)]
    return max(math.prod(resolve_dim(d, case.dims) for d in t.shape) for t in tensors)


def _made(op: str, seeds: range = SEEDS) -> list[tuple[Case, list]]:
    spec = load_spec(op)
    return [
        (c, case_inputs(spec, c, case_seed(s, c.name), "cpu"))
        for s in seeds
        for c in drawn_cases(spec, s, "cpu")
    ]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_same_seed_same_grid_other_seed_other_grid(op: str, device: str) -> None:
    spec = load_spec(op)
    first = drawn_cases(spec, 5, device)
    assert first and all(c.drawn for c in first)
    assert drawn_cases(load_spec(op), 5, device) == first
    assert [c.name for c in drawn_cases(spec, 6, device)] != [c.name for c in first]
    assert len({c.name for c in first}) == len(first)


@pytest.mark.parametrize("op", OPS)
def test_cpu_draws_fit_the_interpreter(op: str) -> None:
    spec = load_spec(op)
    domain = spec.data.domain
    assert domain is not None
    for seed in SEEDS:
        cases = drawn_cases(spec, seed, "cpu")
        assert len(cases) == domain.draws.cpu
        for case in cases:
            assert case.interpreter and case.dtype in INTERPRETER_DTYPES, case.name
            assert _largest(op, case) <= domain.cpu_elements, case.name
            for name, dim in domain.dims.items():
                assert dim.lo <= case.dims[name] <= dim.hi(cpu=True), (case.name, name)


@pytest.mark.parametrize("op", OPS)
def test_cuda_draws_stay_in_the_domain(op: str) -> None:
    spec = load_spec(op)
    domain = spec.data.domain
    assert domain is not None
    for seed in range(30):
        for case in drawn_cases(spec, seed, "cuda"):
            assert case.dist in domain.dists and case.size.layout.kind in domain.layouts
            assert case.dtype in spec.data.dtypes
            assert _largest(op, case) <= domain.cuda_elements, case.name
            for name, dim in domain.dims.items():
                v = case.dims[name]
                assert dim.lo <= v <= dim.hi(cpu=False), (case.name, name)
                assert dim.choices is None or v in dim.choices
                assert dim.at_most is None or v <= case.dims[dim.at_most]
                if isinstance(dim.multiple_of, int):
                    assert v % dim.multiple_of == 0, (case.name, name)
                elif dim.multiple_of is not None:
                    assert v % case.dims[dim.multiple_of] == 0, (case.name, name)
            assert set(case.dims) == set(domain.dims) | set(domain.derived)


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % p for p in range(2, math.isqrt(n) + 1))


@pytest.mark.parametrize("op", ["act_quant", "fp8_gemm"])
def test_k_is_drawn_in_whole_groups_of_the_kinds_that_break_kernels(op: str) -> None:
    spec = load_spec(op)
    groups = {c.dims["K"] // 128 for s in range(40) for c in drawn_cases(spec, s, "cuda")}
    assert all(c.dims["K"] % 128 == 0 for s in range(40) for c in drawn_cases(spec, s, "cuda"))
    bench = {b.dims["K"] // 128 for b in spec.data.bench}
    assert 1 in groups  # one group
    assert any(_is_prime(g) and g > 10 for g in groups)
    assert groups & bench  # the bench's K
    assert any(g + 1 in bench or g - 1 in bench for g in groups)  # one group either side
    assert 128 in groups  # the largest, 16384


def test_attention_heads_are_whole_groups_of_kv_heads() -> None:
    for op in ("decode_attn", "sparse_attn"):
        spec = load_spec(op)
        groups = {
            c.dims["Hq"] // c.dims["Hkv"] for s in range(30) for c in drawn_cases(spec, s, "cuda")
        }
        assert 1 in groups and any(g > 4 for g in groups), op  # MHA, and wide groups


def test_act_quant_inputs_are_finite_in_their_dtype() -> None:
    for case, (x,) in _made("act_quant"):
        assert x.dtype == getattr(torch, case.dtype)
        assert bool(torch.isfinite(x).all()), case.name
        assert x.shape == (case.dims["M"], case.dims["K"])


def test_fp8_gemm_scales_are_positive_and_finite() -> None:
    for case, (a, a_scale, b, b_scale) in _made("fp8_gemm"):
        m, n, k = (case.dims[d] for d in ("M", "N", "K"))
        assert a.shape == (m, k) and b.shape == (n, k)
        assert b_scale.shape == (-(-n // 128), k // 128)
        for s in (a_scale, b_scale):
            assert bool((s > 0).all()) and bool(torch.isfinite(s).all()), case.name
        assert not bool(a.float().isnan().any()) and not bool(b.float().isnan().any())


def test_fused_moe_routes_as_its_routing_dim_says() -> None:
    module = load_spec("fused_moe").module
    seen = set()
    for case, (*_, weights, ids) in _made("fused_moe", range(20)):
        e, k = case.dims["E"], case.dims["k"]
        mode = module.ROUTINGS[case.dims["routing"]]
        seen.add(mode)
        assert module.size_routing(case.size) == mode
        assert ids.dtype == torch.int32 and ids.shape == (case.dims["M"], k)
        assert bool(((ids >= 0) & (ids < e)).all()), case.name
        assert all(len(set(row)) == k for row in ids.tolist()), case.name  # distinct per row
        assert bool(((weights > 0) & (weights < 1)).all())
        if mode == "one_expert":  # every token's first choice is one expert
            assert len(set(ids[:, 0].tolist())) == 1, case.name
    assert seen == set(module.ROUTINGS)


def test_decode_attn_tables_and_caches_hold_the_lengths() -> None:
    spec = load_spec("decode_attn")
    drawn_pages = set()
    for case, (_, k_cache, _, table, lens, scale) in _made("decode_attn"):
        d = case.dims
        assert d["Hq"] % d["Hkv"] == 0 and d["B_long"] <= d["B"] and d["L_rest"] <= d["L"]
        assert {k: d[k] for k in ("P", "N")} == spec.module.derive_dims(d)
        assert lens.shape == (d["B"],) and table.shape == (d["B"], d["P"])
        assert int(lens.max()) == d["L"] and int(lens.min()) >= 1
        # The page size is drawn, named in the case and the caches' second dim.
        page = d["page"]
        drawn_pages.add(page)
        assert f",page={page}," in case.name and k_cache.shape[1] == page
        owned = [table[b, : -(-n // page)].tolist() for b, n in enumerate(lens.tolist())]
        pages = [p for row in owned for p in row]
        assert len(set(pages)) == len(pages) and all(0 <= p < d["N"] for p in pages)
        assert bool(((table >= 0) & (table < d["N"])).all())  # spare entries point at pages too
        assert 0.03 <= scale <= 0.5
    assert drawn_pages == {16, 32, 64}


def test_sparse_attn_indices_are_as_a_top_k_emits_them() -> None:
    seen_padded = set()
    for case, (*_, indices, _scale) in _made("sparse_attn", range(20)):
        d = case.dims
        assert d["Hq"] % d["Hkv"] == 0
        n = min(d["topk"], d["S"])
        counts = (indices >= 0).sum(dim=-1)
        for row, c in zip(indices.tolist(), counts.tolist(), strict=True):
            valid = row[:c]
            assert all(0 <= i < d["S"] for i in valid) and len(set(valid)) == c, case.name
            assert all(i == -1 for i in row[c:]), case.name  # -1 only after the valid slots
        seen_padded.add(d["padded"])
        if not d["padded"]:
            assert bool((counts == n).all()), case.name
        elif d["T"] > 1:
            assert int(counts.min()) == 0 and int(counts.max()) == n, case.name
    assert seen_padded == {0, 1}


def _ints(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


@pytest.mark.parametrize(("op", "arg"), [(op, 0) for op in OPS])
def test_a_drawn_name_says_the_layout_the_input_has(op: str, arg: int) -> None:
    name = load_spec(op).data.inputs[arg].name
    seen = set()
    for case, args in _made(op, range(12)):
        x = args[arg]
        kind = case.size.layout.kind
        seen.add(kind)
        assert f"{name}={kind}{_ints(list(x.shape))}strides{_ints(x.stride())}" in case.name
        assert f"offset{x.storage_offset()}" in case.name
        if kind == "contiguous":
            assert x.is_contiguous()
        elif kind == "offset":
            assert x.storage_offset() > 0 and x.is_contiguous()
        elif kind == "strided" and x.dim() >= 2:
            assert x.stride(-2) > x.shape[-1]
        elif kind == "leading":
            # The q heads of a fused qkv: the token stride spans more heads than the view has.
            assert x.dim() == 3 and x.shape[0] >= 2 and x.shape[1] >= 2, case.name
            assert x.stride(0) > x.shape[1] * x.stride(1)
    assert seen == set(load_spec(op).data.domain.layouts)


def test_fp8_gemm_keeps_k_contiguous() -> None:
    layouts = load_spec("fp8_gemm").data.domain.layouts
    assert set(layouts) == {"contiguous", "strided", "offset"}
    for case, (a, *_rest) in _made("fp8_gemm"):
        assert a.stride(-1) == 1 and a.stride(0) >= a.shape[1], case.name


BAD = """
import math
def bad(x, y):
    return x
def cost(dims, itemsize):
    return {"bytes": 1, "flops": 1}
DERIVE
SPEC = {
    "inputs": [{"name": "x", "shape": ["B", "H", "K"]}, {"name": "y", "shape": ["P"],
               "layout_varies": False}],
    "dtypes": ["float32", "float16"], "dists": ["normal", "uniform"],
    "sizes": [{"name": "a", "dims": {"B": 2, "H": 4, "K": 256, "G": 2, "P": 3},
               "interpreter": True}],
    "bench": [{"name": "b", "dims": {"B": 2, "H": 4, "K": 256, "G": 2, "P": 3}}],
    "domain": DOMAIN,
}
"""
GOOD = (
    '{"dims": {"G": {"range": [1, 4], "maker": true}, "H": {"range": [1, 16], "multiple_of": '
    '"G"}, '
    '"B": {"range": [1, 9]}, "K": {"range": [128, 1024], "multiple_of": 128}, '
    '"mode": {"choices": [0, 1, 2], "maker": true}}, "derived": ["P"], "heads": "H", '
    '"layouts": ["contiguous", "leading"], "dists": ["normal", "spike"]}'
)
DERIVE = "def derive_dims(dims):\n    return {'P': dims['B'] + 1}"


def _project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, domain: str, derive: str = DERIVE
) -> None:
    (tmp_path / "references").mkdir()
    text = BAD.replace("DOMAIN", domain.replace("true", "True")).replace("DERIVE", derive)
    (tmp_path / "references" / "bad.py").write_text(text)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))


def test_the_domain_words_draw_what_they_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, monkeypatch, GOOD)
    spec = load_spec("bad")
    cases = [c for s in range(6) for c in drawn_cases(spec, s, "cpu", count=8)]
    for c in cases:
        d = c.dims
        assert d["H"] % d["G"] == 0 and d["K"] % 128 == 0 and d["P"] == d["B"] + 1
        assert d["mode"] in (0, 1, 2) and f"mode={d['mode']}" in c.name
        if c.size.layout.kind == "leading":  # 2 heads or more, 2 rows or more above them
            assert d["H"] >= 2 and d["B"] >= 2
    assert {c.size.layout.kind for c in cases} == {"contiguous", "leading"}
    assert {c.dims["mode"] for c in cases} == {0, 1, 2}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"multiple_of": "G"', '"multiple_of": "B"'), r"dims\.H\.multiple_of: 'B' is not a dim"),
        (('"G": {"range": [1, 4]', '"G": {"range": [1, 40]'), r"'G' may exceed it"),
        (('"multiple_of": 128', '"multiple_of": 2048'), r"multiple_of 2048: expected a block"),
        (('"choices": [0, 1, 2], "maker": true', '"choices": [0, 1, 2]'), r"positive ints"),
        (('"heads": "H", ', ""), r"leading needs `lead` and max_rank >= 3 .*, or `heads`"),
        (('"heads": "H"', '"heads": "mode"'), r"heads: 'mode' is not a shape's dim"),
        (('"derived": ["P"]', '"derived": []'), r"dims: \['B', 'H', 'K'\], the inputs"),
        (('"derived": ["P"]', '"derived": ["P", "B"]'), r"derived: \['B'\] also drawn"),
    ],
)
def test_a_misused_domain_word_names_its_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: tuple[str, str], message: str
) -> None:
    _project(tmp_path, monkeypatch, GOOD.replace(*edit))
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.domain.*" + message):
        load_spec("bad")


def test_derived_dims_need_the_reference_s_derive_dims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, monkeypatch, GOOD, derive="")
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\.domain\.derived \['P'\] needs derive"):
        drawn_cases(load_spec("bad"), 1, "cpu")
