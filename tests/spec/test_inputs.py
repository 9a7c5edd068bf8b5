"""Seeded inputs: drawn scalars, the specials distribution, and a hard-coded eps that must fail."""

from __future__ import annotations

import math

import pytest
import torch

from kernelgen.spec import BenchShape, Case, OpSpec, ScalarInput, load_spec
from kernelgen.spec.inputs import case_inputs, case_seed, drawn_on, make_inputs


@pytest.fixture(scope="module")
def rms() -> OpSpec:
    return load_spec("rms_norm")


def _case(spec: OpSpec, name: str) -> Case:
    return next(c for c in spec.cases if c.name == name)


def _eps_draw(spec: OpSpec) -> tuple[float, float]:
    eps = next(i for i in spec.data.inputs if isinstance(i, ScalarInput) and i.name == "eps")
    assert eps.draw is not None
    return eps.draw


def test_eps_is_drawn_per_seed_and_fixed_for_benchmarks(rms: OpSpec) -> None:
    lo, hi = _eps_draw(rms)
    case = _case(rms, "odd/float32/normal")
    drawn = [case_inputs(rms, case, case_seed(base, case.name), "cpu")[2] for base in range(20)]
    assert all(isinstance(e, float) and lo <= e <= hi for e in drawn)
    assert len(set(drawn)) == len(drawn)
    # Log-uniform: draws spread over the decades, not bunched at the top of the range.
    assert min(drawn) < math.sqrt(lo * hi) < max(drawn)
    # The same seed gives the same eps; benchmarks always get the spec's value.
    again = case_inputs(rms, case, case_seed(0, case.name), "cpu")[2]
    assert again == drawn[0]
    shape = BenchShape(name="small", dims={"rows": 2, "cols": 8})
    for base in range(3):
        assert make_inputs(rms, shape, shape.dtype, "normal", base, "cpu")[2] == 1e-6


def test_drawn_scalar_leaves_tensor_values_alone(rms: OpSpec) -> None:
    # eps comes last in the generator's stream: x and weight are what they were before the draw.
    case = _case(rms, "odd/float32/normal")
    x, w, _ = case_inputs(rms, case, 7, "cpu")
    gen = torch.Generator().manual_seed(7)
    assert torch.equal(x, torch.randn(37, 1823, generator=gen, dtype=torch.float64).float())
    u = torch.rand(1823, generator=gen, dtype=torch.float64)
    assert torch.equal(w, (u * 2 - 1 + 1.0).float())


def _specials(spec: OpSpec, name: str, seed: int) -> torch.Tensor:
    return case_inputs(spec, _case(spec, name), seed, "cpu")[0]


@pytest.mark.parametrize(
    ("op", "name"),
    [
        ("softmax", "odd/float32/specials"),
        ("softmax", "rank3/float16/specials"),
        ("rms_norm", "pow2_64/float32/specials"),
        ("silu_and_mul", "odd/float16/specials"),
    ],
)
def test_specials_hold_nan_inf_and_special_rows(op: str, name: str) -> None:
    spec = load_spec(op)
    for seed in range(12):
        x = _specials(spec, name, seed)
        assert bool(x.isnan().any()) and bool(x.isposinf().any()), seed
        rows = x.reshape(-1, x.shape[-1])
        all_neg_inf = rows.isneginf().all(-1)
        assert int(all_neg_inf.sum()) == 1, seed
        assert bool((rows.isnan().any(-1) & ~all_neg_inf).any()), seed
        assert bool((rows.isneginf() & ~all_neg_inf[:, None]).any()), seed
        # Few enough specials that most rows stay finite: the case still judges values.
        if rows.shape[0] > 20:
            assert int(rows.isfinite().all(-1).sum()) > rows.shape[0] // 2
    # Positions come from the seed.
    x = _specials(spec, name, 11)
    assert torch.equal(x.isnan(), _specials(spec, name, 11).isnan())
    assert not torch.equal(x.isnan(), _specials(spec, name, 12).isnan())


def test_specials_in_one_row_only_sprinkle() -> None:
    spec = load_spec("softmax")
    size = next(s for s in spec.data.sizes if s.name == "rank1")
    for seed in range(12):
        x = make_inputs(spec, size, "float32", "specials", seed, "cpu")[0]
        assert x.shape == (77,)
        assert bool(x.isnan().any()) and bool(x.isposinf().any()) and bool(x.isneginf().any())
        assert int(x.isfinite().sum()) >= 77 - 3


def _fails(out: torch.Tensor, ref: torch.Tensor, spec: OpSpec, case: Case) -> bool:
    """The verifier's value rule on finite entries: |out - ref| <= atol + rtol * |ref|."""
    tol = spec.tolerance(case.dtype, case.dims)
    finite = ref.isfinite()
    err = (out.double() - ref).abs()[finite]
    return bool((err > tol.atol + tol.rtol * ref.abs()[finite]).any())


@pytest.mark.parametrize("hard_coded", [1e-6, 1e-5])
def test_hard_coded_eps_fails_on_small_values(rms: OpSpec, hard_coded: float) -> None:
    cases = [c for c in rms.cases if c.dist == "small" and c.interpreter]
    assert cases
    for case in cases:
        for base in range(8):
            x, w, eps = case_inputs(rms, case, case_seed(base, case.name), "cpu")
            ref = rms.reference(x.double(), w.double(), eps)
            # An honest fp32 computation with the drawn eps passes; the hard-coded one does not.
            assert not _fails(rms.reference(x, w, eps), ref, rms, case), (case.name, eps)
            assert _fails(rms.reference(x, w, hard_coded), ref, rms, case), (case.name, eps)


def test_hard_coded_eps_fails_somewhere_on_normal_values(rms: OpSpec) -> None:
    # The wide draw range exposes a hard-coded eps even where x ~ N(0, 1), for any run seed.
    cases = [c for c in rms.cases if c.dist == "normal" and c.interpreter]
    for base in range(5):
        failed = []
        for case in cases:
            x, w, eps = case_inputs(rms, case, case_seed(base, case.name + "/a"), "cpu")
            ref = rms.reference(x.double(), w.double(), eps)
            failed.append(_fails(rms.reference(x, w, 1e-6), ref, rms, case))
        assert any(failed), base


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("op", ["softmax", "fused_moe", "decode_attn"])
def test_bench_inputs_are_drawn_on_the_device(op: str) -> None:
    """A bench shape's inputs are drawn on CUDA (a maker's factories included) and keep the
    layout and dtypes the CPU draw gives; a case the interpreter runs is still drawn on the CPU,
    and a GPU-only case on CUDA, in the shapes, dtypes and kind of layout the CPU gives."""
    spec = load_spec(op)
    shape = min(spec.data.bench, key=lambda s: math.prod(s.dims.values()))
    on_gpu = make_inputs(spec, shape, shape.dtype, "normal", 7, "cuda")
    on_cpu = make_inputs(spec, shape, shape.dtype, "normal", 7, "cpu")
    for g, c in zip(on_gpu, on_cpu, strict=True):
        if isinstance(c, torch.Tensor):
            assert g.device.type == "cuda"
            assert (g.shape, g.stride(), g.dtype) == (c.shape, c.stride(), c.dtype)
        else:
            assert g == c
    case = spec.cases[0]
    assert case.size.interpreter
    a = case_inputs(spec, case, 3, "cuda")
    b = case_inputs(spec, case, 3, "cpu")
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor):
            torch.testing.assert_close(x.cpu(), y, equal_nan=True, rtol=0, atol=0)
    gpu_only = min(
        (c for c in spec.cases if not c.size.interpreter), key=lambda c: math.prod(c.dims.values())
    )
    on_gpu = case_inputs(spec, gpu_only, 3, "cuda")
    on_cpu = case_inputs(spec, gpu_only, 3, "cpu")
    for g, c in zip(on_gpu, on_cpu, strict=True):
        if isinstance(c, torch.Tensor):
            # The same kind of layout; its padding and offset are drawn from the generator.
            assert g.device.type == "cuda" and (g.shape, g.dtype) == (c.shape, c.dtype)
            assert g.is_contiguous() == c.is_contiguous()


def test_a_size_is_drawn_on_the_cpu_where_the_interpreter_runs_it() -> None:
    spec = load_spec("softmax")
    cpu_size = next(c.size for c in spec.cases if c.size.interpreter)
    gpu_size = next(c.size for c in spec.cases if not c.size.interpreter)
    assert drawn_on(cpu_size, "cuda") == "cpu"  # the same values as a CPU verdict's
    assert drawn_on(gpu_size, "cuda") == "cuda"
    assert drawn_on(gpu_size, "cpu") == "cpu"
    assert drawn_on(spec.data.bench[0], "cuda") == "cuda"
