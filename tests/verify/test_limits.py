"""Limit cases ([V2] item 2): SPEC.limits validates and names a bad field; every row-wise
operator reaches 2^31 elements in one tensor and 65536 rows; the cases are judged on CUDA and
reported not run on CPU; their inputs are drawn a block of rows at a time, reproducibly from the
seed; the truth on sampled rows accepts a right output and rejects one wrong at its last rows,
naming the row. On the GPU: a softmax with int32 row offsets and one with its rows on the grid's
y axis are rejected on a limit case after passing the smaller cases, and their int64, 1-D twin
is accepted.

On CPU a limit case is forced through the judge by putting a small one (600 rows) on its grid:
everything but the size is the real path (truth, calls, gather, compare)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from kernelgen.errors import SpecError
from kernelgen.spec import Case, Size, TensorInput, load_spec, resolve_dim
from kernelgen.spec.limits import ELEMENTS, ROWS
from kernelgen.verify import limits, tensors, verify_candidate
from kernelgen.verify.answers import Answers
from kernelgen.verify.checks import Rejected
from kernelgen.verify.judge import Evaluator
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


def test_the_digest_is_the_same_slice_by_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit case's inputs are digested a slice at a time (their int64 words at once would be
    GBs): the same digest as in one pass, and a change in a late slice still shows."""
    raw = torch.randint(0, 256, (4099,), dtype=torch.uint8)
    whole = tensors.fingerprint(raw)
    monkeypatch.setattr(tensors, "_SLICE", 7)
    assert tensors.fingerprint(raw) == whole
    raw[4000] ^= 1
    assert tensors.fingerprint(raw) != whole


# ---- through the judge -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_judge() -> Iterator[Evaluator]:
    """A CPU judge whose grid is one small limit case of softmax: 600 rows of 8."""
    with Evaluator("softmax", "cpu", seed=5) as ev:
        ev.grid = [_tiny("softmax", {"rows": 600, "cols": 8}, "rows")]
        yield ev


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


# ---- on the GPU ------------------------------------------------------------------------------

# (candidate, what the verdict must be: None accepted, else the limit case it fails on)
GPU_CANDIDATES = [
    ("softmax_int32_offsets.py", "limit/rows:"),
    ("softmax_rows_on_y.py", "limit/rows:"),
    ("softmax_int64_rows.py", None),
]
# Smaller cases first: each cheat passes them (it is right below the limits), then fails.
GPU_FIXED = ["odd/float32/normal", "rows_past_gpu_grid/bfloat16/normal"]


@pytest.fixture(scope="module")
def gpu_judge() -> Iterator[Evaluator]:
    """The softmax judge on CUDA, narrowed to two small fixed cases and the limit cases: the
    grid every other test judges is not this file's to repeat."""
    with Evaluator("softmax", "cuda", seed=1) as ev:
        ev.grid = [c for c in ev.grid if c.name in GPU_FIXED or c.limit]
        assert len(ev.grid) == len(GPU_FIXED) + len(load_spec("softmax").data.limits)
        yield ev


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(("name", "fails_on"), GPU_CANDIDATES, ids=[c[0] for c in GPU_CANDIDATES])
def test_the_gpu_limits_reject_32_bit_offsets_and_a_row_grid_on_y(
    name: str, fails_on: str | None, gpu_judge: Evaluator
) -> None:
    v = verify_candidate("softmax", LIMITS / name, device="cuda", evaluator=gpu_judge)
    status = {c.name: c.status for c in v.cases}
    assert all(status[n] == "passed" for n in GPU_FIXED), (v.reason, status)
    if fails_on is None:
        assert v.accepted and v.outcome == "accepted", (v.category, v.reason)
        assert all(c.status == "passed" and c.note for c in v.cases if c.name.startswith("limit/"))
        return
    assert not v.accepted and v.category in ("incorrect", "crash"), (v.category, v.reason)
    assert v.reason is not None and v.reason.startswith(f"case {fails_on}"), v.reason


def test_every_limits_candidate_is_listed() -> None:
    listed = {c[0] for c in GPU_CANDIDATES} | {"softmax_wraps_4096.py"}
    assert listed == {p.name for p in LIMITS.glob("*.py")}
