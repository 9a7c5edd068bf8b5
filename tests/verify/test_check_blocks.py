"""The checks read an output a block of entries at a time (a KernelBench problem's own-size
output has a billion of them): the same failures, naming the same entries, and the same errors
as one pass over the whole would give, whatever the layout."""

import pytest
import torch

from kernelgen.spec import Tolerance
from kernelgen.verify import checks

TOL = Tolerance(atol=1e-3, rtol=1e-3)


def _pair(shape: tuple[int, ...], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ref = torch.randn(shape, generator=gen, dtype=torch.float64)
    out = (ref + 1e-5 * torch.randn(shape, generator=gen, dtype=torch.float64)).float()
    return out, ref


def _both(fn, *args):  # noqa: ANN001, ANN202 - any check
    """The check with blocks of 7 entries, and with one block for all."""
    blocked = pytest.MonkeyPatch()
    blocked.setattr(checks, "BLOCK", 7)
    try:
        small = fn(*args)
    finally:
        blocked.undo()
    return small, fn(*args)


def _same(a: float, b: float) -> bool:
    return a == pytest.approx(b, rel=1e-12, abs=0.0)


def test_a_passing_output_measures_the_same_in_blocks() -> None:
    out, ref = _pair((5, 6, 4))
    (f1, m1, r1), (f2, m2, r2) = _both(checks.measure, out, ref, TOL)
    assert f1 is None and f2 is None
    assert m1 == m2 and _same(r1, r2)
    e1, e2 = _both(checks.rel_err, out, ref)
    assert _same(e1, e2) and _same(e1, r1)
    s1, s2 = _both(checks.stretch, out, ref, Tolerance(atol=1e-7, rtol=1e-7))
    assert s1 == s2 and s1 > 1.0


def test_the_worst_entry_is_named_across_blocks() -> None:
    out, ref = _pair((5, 6, 4))
    out[3, 2, 1] += 0.5  # the worst, in a late block
    out[0, 0, 2] += 0.1  # off too, in the first block
    (f1, _, _), (f2, _, _) = _both(checks.measure, out, ref, TOL)
    assert f1 is not None and f1.reason == f2.reason
    assert " at [3, 2, 1], " in f1.reason and "2 of 120 entries off" in f1.reason


def test_an_unwritten_entry_and_an_infinity_are_named_across_blocks() -> None:
    out, ref = _pair((4, 9))
    out[2, 5] = float("nan")
    (f1, _, _), (f2, _, _) = _both(checks.measure, out, ref, TOL)
    assert f1 is not None and f1.reason == f2.reason
    assert f1.reason.startswith("NaN at [2, 5] where the reference is")
    assert "(output never written there?)" in f1.reason

    out, ref = _pair((4, 9))
    ref[3, 8] = float("-inf")
    out[3, 8] = 1.0
    (f1, _, _), (f2, _, _) = _both(checks.measure, out, ref, TOL)
    assert f1 is not None and f1.reason == f2.reason
    assert f1.reason == "1 at [3, 8] where the reference is -inf"


def test_a_strided_output_is_read_in_its_logical_order() -> None:
    out, ref = _pair((6, 5))
    strided = out.T.contiguous().T  # the same values, column-major
    assert not strided.is_contiguous()
    strided[4, 1] += 1.0
    (f1, _, _), (f2, _, _) = _both(checks.measure, strided, ref, TOL)
    assert f1 is not None and f1.reason == f2.reason and " at [4, 1], " in f1.reason


def test_infinite_errors_count_as_infinite() -> None:
    out, ref = _pair((3, 10))
    out[1, 1] = float("inf")  # the reference finite there
    (f1, m1, r1), (_, m2, r2) = _both(checks.measure, out, ref, TOL)
    assert f1 is not None and m1 == m2 == float("inf") and r1 == r2 == float("inf")
    e1, e2 = _both(checks.rel_err, out, ref)
    assert e1 == e2 == float("inf")


def test_no_finite_reference_has_no_error() -> None:
    ref = torch.full((3, 5), float("nan"), dtype=torch.float64)
    e1, e2 = _both(checks.rel_err, ref.float(), ref)
    assert e1 == e2 == 0.0


def test_differently_shaped_tensors_are_the_judges_bug() -> None:
    with pytest.raises(ValueError, match="differently shaped"):
        checks.measure(torch.zeros(4, 3), torch.zeros(3, 4, dtype=torch.float64), TOL)


def test_kernelbench_s_allclose_and_differences_are_the_same_in_blocks() -> None:
    out, ref = _pair((5, 6, 4))
    out[2, 3, 1] += 0.05
    whole = (ref - out.double()).abs()
    for atol in (1e-2, 1e-1):
        want = torch.allclose(ref, out.double(), atol=atol, rtol=atol)
        (c1, m1, e1), (c2, m2, e2) = _both(checks.allclose_diff, ref, out.double(), atol, atol)
        assert c1 == c2 == want
        assert m1 == m2 == float(whole.max()) and _same(e1, float(whole.mean())) and _same(e1, e2)
    out[0, 0, 0] = float("nan")
    close, most, _ = checks.allclose_diff(ref, out.double(), 1.0, 1.0)
    assert not close and most != most  # NaN: not close, and the largest difference is NaN
