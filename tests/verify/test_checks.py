"""The precision rule: a candidate may be a few times less accurate than torch in the same dtype,
above a floor of fp32 rounding noise, and no more; for an operator with its own compare too, on
what its reference says is measured. And compares whose bounds scale with the operands: at a real
router's weight scale, at e4m3's own steps."""

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from kernelgen.spec import load_spec
from kernelgen.verify import checks, verify_candidate
from kernelgen.verify.answers import Answers
from kernelgen.verify.checks import Rejected
from kernelgen.verify.truth import Inputs

COMPARE = Path(__file__).parent / "candidates" / "compare"


def test_an_approximate_exp_is_noise() -> None:
    # What a kernel with tl.exp gave on the H200 at one/float32/wide, against torch's expf.
    assert checks.precision(1.05e-6, 2.75e-8, torch.float32, 2.0) is None


def test_half_precision_arithmetic_is_caught() -> None:
    # fp16 math rounds each step to 2^-11: a mean relative error of ~2.4e-4 at best.
    failure = checks.precision(2.4e-4, 3e-8, torch.float32, 2.0)
    assert failure is not None and failure.category == "precision"
    assert "computed in lower precision?" in failure.reason


def test_the_ratio_bites_above_the_floor() -> None:
    # In bf16 torch's own error is large; a candidate 3x worse than it is still caught.
    assert checks.precision(2.0e-3, 1.0e-3, torch.bfloat16, 2.0) is None
    assert checks.precision(3.0e-3, 1.0e-3, torch.bfloat16, 2.0) is not None


def _rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return checks.rel_err(out, ref.double())


def _router(std: float, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """x bf16 N(0, 1) and a router weight fp32 N(0, std^2) at DeepSeek-V3's hidden size."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(32, 7168, generator=gen).to(torch.bfloat16)
    return x, torch.randn(64, 7168, generator=gen) * std


def test_router_gemm_bf16_weights_are_rejected_at_a_routers_scale() -> None:
    """At std 0.006 (DeepSeek-V3's router) scores are ~0.5, not ~85: a bound absolute in
    sqrt(K) passed a bf16 copy of w there. Relative to the products, it fails it, by the bound
    and by the error ratio; fp32 passes both, and so does w split into two bf16 pieces."""
    spec = load_spec("router_gemm")
    case = next(c for c in spec.cases if c.size.name == "decode_7168")  # K = 7168, as x's
    x, w = _router(0.006)
    ref = x.double() @ w.double().T
    native = spec.reference(x, w)
    w1 = w.to(torch.bfloat16).float()
    honest = {"fp32": x.float() @ w.T, "two bf16 pieces": x.float() @ (w1 + (w - w1).bfloat16()).T}
    for name, out in honest.items():
        assert spec.judge(out, ref, case, [x, w]) is None, name
        assert checks.precision(_rel(out, ref), _rel(native, ref), out.dtype, 8.0) is None, name
    shortcut = x.float() @ w1.T
    msg = spec.judge(shortcut, ref, case, [x, w])
    assert msg and "sqrt(sum_k (x_k*w_k)^2)" in msg, msg
    ratio = spec.data.error_ratio
    assert checks.precision(_rel(shortcut, ref), _rel(native, ref), torch.float32, ratio)


def test_router_gemm_draws_its_weights_at_a_routers_scale() -> None:
    spec = load_spec("router_gemm")
    lo, hi = spec.module.W_STD
    stds = set()
    for seed in range(4):
        case = next(c for c in spec.cases if c.size.name == "odd")
        x, w = spec.make_inputs(
            case.size, case.dtype, case.dist, torch.Generator().manual_seed(seed)
        )
        assert w.dtype == torch.float32 and x.dtype == torch.bfloat16
        stds.add(round(float(w.std()), 4))
        assert 0.8 * lo < float(w.std()) < 1.2 * hi
    assert len(stds) > 1  # drawn per case, not one scale to tune a bound to


def _act_quant_inputs(dtype: torch.dtype = torch.float16) -> torch.Tensor:
    spec = load_spec("act_quant")
    size = SimpleNamespace(dims={"M": 64, "K": 1024}, layout="contiguous", name="x")
    (x,) = spec.make_inputs(size, str(dtype).removeprefix("torch."), "normal", _gen(1))
    return x


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _quantized(x: torch.Tensor, how: str) -> tuple[torch.Tensor, torch.Tensor]:
    """act_quant in fp32 as a kernel computes it: `nearest` (x / scale, FlagGems' formula),
    `reciprocal` (x * (448 / amax)), `approximate` (x / scale off by up to 2 fp32 ulps, as
    Triton's div.full.f32 may be), `toward_zero` (rounded down in magnitude), `shrunk` (x /
    scale times 0.97, then to nearest)."""
    m, k = x.shape
    g = x.float().view(m, k // 128, 128)
    amax = g.abs().amax(-1, keepdim=True)
    s = amax / 448.0
    t = torch.where(s > 0, g / s, 0.0)
    if how == "reciprocal":
        t = g * torch.where(amax > 0, 448.0 / amax, 0.0)
    elif how == "approximate":
        steps = torch.randint(-2, 3, t.shape, generator=_gen(2))
        for _ in range(2):
            toward = torch.where(steps > 0, math.inf, -math.inf)
            t = torch.where(steps != 0, torch.nextafter(t, toward), t)
            steps = steps - steps.sign()
    elif how == "shrunk":
        t = t * 0.97
    q = t.to(torch.float8_e4m3fn)
    if how == "toward_zero":
        bits = q.view(torch.uint8).to(torch.int16)
        mag = bits & 0x7F
        mag = torch.where((q.float().abs() > t.abs()) & (mag > 0), mag - 1, mag)
        q = ((bits & 0x80) | mag).to(torch.uint8).view(torch.float8_e4m3fn)
    return q.view(m, k), s.view(m, k // 128)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_act_quant_biased_rounding_is_rejected_honest_rounding_accepted(dtype) -> None:
    """One e4m3 step was allowed everywhere, so a quantizer that rounds toward zero (or shrinks
    x / scale a little) passed. Now a step is allowed only at a tie, which every honest fp32
    formula passes (a correctly rounded quotient, a reciprocal, Triton's approximate `/`); and
    the error ratio on q * scale against x catches the bias on its own."""
    spec = load_spec("act_quant")
    case = next(c for c in spec.cases if c.size.name == "odd_rows")
    x = _act_quant_inputs(dtype)
    ref = spec.reference(x.double())
    hook = spec.module.error_values
    native = checks.pair_errors(checks.error_pairs(spec.reference(x), ref, [x], hook))[0]
    ratio = spec.data.error_ratio
    for how in ("nearest", "reciprocal", "approximate"):
        out = _quantized(x, how)
        assert spec.judge(out, ref, case, [x]) is None, how
        err = checks.pair_errors(checks.error_pairs(out, ref, [x], hook))[0]
        assert checks.precision(err, native, torch.float8_e4m3fn, ratio) is None, how
    for how in ("toward_zero", "shrunk"):
        out = _quantized(x, how)
        msg = spec.judge(out, ref, case, [x])
        assert msg and msg.startswith("q ") and "nearest e4m3" in msg, how
    biased = checks.pair_errors(checks.error_pairs(_quantized(x, "toward_zero"), ref, [x], hook))
    assert checks.precision(biased[0], native, torch.float8_e4m3fn, ratio) is not None


def _compare_spec(error_values=None) -> SimpleNamespace:
    """An operator whose own compare passes everything: only the error ratio can object."""
    module = SimpleNamespace(error_values=error_values) if error_values else SimpleNamespace()
    return SimpleNamespace(
        compare=lambda *a: None,
        judge=lambda out, ref, case, args: None,
        module=module,
        data=SimpleNamespace(error_ratio=2.0),
    )


def _inputs(x: torch.Tensor, ref: torch.Tensor, native: torch.Tensor) -> Inputs:
    return Inputs(args=[x], where=Path("unused"), ref=ref, native=native, digests=[])


def test_the_error_ratio_runs_for_an_operator_with_its_own_compare() -> None:
    x = torch.randn(64, 256, dtype=torch.float64)
    ref = x * 2
    native = ref.float()
    answers = Answers(_compare_spec(), "cpu", "cpu")  # type: ignore[arg-type]
    case = SimpleNamespace(name="c")
    honest = answers.judge_values(native.clone(), _inputs(x, ref, native), case)  # type: ignore[arg-type]
    assert honest.status == "passed" and honest.rel_err is not None
    downgraded = ref.half().float()  # fp16 arithmetic: ~2.4e-4, far above fp32's ~3e-8
    with pytest.raises(Rejected) as caught:
        answers.judge_values(downgraded, _inputs(x, ref, native), case)  # type: ignore[arg-type]
    assert caught.value.failure.category == "precision"


def test_the_error_ratio_measures_what_the_reference_names_and_skips_integers() -> None:
    x = torch.randn(8, 128, dtype=torch.float64)
    case = SimpleNamespace(name="c")
    # Indices only: nothing to measure, nothing to reject.
    ids = torch.arange(8, dtype=torch.int32)
    answers = Answers(_compare_spec(), "cpu", "cpu")  # type: ignore[arg-type]
    assert answers.judge_values(ids, _inputs(x, ids, ids), case).rel_err is None  # type: ignore[arg-type]
    # A hook that measures the output against x, where the output itself looks exact.
    answers = Answers(_compare_spec(lambda out, ref, args: [(out, args[0])]), "cpu", "cpu")  # type: ignore[arg-type]
    with pytest.raises(Rejected):
        answers.judge_values(x.float() * 1.01, _inputs(x, x * 1.01, x.float()), case)  # type: ignore[arg-type]


def test_a_biased_act_quant_kernel_is_rejected() -> None:
    v = verify_candidate("act_quant", COMPARE / "act_quant_toward_zero.py", device="cpu", seed=5)
    assert not v.accepted and v.category == "incorrect", v.reason
    assert "nearest e4m3" in (v.reason or ""), v.reason


@pytest.mark.slow
def test_its_honest_twin_is_accepted() -> None:
    v = verify_candidate("act_quant", COMPARE / "act_quant_reciprocal.py", device="cpu", seed=5)
    assert v.accepted, v.reason


def _chain(a: torch.Tensor, b: torch.Tensor, order: range) -> torch.Tensor:
    """a @ b with each output's K products added one after another in fp32, as a GPU GEMM's
    thread does (cuBLAS's SIMT SGEMM, an exact-fp32 tl.dot loop)."""
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in order:
        acc = torch.addcmul(acc, a[:, k : k + 1], b[k : k + 1, :])
    return acc


def _gemm_spec() -> SimpleNamespace:
    from kernelgen.spec import Tolerance

    tol = Tolerance(rtol=1.3e-6, atol=1e-5 * 12)  # fp32's, grown with log2(K = 4096)
    return SimpleNamespace(
        compare=None, tolerance=lambda dtype, dims: tol, data=SimpleNamespace(error_ratio=2.0)
    )


def test_the_tolerance_stretches_to_what_torch_needs_on_its_device_and_no_further() -> None:
    """fp32 at K = 4096: a chained sum puts ~1.5% of its entries past the tree-sum tolerance.
    Where torch's own answer is such a chain (a GPU's), a candidate that chains in another order
    passes, and a wrong tile is still caught; where torch's answer is within the tolerance (the
    CPU's blocked sum), the chained candidate is rejected as before."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(96, 4096, generator=gen), torch.randn(4096, 96, generator=gen)
    ref = a.double() @ b.double()
    gpu_torch = _chain(a, b, range(4096))
    candidate = _chain(a, b, range(4095, -1, -1))
    answers = Answers(_gemm_spec(), "cpu", "cpu")  # type: ignore[arg-type]
    case = SimpleNamespace(name="c", dims={}, dtype="float32")
    tol = _gemm_spec().tolerance("float32", {})
    assert checks.stretch(gpu_torch, ref, tol) > 2.0  # torch's chain itself fails the base
    assert checks.stretch(a @ b, ref, tol) == 1.0  # the CPU's blocked sum does not
    passed = answers.judge_values(candidate, _inputs(a, ref, gpu_torch), case)  # type: ignore[arg-type]
    assert passed.status == "passed"
    wrong_tile = candidate.clone()
    wrong_tile[32:48, 16:32] *= 1.001
    with pytest.raises(Rejected) as caught:
        answers.judge_values(wrong_tile, _inputs(a, ref, gpu_torch), case)  # type: ignore[arg-type]
    assert caught.value.failure.category == "incorrect"
    assert "torch's own answer in float32 needs" in caught.value.failure.reason
    with pytest.raises(Rejected) as caught:
        answers.judge_values(candidate, _inputs(a, ref, a @ b), case)  # type: ignore[arg-type]
    assert "needs" not in caught.value.failure.reason
