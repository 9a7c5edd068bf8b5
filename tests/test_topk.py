"""topk's contract: the grid, the inputs, and the set-with-ties rule its compare judges by."""

from __future__ import annotations

import pytest
import torch

from kernelgen.spec import Case, OpSpec, ScalarInput, load_spec
from kernelgen.spec.inputs import case_inputs


@pytest.fixture(scope="module")
def spec() -> OpSpec:
    return load_spec("topk")


def _case(spec: OpSpec, name: str) -> Case:
    return next(c for c in spec.cases if c.name == name)


def _judge(spec: OpSpec, out: torch.Tensor, x: torch.Tensor, k: int) -> str | None:
    """The judge's call: the candidate's output against the float64 reference's indices."""
    ref = spec.reference(x.double(), k)
    case = spec.cases[0]
    return spec.judge(out, ref, case, [x, k])


def test_grid(spec: OpSpec) -> None:
    k = spec.data.inputs[1]
    assert isinstance(k, ScalarInput) and k.dim == "k"
    assert {c.dtype for c in spec.cases} == {"float32"}
    cpu = [c for c in spec.cases if c.interpreter]
    dims = [c.dims for c in cpu]
    # The corners: 1x1, k = N, k = 1; layouts; heavy ties; near-equal values.
    assert {"B": 1, "N": 1, "k": 1} in dims
    assert any(d["k"] == d["N"] > 1 for d in dims) and any(d["k"] == 1 < d["N"] for d in dims)
    assert {c.size.layout for c in cpu} == {"contiguous", "strided", "transposed"}
    assert any(c.size.name.startswith("ties_") for c in cpu)
    assert any(c.size.name.startswith("close_") for c in cpu)
    # Small enough for the interpreter: the seed makes 34 passes per row, one row at a time.
    assert all(d["N"] <= 4096 and d["k"] <= 128 and d["B"] * d["N"] <= 16384 for d in dims)
    gpu = {(c.dims["B"], c.dims["N"], c.dims["k"]) for c in spec.cases if not c.interpreter}
    bench = {(b.dims["B"], b.dims["N"], b.dims["k"]) for b in spec.data.bench}
    # Rows of 8K to 128K scores (DeepSeek-V3.2's indexer at decode and prefill, and 128 x 8192
    # with k = 512), and Qwen3-235B-A22B's router: 4096 rows of 128 experts, 8 kept.
    long_rows = {(1, 131072, 2048), (64, 32768, 2048), (128, 8192, 512)}
    assert bench == long_rows | {(4096, 128, 8)} and bench <= gpu
    assert all(b.dtype == "float32" for b in spec.data.bench)


def test_inputs(spec: OpSpec) -> None:
    for case in spec.cases:
        if not case.interpreter:
            continue
        x, k = case_inputs(spec, case, seed=3, device="cpu")
        assert x.dtype == torch.float32 and k == case.dims["k"]
        assert bool(torch.isfinite(x).all()), case.name
        if case.size.layout == "strided":
            assert x.stride(1) == 1 and x.stride(0) > x.shape[1]
        if case.size.layout == "transposed":
            assert x.stride(0) == 1


@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_ties_case_has_more_tied_entries_than_slots(spec: OpSpec, dist: str) -> None:
    """Every row of ties_odd has more entries at its k-th value than slots left for them, so a
    choice among tied entries is made in every row."""
    x, k = case_inputs(spec, _case(spec, f"ties_odd/float32/{dist}"), seed=0, device="cpu")
    kth = x.topk(k, dim=-1).values[:, -1:]
    above, tied = (x > kth).sum(-1), (x == kth).sum(-1)
    assert bool((above + tied > k).all())


def test_close_case_is_distinct_in_fp32_not_in_fp16(spec: OpSpec) -> None:
    """close_odd's rows: the k-th and (k+1)-th values differ in fp32 and collide in fp16 in
    most rows, so a kernel ranking fp16-rounded values is caught there."""
    x, k = case_inputs(spec, _case(spec, "close_odd/float32/normal"), seed=0, device="cpu")
    top = x.topk(k + 1, dim=-1).values
    assert bool((top[:, k - 1] > top[:, k]).all())
    half = top.half()
    assert int((half[:, k - 1] == half[:, k]).sum()) >= x.shape[0] // 2


def test_reference_and_eager_are_torch_topk_as_sets(spec: OpSpec) -> None:
    gen = torch.Generator().manual_seed(0)
    for b, n, k in ((1, 1, 1), (3, 77, 77), (5, 300, 1), (7, 1000, 64)):
        x = torch.randn(b, n, generator=gen)
        want = torch.topk(x, k, dim=-1).indices.sort(dim=-1).values
        for fn, arg in ((spec.reference, x.double()), (spec.reference, x), (spec.eager, x)):
            got = fn(arg, k)
            assert got.dtype == torch.int32 and tuple(got.shape) == (b, k)
            assert torch.equal(got.long().sort(dim=-1).values, want)


def test_compare_accepts_any_order_and_any_tied_choice(spec: OpSpec) -> None:
    x = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.0], [5.0, 5.0, 5.0, 5.0, -1.0, 5.0]])
    k = 3
    for out in (
        [[0, 2, 3], [0, 1, 2]],
        [[3, 0, 2], [5, 3, 1]],  # another order, other tied entries
        [[4, 3, 0], [2, 5, 0]],
    ):
        assert _judge(spec, torch.tensor(out, dtype=torch.int32), x, k) is None, out


def test_compare_rejects_a_wrong_set_of_the_right_size(spec: OpSpec) -> None:
    x = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.0], [5.0, 5.0, 5.0, 5.0, -1.0, 5.0]])
    out = torch.tensor([[0, 2, 3], [0, 4, 2]], dtype=torch.int32)  # row 1 takes the -1
    msg = _judge(spec, out, x, 3)
    assert msg and msg.startswith("row 1: the chosen values' 3rd largest is -1,")
    assert "wrong set of the right size" in msg and "1 of 2 rows differ" in msg


def test_compare_rejects_a_repeated_index(spec: OpSpec) -> None:
    x = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.0]])
    # The values 3, 2, 2 are the top-3's, but index 2 stands for both 2s.
    msg = _judge(spec, torch.tensor([[0, 2, 2]], dtype=torch.int32), x, 3)
    assert msg and msg.startswith("row 0: index 2 chosen more than once")


@pytest.mark.parametrize("bad", [6, -1])
def test_compare_rejects_an_index_out_of_range(spec: OpSpec, bad: int) -> None:
    x = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.0]])
    msg = _judge(spec, torch.tensor([[0, 2, bad]], dtype=torch.int32), x, 3)
    assert msg and msg.startswith(f"row 0: index {bad} at [0, 2] is outside [0, 6)")


def test_compare_rejects_wrong_shape_and_dtype(spec: OpSpec) -> None:
    x = torch.tensor([[3.0, 1.0, 2.0, 2.0, 2.0, 0.0]])
    short = _judge(spec, torch.tensor([[0, 2]], dtype=torch.int32), x, 3)
    assert short and "shape (1, 2), expected (1, 3)" in short
    floats = _judge(spec, torch.tensor([[0.0, 2.0, 3.0]]), x, 3)
    assert floats and "dtype torch.float32" in floats


def test_compare_on_random_rows_with_ties(spec: OpSpec) -> None:
    """Any permutation of the reference's set, or a swap of two tied entries across the
    boundary, is right; a swap with an entry of another value is not."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(0, 6, (20, 50), generator=gen).float()
    k = 9
    ref = spec.reference(x.double(), k)
    perm = ref[:, torch.randperm(k, generator=gen)]
    assert _judge(spec, perm, x, k) is None
    kth = x.topk(k, dim=-1).values[:, -1:]
    swapped, wrong = ref.clone(), ref.clone()
    for r in range(x.shape[0]):
        chosen = set(ref[r].tolist())
        at_kth = [j for j, v in enumerate(ref[r].tolist()) if x[r, v] == kth[r, 0]]
        spare_tied = [c for c in (x[r] == kth[r, 0]).nonzero()[:, 0].tolist() if c not in chosen]
        below = (x[r] < kth[r, 0]).nonzero()[:, 0].tolist()
        if at_kth and spare_tied:
            swapped[r, at_kth[0]] = spare_tied[0]
        wrong[r, at_kth[0]] = below[0]
    assert not torch.equal(swapped, ref)  # some row did trade a tied entry
    assert _judge(spec, swapped, x, k) is None
    msg = _judge(spec, wrong, x, k)
    assert msg and "20 of 20 rows differ" in msg


def test_cost(spec: OpSpec) -> None:
    """x read once (fp32), the int32 indices written once; a comparison per element."""
    cost = spec.cost({"B": 64, "N": 32768, "k": 2048}, "float32")
    assert cost.bytes == 64 * 32768 * 4 + 64 * 2048 * 4
    assert cost.flops == 64 * 32768
