"""Limit cases ([V2] item 2): SPEC.limits validates and names a bad field; every row-wise
operator reaches 2^31 elements in one tensor and 65536 rows; the cases are judged on CUDA and
reported not run on CPU; their inputs are drawn a block of rows at a time, reproducibly from the
seed; the truth on sampled rows accepts a right output and rejects one wrong at its last rows,
naming the row. On the GPU: a softmax with int32 row offsets and one with its rows on the grid's
y axis are rejected on a limit case after passing the smaller cases, and their int64, 1-D twin
is accepted.

decode_attn's limit (a paged KV cache: rows that index a pool) is drawn whole and gathered by
its reference's limit_rows: at a scaled-down boundary on CPU, every page a request owns lies
past it, the truth on the sampled requests alone is the whole reference's at them, and a kernel
whose page offsets wrap is rejected on the first sampled request. On the GPU: a decode_attn
with int32 page offsets and one with its requests on the grid's y axis are rejected on the
limit case, and the seed is accepted.

sparse_attn's limit (a KV pool that each token's selected rows index) is drawn whole and gathered
by its reference's limit_rows the same way: at a scaled-down boundary on CPU, every row a token
selects lies past it, the truth on the sampled tokens alone is the whole reference's at them, and
a kernel whose row offsets wrap is rejected on the first sampled token. On the GPU: a
sparse_attn with int32 row offsets and one with its tokens on the grid's y axis are rejected on
the limit case, and the seed is accepted.

fused_moe's limit (expert weights that each token's routing indexes) is drawn whole and gathered
by its reference's limit_rows, with the experts the sampled tokens use: at a scaled-down boundary
on CPU, every token routes among experts past it, the first and the last among them, the truth on
the sampled tokens alone is the whole reference's at them, and a kernel whose expert offsets wrap
is rejected on the first sampled token. On the GPU: a fused_moe with int32 expert offsets and
one with its tokens on the grid's y axis are rejected on the limit case, and the seed is
accepted.

On CPU a limit case is forced through the judge by putting a small one (600 rows) on its grid:
everything but the size is the real path (truth, calls, gather, compare)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch

from kernelgen.errors import SpecError
from kernelgen.spec import Case, Size, TensorInput, load_spec, resolve_dim
from kernelgen.spec.inputs import torch_dtype
from kernelgen.spec.limits import ELEMENTS, MAX_INPUT_BYTES, ROWS
from kernelgen.verify import limits, tensors, verify_candidate
from kernelgen.verify.answers import Answers
from kernelgen.verify.checks import Rejected
from kernelgen.verify.judge import Evaluator
from kernelgen.verify.protocol import TensorMeta
from kernelgen.verify.truth import Truths

ROOT = Path(__file__).resolve().parents[2]
LIMITS = Path(__file__).parent / "candidates" / "limits"
ROW_WISE = ["softmax", "rms_norm", "silu_and_mul", "hadamard", "topk", "router_gemm"]
# Row-wise in their activations' rows, with inputs (fp8 operands and scales) of their own.
QUANTIZED = ["act_quant", "fp8_gemm"]


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


# ---- SPEC.limits ----------------------------------------------------------------------------


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
    "limits": [LIMIT],
}
"""
GOOD = '{"name": "rows", "dims": {"rows": 65537, "cols": 8}, "dtype": "float32", "rows": "rows"}'


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "references" / "bad.py").write_text(BAD.replace("LIMIT", limit))
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))


def test_a_limit_loads_as_a_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path, monkeypatch, GOOD)
    (case,) = limits.limit_cases(load_spec("bad"))
    assert case.name == "limit/rows:rows=65537,cols=8/float32/normal"
    assert case.limit == "rows" and not case.interpreter


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('"cols": 8}', '"n": 8}'), r"limits\.rows\.dims: lack \['cols'\]"),
        (('"float32"', '"bfloat16"'), r"limits\.rows\.dtype: 'bfloat16' is not one of SPEC's"),
        (('"rows": "rows"}', '"rows": "cols"}'), r"limits\.rows\.rows: 'cols' starts no input"),
        (("65537", "100"), r"limits\.rows\.dims: reaches no limit \(largest input 800"),
        (("65537", "2147483648"), r"limits\.rows\.dims: inputs of 64\.0 GiB, above the 16"),
        (('"rows"}', '"rows", "samples": 9}'), r"limits\.0\.samples: Extra inputs"),
        (('"rows"}', '"rows", "dist": "spikes"}'), r"limits\.0\.dist: Input should be"),
        (('"rows"}', '"rows"}, ' + GOOD), r"limits: duplicate name 'rows'"),
    ],
)
def test_a_bad_limit_names_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: tuple[str, str], message: str
) -> None:
    _project(tmp_path, monkeypatch, GOOD.replace(*edit))
    with pytest.raises(SpecError, match=r"bad\.py: SPEC\." + message) as e:
        load_spec("bad")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("op", ROW_WISE + QUANTIZED)
def test_each_row_wise_operator_reaches_both_limits(op: str) -> None:
    spec = load_spec(op)
    cases = limits.limit_cases(spec)
    tensors_ = [t for t in spec.data.inputs if isinstance(t, TensorInput)]

    def largest(case: Case) -> int:
        return max(math.prod(resolve_dim(d, case.dims) for d in t.shape) for t in tensors_)

    assert cases and all(c.name.startswith("limit/") and not c.interpreter for c in cases)
    assert any(largest(c) >= ELEMENTS for c in cases), "no input of 2^31 elements"
    assert any(c.dims[c.limit] >= ROWS for c in cases if c.limit), "no case of 65536 rows"
    # Past 2^31 at a row's start (where `row * stride` wraps), not only inside the last row,
    # in at least one of an operator's cases.
    assert any(
        (c.dims[c.limit] - 1) * (largest(c) // c.dims[c.limit]) >= ELEMENTS
        for c in cases
        if c.limit
    )


def test_limit_cases_are_listed_on_cuda_and_not_run_on_cpu() -> None:
    spec = load_spec("softmax")
    names = [c.name for c in limits.limit_cases(spec)]
    with Evaluator("softmax", "cuda", seed=1, warm=0, keep_warm=False) as ev:
        assert [c.name for c in ev.cases() if c.limit] == names
    with Evaluator("softmax", "cpu", seed=1, keep_warm=False) as ev:
        assert [c.name for c in ev.grid if c.limit] == names
        assert not any(c.limit for c in ev.cases())
        ev.grid = [c for c in ev.grid if c.name == "one/float32/normal" or c.limit]
        v = verify_candidate("softmax", ROOT / "seeds" / "softmax.py", device="cpu", evaluator=ev)
    assert v.accepted and v.outcome == "accepted-partial", v.reason
    notes = {c.name: c.note for c in v.cases if c.status == "not_run"}
    assert set(notes) == set(names)
    assert all(
        n == "not run on CPU: a limit case (GPU only; its inputs are GBs)" for n in notes.values()
    )


# ---- rows, inputs, truth --------------------------------------------------------------------


def test_sampled_rows_hold_the_edges_and_draw_the_rest_from_the_seed() -> None:
    total, width = 65600, 32768
    rows = limits.sample_rows(total, [width], random.Random(1))
    edge = ELEMENTS // width  # 65536: the first row past 2^31 elements, and past a grid axis
    assert {0, 1, total - 2, total - 1, edge - 1, edge, edge + 1, ROWS - 1} <= set(rows)
    assert 64 <= len(rows) <= 256 and rows == sorted(set(rows))
    assert rows == limits.sample_rows(total, [width], random.Random(1))
    assert rows != limits.sample_rows(total, [width], random.Random(2))
    assert limits.sample_rows(40, [8], random.Random(1)) == list(range(40))


def _tiny(op: str, dims: dict[str, int], rows: str, dtype: str = "float32") -> Case:
    """A limit case small enough for the CPU: the real path, another size."""
    size = Size(
        name="limit/tiny:" + ",".join(f"{k}={v}" for k, v in dims.items()),
        dims=dims,
        interpreter=True,
    )
    fixed = ("float32",) if op == "router_gemm" else ()
    return Case(
        name=f"{size.name}/{dtype}/normal",
        size=size,
        dtype=dtype,
        dist="normal",
        limit=rows,
        fixed_dtypes=fixed,
    )


def test_inputs_are_drawn_a_block_at_a_time_from_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "BLOCK_ELEMENTS", 64 * 10)  # 10 rows a block of K = 64
    spec = load_spec("router_gemm")
    case = _tiny("router_gemm", {"M": 35, "N": 16, "K": 64}, "M", "float16")
    x, w = limits.draw(spec, case, 3, "cpu")
    assert x.shape == (35, 64) and x.dtype == torch.float16 and w.shape == (16, 64)
    again = limits.draw(spec, case, 3, "cpu")
    assert torch.equal(x, again[0]) and torch.equal(w, again[1])
    assert not torch.equal(x, limits.draw(spec, case, 4, "cpu")[0])
    # Each block from a seed of its own: no block repeats the first.
    blocks = x.split(10)
    assert all(not torch.equal(b, blocks[0][: len(b)]) for b in blocks[1:])
    # The input without rows is the first block's, as its own maker draws it (fp32 weights at a
    # real router's scale).
    assert w.dtype == torch.float32 and 0.003 < float(w.std()) < 0.03


def _truth(op: str, case: Case, tmp_path: Path) -> tuple[Answers, limits.Sampled, object]:
    truths = Truths(load_spec(op), 3, "cpu", tmp_path)
    inputs = truths.get(case).variants["a"]
    assert inputs.sampled is not None
    return Answers(load_spec(op), "cpu", "cpu"), inputs.sampled, inputs


@pytest.mark.parametrize(
    ("op", "dims", "rows"),
    [
        ("softmax", {"rows": 600, "cols": 8}, "rows"),
        ("rms_norm", {"rows": 600, "cols": 8}, "rows"),
        ("silu_and_mul", {"rows": 600, "d": 5}, "rows"),
        ("router_gemm", {"M": 600, "N": 16, "K": 64}, "M"),
    ],
)
def test_the_truth_on_sampled_rows_accepts_right_and_names_a_wrong_row(
    op: str, dims: dict[str, int], rows: str, tmp_path: Path
) -> None:
    dtype = "float16" if op == "router_gemm" else "float32"
    case = _tiny(op, dims, rows, dtype)
    answers, sampled, inputs = _truth(op, case, tmp_path)
    assert 0 < sampled.rows.numel() < 600 and sampled.total == 600
    spec = load_spec(op)
    whole = spec.reference(
        *[
            a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in inputs.args
        ]
    )
    out = whole.to(inputs.native.dtype)
    assert sampled.whole(inputs.native).shape == out.shape
    result = answers.judge_sampled(sampled.take(out), inputs, case)
    assert (
        result.status == "passed"
        and result.note == f"checked on {sampled.rows.numel()} of 600 rows"
    )
    wrong = out.clone()
    wrong[-1] += 1.0  # wrong only at the last row, which is always sampled
    with pytest.raises(Rejected) as e:
        answers.judge_sampled(sampled.take(wrong), inputs, case)
    assert e.value.failure.category == "incorrect"
    assert e.value.failure.reason.startswith("row 599 of 600: "), e.value.failure.reason


def test_an_own_compare_gets_the_sampled_rows_of_its_inputs(tmp_path: Path) -> None:
    case = _tiny("topk", {"B": 600, "N": 50, "k": 5}, "B")
    answers, sampled, inputs = _truth("topk", case, tmp_path)
    x, k = inputs.args
    right = torch.topk(x, k, dim=-1).indices.to(torch.int32)
    answers.judge_sampled(sampled.take(right), inputs, case)
    wrong = right.clone()
    wrong[-1] = torch.topk(x[-1], k, largest=False).indices.to(torch.int32)
    with pytest.raises(Rejected, match=r"^row 599 of 600: row 0: the chosen values"):
        answers.judge_sampled(sampled.take(wrong), inputs, case)


def test_a_quantizer_is_judged_on_the_sampled_rows_of_both_outputs(tmp_path: Path) -> None:
    case = _tiny("act_quant", {"M": 600, "K": 256}, "M")
    answers, sampled, inputs = _truth("act_quant", case, tmp_path)
    q, scale = load_spec("act_quant").reference(*inputs.args)
    answers.judge_sampled(sampled.take((q, scale)), inputs, case)
    wrong = scale.clone()
    wrong[-1] *= 2
    with pytest.raises(Rejected, match=r"^row 599 of 600: scale "):
        answers.judge_sampled(sampled.take((q, wrong)), inputs, case)


@pytest.mark.parametrize(
    ("op", "dims", "rows"),
    [("softmax", {"rows": 600, "cols": 8}, "rows"), ("act_quant", {"M": 600, "K": 256}, "M")],
)
def test_torchs_answer_is_taken_a_block_of_rows_at_a_time(
    op: str, dims: dict[str, int], rows: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error ratio's yardstick at the sampled rows: the reference on blocks of the input
    (a float64 reference on the whole of a limit case is three 16 GiB tensors), equal to the
    whole call's at those rows; blocks without a sampled row are not computed."""
    width = dims["cols"] if op == "softmax" else dims["K"]
    monkeypatch.setattr(limits, "NATIVE_ELEMENTS", 64 * width)  # 64 rows a block: 10 blocks
    spec = load_spec(op)
    calls: list[int] = []
    reference = spec.reference

    def counted(*args: object) -> object:
        calls.append(args[0].shape[0])  # type: ignore[attr-defined]
        return reference(*args)

    monkeypatch.setattr(spec, "reference", counted)
    args, sampled, _, native = limits._truth(spec, _tiny(op, dims, rows), 3, "cpu")
    assert sampled.total == 600 and 0 < sampled.rows.numel() < 600
    blocked = calls[2:]  # after the probe of one row and the float64 call on the sampled rows
    assert max(blocked) == 64 and len(blocked) == len({int(r) // 64 for r in sampled.rows})
    whole = sampled.take(reference(*args))
    pairs = zip(native, whole, strict=True) if isinstance(whole, tuple) else [(native, whole)]
    for got, want in pairs:
        assert got.dtype == want.dtype and torch.equal(got.float(), want.float())


# ---- a paged cache: decode_attn ----------------------------------------------------------------


def test_decode_attn_reaches_both_limits_with_every_live_page_past_2g() -> None:
    spec = load_spec("decode_attn")
    (case,) = limits.limit_cases(spec)
    dims = case.dims
    page_elements = dims["page"] * dims["Hkv"] * dims["D"]  # the cache's page stride
    assert case.limit == "B" and dims["B"] >= ROWS
    assert dims["N"] * page_elements >= ELEMENTS
    # No request owns a page before element 2^31: an int32 `page * stride_page` wraps for each.
    assert dims["N_low"] * page_elements == ELEMENTS
    _, owned = spec.module.live_tokens(dims)
    assert dims["N"] == dims["N_low"] + owned + 1  # and one spare page past them
    nbytes = {
        t.name: math.prod(resolve_dim(d, dims) for d in t.shape)
        * torch_dtype(case.dtype if t.dtype == "case" else t.dtype).itemsize
        for t in spec.data.inputs
        if isinstance(t, TensorInput)
    }
    # The figures the SPEC's comment gives.
    assert nbytes == {
        "q": 537395200,
        "k_cache": 5907169280,
        "v_cache": 5907169280,
        "block_table": 524800,
        "seq_lens": 262400,
    }
    assert sum(nbytes.values()) == 12352520960 <= MAX_INPUT_BYTES


def _paged(b: int = 600, hq: int = 4, hkv: int = 2) -> Case:
    """decode_attn's limit scaled down by its own maker of limits: `b` requests (half of 32
    tokens, half of 9) of `hq` query and `hkv` KV heads of 16 in 16-token pages, past the
    cache's first 2^12 elements (8 pages at 2 KV heads)."""
    module = load_spec("decode_attn").module
    limit = module._limit("tiny", 16, b, 32, b // 2, 9, hq=hq, hkv=hkv, d=16, past=1 << 12)
    return _tiny("decode_attn", limit["dims"], "B", "float16")


def test_a_paged_limit_is_drawn_whole_with_every_live_page_past_its_boundary() -> None:
    spec = load_spec("decode_attn")
    case = _paged()
    dims = case.dims
    low, page = dims["N_low"], dims["page"]
    assert low * page * dims["Hkv"] * dims["D"] == 1 << 12
    q, k, v, table, lens, scale = limits.draw(spec, case, 3, "cpu")
    assert k.shape == v.shape == (dims["N"], page, 2, 16) and table.shape == (600, 2)
    assert sorted(lens.unique().tolist()) == [9, 32] and int((lens == 32).sum()) == 300
    owned = (lens + page - 1) // page
    live = torch.arange(table.shape[1]) < owned[:, None]
    mine = table[live]
    # Every page a request owns is its own, and lies past the boundary.
    assert int(mine.min()) >= low and mine.unique().numel() == mine.numel()
    # The pages before it, and those the unused entries point at, hold no live token.
    spare = torch.ones(dims["N"], dtype=torch.bool)
    spare[mine.long()] = False
    assert not spare[mine.long()].any() and spare[:low].all()
    assert spare[table[~live].long()].all()
    for cache in (k, v):
        assert cache[spare].isnan().all()
        tokens = cache[table.long()].flatten(1, 2)  # (B, P * page, Hkv, D)
        live_tokens = torch.arange(tokens.shape[1]) < lens[:, None]
        assert tokens[live_tokens].isfinite().all() and tokens[~live_tokens].isnan().all()
    again = limits.draw(spec, case, 3, "cpu")
    assert torch.equal(q, again[0]) and torch.equal(table, again[3])
    assert torch.equal(k.view(torch.int16), again[1].view(torch.int16))  # NaN != NaN
    other = limits.draw(spec, case, 4, "cpu")
    assert not torch.equal(table, other[3]) and not torch.equal(q, other[0])


def test_a_paged_limit_case_is_the_whole_reference_at_the_sampled_requests(
    tmp_path: Path,
) -> None:
    case = _paged()
    answers, sampled, inputs = _truth("decode_attn", case, tmp_path)
    rows = sampled.rows
    assert 0 < rows.numel() < 600 and sampled.total == 600
    # The sampled call reads only the pages its requests' table rows name.
    table = inputs.args[3]
    q, k, v, local, lens, _ = sampled.args
    assert k.shape[0] == table[rows].unique().numel() < inputs.args[1].shape[0]
    assert torch.equal(q, inputs.args[0][rows]) and torch.equal(lens, inputs.args[4][rows])
    bits = torch.int16  # NaN != NaN: the pages compared bit for bit
    assert torch.equal(k[local.long()].view(bits), inputs.args[1][table[rows].long()].view(bits))
    spec = load_spec("decode_attn")
    whole64 = spec.reference(
        *[
            a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in inputs.args
        ]
    )
    whole = spec.reference(*inputs.args)
    assert torch.equal(inputs.ref, sampled.take(whole64))
    assert torch.equal(inputs.native, sampled.take(whole))
    result = answers.judge_sampled(sampled.take(whole), inputs, case)
    assert result.status == "passed" and result.note == f"checked on {rows.numel()} of 600 rows"
    wrong = whole.clone()
    wrong[-1] += 1.0
    with pytest.raises(Rejected) as e:
        answers.judge_sampled(sampled.take(wrong), inputs, case)
    assert e.value.failure.reason.startswith("row 599 of 600: "), e.value.failure.reason


@pytest.fixture(scope="module")
def paged_judge() -> Iterator[Evaluator]:
    """A CPU judge whose grid is decode_attn's limit scaled down: 40 requests of 2 query heads
    on one KV head (all of them sampled: the interpreter runs a program at a time), past a
    cache's first 2^12 elements."""
    with Evaluator("decode_attn", "cpu", seed=5) as ev:
        ev.grid = [_paged(40, hq=2, hkv=1)]
        yield ev


def test_a_paged_limit_case_accepts_the_seed_and_rejects_wrapped_pages_at_row_0(
    paged_judge: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    v = verify_candidate(
        "decode_attn", ROOT / "seeds" / "decode_attn.py", device="cpu", evaluator=paged_judge
    )
    assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
    (case,) = v.cases
    assert case.status == "passed" and case.note == "checked on 40 of 40 rows"
    v = verify_candidate(
        "decode_attn", LIMITS / "decode_attn_wraps_4096.py", device="cpu", evaluator=paged_judge
    )
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)
    # Every request is past the boundary, not only those around one: the first sampled fails.
    prefix = f"case {paged_judge.grid[0].name}: row 0 of 40: "
    assert v.reason is not None and v.reason.startswith(prefix), v.reason


# ---- a KV pool that the selected rows index: sparse_attn ---------------------------------------


def test_sparse_attn_reaches_both_limits_with_every_selected_row_past_2g() -> None:
    spec = load_spec("sparse_attn")
    (case,) = limits.limit_cases(spec)
    dims = case.dims
    assert case.limit == "T" and dims["T"] >= ROWS and dims["Hkv"] == 1
    # The first row a token may select starts at element 2^31 of v (the narrower: Dv <= D) and
    # past it in k; the row before it does not, in v.
    low = dims["S_low"]
    assert low * dims["Dv"] == ELEMENTS < low * dims["D"] and (low - 1) * dims["Dv"] < ELEMENTS
    assert dims["S"] - low >= dims["topk"]
    nbytes = {
        t.name: math.prod(resolve_dim(d, dims) for d in t.shape)
        * torch_dtype(case.dtype if t.dtype == "case" else t.dtype).itemsize
        for t in spec.data.inputs
        if isinstance(t, TensorInput)
    }
    # The figures the SPEC's comment gives.
    assert nbytes == {"q": 1209139200, "k": 4982833152, "v": 4429185024, "indices": 134348800}
    assert sum(nbytes.values()) == 10755506176 <= MAX_INPUT_BYTES
    assert spec.module.cost(dims, 2)["flops"] == 1172596326400


def _pool(t: int = 600, hq: int = 2) -> Case:
    """sparse_attn's limit scaled down by its own maker of limits: `t` tokens of `hq` query heads
    on one KV head (q and k 32 wide, v 16), each selecting 16 of the 64 rows past the pool's
    first 2^12 elements of v (row 256; 8192 elements of k)."""
    module = load_spec("sparse_attn").module
    limit = module._limit("tiny", t, 64, 16, hq=hq, d=32, dv=16, past=1 << 12)
    return _tiny("sparse_attn", limit["dims"], "T", "float16")


def test_a_pool_limit_is_drawn_whole_with_every_selected_row_past_its_boundary() -> None:
    spec = load_spec("sparse_attn")
    case = _pool()
    dims = case.dims
    low, s = dims["S_low"], dims["S"]
    assert (low, s) == (256, 320)
    q, k, v, indices, _ = limits.draw(spec, case, 3, "cpu")
    assert q.shape == (600, 2, 32) and k.shape == (s, 1, 32) and v.shape == (s, 1, 16)
    assert indices.shape == (600, 16) and indices.dtype == torch.int32
    # Every slot valid (a limit is drawn as a bench shape), a row's positions distinct, and all
    # of them past the boundary.
    assert int(indices.min()) >= low and int(indices.max()) < s
    assert (indices.sort(dim=1).values.diff(dim=1) > 0).all()
    used = torch.zeros(s, dtype=torch.bool)
    used[indices.long()] = True
    assert not used[:low].any() and used[low:].all()
    for x in (k, v):  # the rows no token selects, before the boundary, hold NaN
        assert x[:low].isnan().all() and x[low:].isfinite().all()
    again = limits.draw(spec, case, 3, "cpu")
    assert torch.equal(q, again[0]) and torch.equal(indices, again[3])
    assert torch.equal(k.view(torch.int16), again[1].view(torch.int16))  # NaN != NaN
    other = limits.draw(spec, case, 4, "cpu")
    assert not torch.equal(indices, other[3]) and not torch.equal(q, other[0])


def test_a_pool_limit_case_is_the_whole_reference_at_the_sampled_tokens(tmp_path: Path) -> None:
    case = _pool()
    answers, sampled, inputs = _truth("sparse_attn", case, tmp_path)
    rows = sampled.rows
    assert 0 < rows.numel() < 600 and sampled.total == 600
    # The sampled call holds only the KV rows its tokens select, renumbered in its indices.
    q, k, v, local, _ = sampled.args
    picked = inputs.args[3][rows]
    kept = picked.unique()
    assert k.shape[0] == v.shape[0] == kept.numel() < inputs.args[1].shape[0]
    assert torch.equal(kept[local.long()], picked) and torch.equal(q, inputs.args[0][rows])
    assert torch.equal(k, inputs.args[1][kept.long()]) and torch.equal(v, inputs.args[2][kept])
    spec = load_spec("sparse_attn")
    whole64 = spec.reference(
        *[
            a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in inputs.args
        ]
    )
    whole = spec.reference(*inputs.args)
    assert torch.equal(inputs.ref, sampled.take(whole64))
    assert torch.equal(inputs.native, sampled.take(whole))
    result = answers.judge_sampled(sampled.take(whole), inputs, case)
    assert result.status == "passed" and result.note == f"checked on {rows.numel()} of 600 rows"
    wrong = whole.clone()
    wrong[-1] += 1.0
    with pytest.raises(Rejected) as e:
        answers.judge_sampled(sampled.take(wrong), inputs, case)
    assert e.value.failure.reason.startswith("row 599 of 600: "), e.value.failure.reason


@pytest.fixture(scope="module")
def pool_judge() -> Iterator[Evaluator]:
    """A CPU judge whose grid is sparse_attn's limit scaled down: 40 tokens of 2 query heads (all
    of them sampled: the interpreter runs a program at a time), each selecting 16 rows past the
    pool's first 2^12 elements of v."""
    with Evaluator("sparse_attn", "cpu", seed=5) as ev:
        ev.grid = [_pool(40)]
        yield ev


def test_a_pool_limit_case_accepts_the_seed_and_rejects_wrapped_rows_at_row_0(
    pool_judge: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    v = verify_candidate(
        "sparse_attn", ROOT / "seeds" / "sparse_attn.py", device="cpu", evaluator=pool_judge
    )
    assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
    (case,) = v.cases
    assert case.status == "passed" and case.note == "checked on 40 of 40 rows"
    v = verify_candidate(
        "sparse_attn", LIMITS / "sparse_attn_wraps_4096.py", device="cpu", evaluator=pool_judge
    )
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)
    # Every token reads past the boundary, not only those around one: the first sampled fails.
    prefix = f"case {pool_judge.grid[0].name}: row 0 of 40: "
    assert v.reason is not None and v.reason.startswith(prefix), v.reason


def test_the_digest_is_the_same_slice_by_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit case's inputs are digested a slice at a time (their int64 words at once would be
    GBs): the same digest as in one pass, and a change in a late slice still shows."""
    raw = torch.randint(0, 256, (4099,), dtype=torch.uint8)
    whole = tensors.fingerprint(raw)
    monkeypatch.setattr(tensors, "_SLICE", 7)
    assert tensors.fingerprint(raw) == whole
    raw[4000] ^= 1
    assert tensors.fingerprint(raw) != whole


# ---- experts that the tokens' routing indexes: fused_moe ---------------------------------------


def test_fused_moe_reaches_both_limits_with_every_routed_expert_past_2g() -> None:
    spec = load_spec("fused_moe")
    (case,) = limits.limit_cases(spec)
    dims = case.dims
    assert case.limit == "M" and dims["M"] >= ROWS
    # DeepSeek-V3's experts over 2 GPUs.
    assert [dims[d] for d in "EkHI"] == [256, 8, 7168, 1024]
    stride = 2 * dims["I"] * dims["H"]  # w1's expert stride
    low = dims["E_low"]
    assert (low - 1) * stride < ELEMENTS <= low * stride < dims["E"] * stride
    assert dims["k"] <= dims["E_hot"] <= dims["E"] - low
    nbytes = {
        t.name: math.prod(resolve_dim(d, dims) for d in t.shape)
        * torch_dtype(case.dtype if t.dtype == "case" else t.dtype).itemsize
        for t in spec.data.inputs
        if isinstance(t, TensorInput)
    }
    # The figures the SPEC's comment gives.
    assert nbytes == {
        "x": 940441600,
        "w1": 7516192768,
        "w2": 3758096384,
        "topk_weights": 2099200,
        "topk_ids": 2099200,
    }
    assert sum(nbytes.values()) == 12218929152 <= MAX_INPUT_BYTES
    assert 2 * dims["M"] * dims["k"] * 3 * dims["I"] * dims["H"] == 23112292761600


def _experts(m: int = 600, e: int = 20, hot: int = 4) -> Case:
    """fused_moe's limit scaled down by its own maker of limits: `m` tokens, top-2 of `e`
    experts of H 16 and I 8 (w1's expert stride 256), routed among `hot` experts past w1's
    first 2^12 elements (expert 16 on)."""
    module = load_spec("fused_moe").module
    limit = module._limit("tiny", m, e=e, k=2, h=16, i=8, hot=hot, past=1 << 12)
    case = _tiny("fused_moe", limit["dims"], "M", "float16")
    return case.model_copy(update={"fixed_dtypes": ("float32",)})


def test_a_moe_limit_routes_every_token_among_experts_past_its_boundary() -> None:
    spec = load_spec("fused_moe")
    case = _experts(e=30, hot=6)
    assert case.dims["E_low"] == 16
    x, w1, w2, tw, ids = limits.draw(spec, case, 3, "cpu")
    assert x.shape == (600, 16) and w1.shape == (30, 16, 16) and ids.dtype == torch.int32
    used = ids.unique().tolist()
    # Six experts, the first past the boundary and the last among them; a row's ids distinct.
    assert len(used) == 6 and used[0] == 16 and used[-1] == 29
    assert (ids[:, 0] != ids[:, 1]).all()
    assert ((tw > 0) & (tw < 1)).all()
    again = limits.draw(spec, case, 3, "cpu")
    assert torch.equal(ids, again[4]) and torch.equal(x, again[0]) and torch.equal(w1, again[1])
    other = limits.draw(spec, case, 4, "cpu")
    assert not torch.equal(ids, other[4]) and not torch.equal(x, other[0])


def test_a_moe_limit_case_is_the_whole_reference_at_the_sampled_tokens(tmp_path: Path) -> None:
    case = _experts(e=30, hot=6)
    answers, sampled, inputs = _truth("fused_moe", case, tmp_path)
    rows = sampled.rows
    assert 0 < rows.numel() < 600 and sampled.total == 600
    x, w1, w2, tw, local = sampled.args
    ids = inputs.args[4][rows]
    used = ids.unique()
    # The sampled call holds only the experts its tokens use, its ids renumbered into them.
    assert w1.shape[0] == w2.shape[0] == used.numel() == 6
    assert torch.equal(used[local.long()], ids.long()) and local.dtype == torch.int32
    assert torch.equal(w1, inputs.args[1][used]) and torch.equal(x, inputs.args[0][rows])
    spec = load_spec("fused_moe")
    whole64 = spec.reference(
        *[
            a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in inputs.args
        ]
    )
    whole = spec.reference(*inputs.args)
    torch.testing.assert_close(inputs.ref, sampled.take(whole64), rtol=1e-15, atol=1e-15)
    assert torch.equal(inputs.native, sampled.take(whole))
    result = answers.judge_sampled(sampled.take(whole), inputs, case)
    assert result.status == "passed" and result.note == f"checked on {rows.numel()} of 600 rows"
    wrong = whole.clone()
    wrong[-1] += 1.0
    with pytest.raises(Rejected) as e:
        answers.judge_sampled(sampled.take(wrong), inputs, case)
    assert e.value.failure.reason.startswith("row 599 of 600: "), e.value.failure.reason


@pytest.fixture(scope="module")
def moe_judge() -> Iterator[Evaluator]:
    """A CPU judge whose grid is fused_moe's limit scaled down: 24 tokens (all of them sampled:
    the interpreter runs a program at a time) among 4 experts past w1's first 2^12 elements."""
    with Evaluator("fused_moe", "cpu", seed=5) as ev:
        ev.grid = [_experts(24)]
        yield ev


def test_a_moe_limit_case_accepts_the_seed_and_rejects_wrapped_experts_at_row_0(
    moe_judge: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    v = verify_candidate(
        "fused_moe", ROOT / "seeds" / "fused_moe.py", device="cpu", evaluator=moe_judge
    )
    assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
    (case,) = v.cases
    assert case.status == "passed" and case.note == "checked on 24 of 24 rows"
    v = verify_candidate(
        "fused_moe", LIMITS / "fused_moe_wraps_4096.py", device="cpu", evaluator=moe_judge
    )
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)
    # Every token is routed past the boundary, not only some: the first sampled fails.
    prefix = f"case {moe_judge.grid[0].name}: row 0 of 24: "
    assert v.reason is not None and v.reason.startswith(prefix), v.reason


# ---- through the judge -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_judge() -> Iterator[Evaluator]:
    """A CPU judge whose grid is one small limit case of softmax: 600 rows of 8."""
    with Evaluator("softmax", "cpu", seed=5) as ev:
        ev.grid = [_tiny("softmax", {"rows": 600, "cols": 8}, "rows")]
        yield ev


@pytest.mark.parametrize(
    ("op", "dims", "rows", "dtype"),
    [
        ("softmax", {"rows": 600, "cols": 8}, "rows", "float32"),
        ("router_gemm", {"M": 600, "N": 16, "K": 64}, "M", "float16"),
        ("topk", {"B": 600, "N": 40, "k": 4}, "B", "float32"),
    ],
)
def test_a_limit_layout_is_known_without_its_draw(
    op: str, dims: dict[str, int], rows: str, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh judge compiles a limit case's specializations ahead from its layout, made from
    one row: the layout of the draw, whose row inputs are put together from blocks."""
    from kernelgen.verify.tensors import meta

    monkeypatch.setattr(limits, "BLOCK_ELEMENTS", 64 * 10)  # several blocks of rows
    spec, case = load_spec(op), _tiny(op, dims, rows, dtype)
    assert limits.layout(spec, case) == meta(limits.draw(spec, case, 3, "cpu"))


def test_every_shipped_limit_layout_is_known_but_those_drawn_whole() -> None:
    """Every row-wise operator's limit layouts are known from a row of each, at their real
    sizes (GBs an input); a case drawn whole by its reference's own maker is compiled when
    reached."""
    for op in sorted({*ROW_WISE, *QUANTIZED}):
        spec = load_spec(op)
        largest = 0
        for case in limits.limit_cases(spec):
            layout = limits.layout(spec, case)
            assert layout is not None, case.name
            largest = max([largest] + [m.storage for m in layout if isinstance(m, TensorMeta)])
        assert largest >= ELEMENTS, op
    for op in ("decode_attn", "sparse_attn", "fused_moe"):
        spec = load_spec(op)
        assert all(limits.layout(spec, c) is None for c in limits.limit_cases(spec)), op


def test_a_limit_case_is_judged_on_its_sampled_rows(
    tiny_judge: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    v = verify_candidate(
        "softmax", ROOT / "seeds" / "softmax.py", device="cpu", evaluator=tiny_judge
    )
    assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
    (case,) = v.cases
    assert case.status == "passed" and case.note is not None and case.note.endswith("of 600 rows")


def test_offsets_that_wrap_are_rejected_on_a_limit_case_naming_the_row(
    tiny_judge: Evaluator,
) -> None:
    v = verify_candidate(
        "softmax", LIMITS / "softmax_wraps_4096.py", device="cpu", evaluator=tiny_judge
    )
    assert not v.accepted and v.category == "incorrect", (v.category, v.reason)
    prefix = f"case {tiny_judge.grid[0].name}: row "
    assert v.reason is not None and v.reason.startswith(prefix), v.reason
    row = int(v.reason.removeprefix(prefix).split()[0])
    assert 512 <= row < 600  # rows from 4096 / 8 on read an earlier row


def test_a_limit_case_is_drawn_when_reached_holding_the_host_s_limit_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other cases' truths are drawn ahead; a limit case's only when the judge reaches it,
    as the host's only judge holding one (its GBs beside other judges' ran an 80 GB H100 out of
    memory), and its layout goes to the next candidate's compile-ahead."""
    from kernelgen import gpulock

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "gpu.lock"))
    monkeypatch.setenv(gpulock.LOG_ENV, str(tmp_path / "waits"))
    with Evaluator("softmax", "cpu", seed=5) as ev:
        small = next(c for c in ev.grid if c.interpreter and c.limit is None)
        ev.grid = [small, _tiny("softmax", {"rows": 600, "cols": 8}, "rows")]
        drawn: list[tuple[str, bool]] = []
        compute = ev.truths._compute

        def logged(case: Case):  # noqa: ANN202 - the truth, as drawn
            drawn.append((case.name, bool(gpulock._held("limit"))))
            return compute(case)

        monkeypatch.setattr(ev.truths, "_compute", logged)
        v = verify_candidate("softmax", ROOT / "seeds" / "softmax.py", device="cpu", evaluator=ev)
        assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
        assert drawn == [(small.name, False), (ev.grid[1].name, True)]
        assert list(ev.limit_layouts) == [ev.grid[1].name]
        assert ev.limit_layouts[ev.grid[1].name][0].shape == [600, 8]
    (line,) = [
        json.loads(x) for x in (tmp_path / "waits" / "softmax.jsonl").read_text().splitlines()
    ]
    assert line["mode"] == "limit" and line["what"] == "judging its limit cases"


# ---- on the GPU ------------------------------------------------------------------------------

# Per operator: the two small fixed cases each cheat passes first (it is right below the limits),
# and (candidate, the limit case it fails on, or None: accepted). A path under LIMITS, or the seed.
GPU_LIMITS: dict[str, tuple[list[str], list[tuple[str, str | None]]]] = {
    "softmax": (
        ["odd/float32/normal", "rows_past_gpu_grid/bfloat16/normal"],
        [
            ("softmax_int32_offsets.py", "limit/rows:"),
            ("softmax_rows_on_y.py", "limit/rows:"),
            ("softmax_int64_rows.py", None),
        ],
    ),
    # The smallest CPU case and the smallest GPU one.
    "decode_attn": (
        ["mid_page/float16/normal", "llama3_70b_8x4k_p64/bfloat16/normal"],
        [
            ("decode_attn_int32_pages.py", "limit/pool_past_2g:"),
            ("decode_attn_batch_on_y.py", "limit/pool_past_2g:"),
            ("seed", None),
        ],
    ),
    # The smallest CPU case and the smallest GPU one at MLA's dims.
    "sparse_attn": (
        ["one_token/float16/normal", "dsv32_short_context_h64/bfloat16/uniform"],
        [
            ("sparse_attn_int32_rows.py", "limit/pool_past_2g:"),
            ("sparse_attn_tokens_on_y.py", "limit/pool_past_2g:"),
            ("seed", None),
        ],
    ),
    # An odd CPU case and the smallest odd GPU one.
    "fused_moe": (
        ["uniform_odd/float16/normal", "idle_odd_gpu/bfloat16/normal"],
        [
            ("fused_moe_int32_experts.py", "limit/experts_past_2g:"),
            ("fused_moe_tokens_on_y.py", "limit/experts_past_2g:"),
            ("seed", None),
        ],
    ),
}


@pytest.fixture(scope="module")
def gpu_judge() -> Iterator[Callable[[str], Evaluator]]:
    """One CUDA judge at a time, for the operator asked (the tests come grouped by operator),
    narrowed to its two small fixed cases and its limit cases: the grid every other test judges
    is not this file's to repeat. The one before is closed first: with every operator's judge
    kept, their limit cases' inputs ran fused_moe's out of memory on an 80 GB H100
    (evaluations/logs/h100-20261205-sparse-attn-promote-cold-verdicts)."""
    judges: dict[str, Evaluator] = {}

    def judge(op: str) -> Evaluator:
        if op not in judges:
            for ev in judges.values():
                ev.close()
            judges.clear()
            ev = Evaluator(op, "cuda", seed=1)
            fixed = GPU_LIMITS[op][0]
            ev.grid = [c for c in ev.grid if c.name in fixed or c.limit]
            assert len(ev.grid) == len(fixed) + len(load_spec(op).data.limits)
            judges[op] = ev
        return judges[op]

    yield judge
    for ev in judges.values():
        ev.close()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(
    ("op", "name", "fails_on"),
    [(op, n, f) for op, (_, cands) in GPU_LIMITS.items() for n, f in cands],
    ids=[f"{op}-{n}" for op, (_, cands) in GPU_LIMITS.items() for n, _ in cands],
)
def test_the_gpu_limits_reject_32_bit_offsets_and_rows_on_grid_y(
    op: str, name: str, fails_on: str | None, gpu_judge: Callable[[str], Evaluator]
) -> None:
    path = ROOT / "seeds" / f"{op}.py" if name == "seed" else LIMITS / name
    v = verify_candidate(op, path, device="cuda", evaluator=gpu_judge(op))
    status = {c.name: c.status for c in v.cases}
    assert all(status[n] == "passed" for n in GPU_LIMITS[op][0]), (v.reason, status)
    if fails_on is None:
        assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
        assert all(c.status == "passed" and c.note for c in v.cases if c.name.startswith("limit/"))
        return
    assert not v.accepted and v.category in ("incorrect", "crash"), (v.category, v.reason)
    assert v.reason is not None and v.reason.startswith(f"case {fails_on}"), v.reason


def test_every_limits_candidate_is_listed() -> None:
    listed = {n for _, cands in GPU_LIMITS.values() for n, _ in cands if n != "seed"}
    listed |= {f"{op}_wraps_4096.py" for op in GPU_LIMITS}
    assert listed == {p.name for p in LIMITS.glob("*.py")}
