"""fp8_gemm's contract: the grid, the block-scaled inputs, the float64 truth and the bound its
compare judges by; the seed accepted on CPU."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from pydantic import ValidationError
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.spec import Case, OpSpec, Size, SpecData, load_spec, resolve_dim
from kernelgen.spec.inputs import case_inputs

ROOT = Path(__file__).resolve().parents[1]
# DeepSeek-V3's weights: its experts' down projection at three M, and at a prefill its gate and
# up projections, the attention's output projection and its q down-projection.
BENCH = {
    (16, 7168, 2048),
    (128, 7168, 2048),
    (4096, 7168, 2048),
    (4096, 4096, 7168),
    (4096, 7168, 16384),
    (4096, 1536, 7168),
}


@pytest.fixture(scope="module")
def spec() -> OpSpec:
    return load_spec("fp8_gemm")


def _dims(case: Case) -> tuple[int, int, int]:
    return case.dims["M"], case.dims["N"], case.dims["K"]


def _inputs(spec: OpSpec, m: int, n: int, k: int, dist: str = "normal", seed: int = 0) -> list:
    size = Size(name="t", dims={"M": m, "N": n, "K": k})
    return spec.make_inputs(size, "float32", dist, torch.Generator().manual_seed(seed))


def _judge(spec: OpSpec, out: torch.Tensor, inputs: list) -> str | None:
    """The judge's call: the output against the float64 reference on the upcast inputs."""
    ref = spec.reference(*(t.double() for t in inputs))
    return spec.judge(out, ref, spec.cases[0], inputs)


def _blockwise(a, a_scale, b, b_scale) -> torch.Tensor:
    """The definition, one 128-wide K block at a time: each block's products summed, then
    scaled by a's row scale and b's block scale (row n // 128)."""
    m, k = a.shape
    n = b.shape[0]
    out = torch.zeros(m, n, dtype=torch.float64)
    rows = torch.arange(n) // 128
    for j in range(k // 128):
        cols = slice(128 * j, 128 * (j + 1))
        block = a[:, cols].double() @ b[:, cols].double().T
        out += block * a_scale[:, j, None].double() * b_scale[rows, j][None, :].double()
    return out


def test_grid(spec: OpSpec) -> None:
    """One nominal dtype (float32); every case on the CPU is small and covers the corners a
    kernel's masks and scale indexing get wrong; the GPU cases hold the bench shapes."""
    assert {c.dtype for c in spec.cases} == {"float32"}
    assert all(c.fixed_dtypes == ("float32",) for c in spec.cases)
    cpu = [_dims(c) for c in spec.cases if c.interpreter]
    assert any(m == 1 for m, _, _ in cpu) and any(m % 2 and m > 1 for m, _, _ in cpu)
    assert any(k == 128 for _, _, k in cpu) and any(k >= 2048 for _, _, k in cpu)
    assert any(n % 64 for _, n, _ in cpu) and any(n % 128 and n > 128 for _, n, _ in cpu)
    assert any(m > 64 for m, _, _ in cpu)  # more than one tile of rows
    assert {c.size.layout for c in spec.cases if c.interpreter} == {"contiguous", "strided"}
    assert all(m * n * k <= 20_000_000 for m, n, k in cpu)
    gpu = {_dims(c) for c in spec.cases if not c.size.interpreter}
    bench = {(b.dims["M"], b.dims["N"], b.dims["K"]) for b in spec.data.bench}
    assert bench == BENCH and bench <= gpu
    assert all(b.dtype == "float32" for b in spec.data.bench)


def test_block_dims_and_fp8_inputs_in_the_spec() -> None:
    """`name/q` is the count of q-wide blocks covering a dim, a partial one included; its dim
    must be a size's."""
    assert resolve_dim("K/128", {"K": 384}) == 3
    assert resolve_dim("N/128", {"N": 200}) == 2
    assert resolve_dim("2*d/128", {"d": 100}) == 2
    raw = {
        "inputs": [
            {"name": "a", "shape": ["M", "K"], "dtype": "float8_e4m3fn"},
            {"name": "s", "shape": ["M", "Q/128"], "dtype": "float32"},
        ],
        "dtypes": ["float32"],
        "dists": ["normal", "uniform"],
        "sizes": [{"name": "x", "dims": {"M": 1, "K": 128}}],
        "bench": [{"name": "x", "dims": {"M": 1, "K": 128}}],
    }
    with pytest.raises(ValidationError, match=r"input 's' needs dim 'Q/128'"):
        SpecData.model_validate(raw)


def test_inputs(spec: OpSpec) -> None:
    """e4m3 a and b with fp32 scales of the declared shapes; every block quantized by amax / 448
    (its largest entry is e4m3's 448), and the blocks' scales spread over powers of two."""
    for case in spec.cases:
        if not case.interpreter:
            continue
        m, n, k = _dims(case)
        a, a_scale, b, b_scale = case_inputs(spec, case, seed=3, device="cpu")
        assert a.dtype == b.dtype == torch.float8_e4m3fn
        assert a_scale.dtype == b_scale.dtype == torch.float32
        assert a_scale.shape == (m, k // 128) and b_scale.shape == (math.ceil(n / 128), k // 128)
        assert b.is_contiguous() and a_scale.is_contiguous() and b_scale.is_contiguous()
        assert bool((a_scale > 0).all() and (b_scale > 0).all())
        amax_a = a.float().abs().view(m, k // 128, 128).amax(-1)
        assert bool((amax_a == 448).all()), case.name
        rows = torch.nn.functional.pad(b.float().abs(), (0, 0, 0, -n % 128))
        amax_b = rows.view(-1, 128, k // 128, 128).amax(dim=(1, 3))
        assert bool((amax_b == 448).all()), case.name
        if case.size.layout == "strided":
            assert a.stride(1) == 1 and a.stride(0) > k
            pad = torch.empty(0, dtype=a.dtype).set_(a.untyped_storage())[k : a.stride(0)]
            assert bool(pad.float().isnan().all())  # a kernel reading past a row reads NaN
        if a_scale.numel() >= 16:
            assert a_scale.max() / a_scale.min() >= 8, case.name


def test_reference_is_the_blockwise_definition(spec: OpSpec) -> None:
    """The float64 reference against the definition summed block by block; torch's own answer
    (the same in fp32, rounded to bf16) that rounded, to within fp32's error."""
    for m, n, k in ((1, 200, 256), (5, 128, 128), (37, 200, 384), (3, 576, 1024)):
        inputs = _inputs(spec, m, n, k)
        want = _blockwise(*inputs)
        got = spec.reference(*(t.double() for t in inputs))
        assert got.dtype == torch.float64 and got.shape == (m, n)
        # Two float64 summation orders: apart by a few 2^-53 of the largest sums, no more.
        torch.testing.assert_close(got, want, rtol=0, atol=1e-13 * float(want.abs().max()))
        native = spec.reference(*inputs)
        assert native.dtype == torch.bfloat16 and native.shape == (m, n)
        # fp32 sums then one bf16 rounding: the float64 answer rounded, but where fp32's error
        # tips a rounding the other way (a few entries), and within the bound everywhere.
        same = native == want.to(torch.bfloat16)
        assert float(same.double().mean()) > 0.98 and _judge(spec, native, inputs) is None


@pytest.mark.parametrize("dist", ["normal", "uniform"])
def test_compare_accepts_the_peer_and_a_rounded_truth(spec: OpSpec, dist: str) -> None:
    """The peer (bf16 operands, one bf16 matmul) and the float64 truth rounded to bf16 are
    within the bound, at a small and a model-sized K."""
    for m, n, k in ((64, 576, 1024), (16, 256, 7168), (200, 1000, 128)):
        inputs = _inputs(spec, m, n, k, dist, seed=m)
        peer = spec.eager(*inputs)
        assert peer.dtype == torch.bfloat16 and peer.shape == (m, n)
        assert _judge(spec, peer, inputs) is None
        truth = spec.reference(*(t.double() for t in inputs))
        assert _judge(spec, truth.to(torch.bfloat16), inputs) is None


def _rescaled(inputs: list, which: int, index: tuple, factor: float) -> list:
    out = [t.clone() for t in inputs]
    out[which][index] *= factor
    return out


@pytest.mark.parametrize(
    ("which", "index", "factor"),
    [
        (1, (slice(None), 1), 2.0),  # a's second K block of every row, off by 2
        (1, (slice(None), slice(1, None)), 0.5),  # a's scales past the first block
        (3, (1, slice(None)), 2.0),  # b's second block row (output columns 128-255)
        (3, (slice(None), 0), 2.0),  # b's first K block, every block row
    ],
)
def test_compare_rejects_off_by_a_scale(
    spec: OpSpec, which: int, index: tuple, factor: float
) -> None:
    """A kernel that reads one scale block for another (here: a block's scale doubled or halved)
    is off by that block's sum, far outside the bound."""
    inputs = _inputs(spec, 37, 200, 384)
    wrong = spec.reference(*_rescaled(inputs, which, index, factor))
    msg = _judge(spec, wrong, inputs)
    assert msg and "entries off" in msg and "> bound" in msg, msg
    off = int(msg.split("; ")[-1].split(" of ")[0])
    assert off > 37 * 200 // 10, msg  # not a few unlucky entries: most of the affected ones


def test_compare_rejects_ignored_scales(spec: OpSpec) -> None:
    """No b scales (only a's), or only b_scale's first row for every column: rejected."""
    inputs = _inputs(spec, 19, 300, 256)
    a, a_scale, b, b_scale = inputs
    for scale in (torch.ones_like(b_scale), b_scale[:1].expand_as(b_scale).contiguous()):
        msg = _judge(spec, spec.reference(a, a_scale, b, scale), inputs)
        assert msg and msg.endswith(f"of {19 * 300} entries off"), msg


def test_compare_rejects_noise_and_reports_the_element(spec: OpSpec) -> None:
    inputs = _inputs(spec, 8, 128, 256)
    out = spec.reference(*(t.double() for t in inputs)).clone()
    out[3, 77] *= 1.25
    msg = _judge(spec, out.to(torch.bfloat16), inputs)
    assert msg and " at [3, 77], expected " in msg, msg
    assert msg.endswith("; 1 of 1024 entries off"), msg


def test_compare_rejects_non_finite(spec: OpSpec) -> None:
    inputs = _inputs(spec, 4, 64, 128)
    out = spec.reference(*inputs).clone()
    out[2, 5] = math.nan
    msg = _judge(spec, out, inputs)
    assert msg and msg.startswith("nan at [2, 5] where ") and "(output never written" in msg
    out[2, 5] = math.inf
    msg = _judge(spec, out, inputs)
    assert msg and msg.startswith("inf at [2, 5]") and "1 of 256 entries not finite" in msg


def test_cost(spec: OpSpec) -> None:
    """a and b once (1 byte an entry), the fp32 scales, the bf16 output once; 2MNK flops."""
    cost = spec.cost({"M": 16, "N": 576, "K": 7168}, "float32")
    scales = (16 * 56 + 5 * 56) * 4
    assert cost.bytes == 16 * 7168 + 576 * 7168 + scales + 16 * 576 * 2
    assert cost.flops == 2 * 16 * 576 * 7168


@pytest.mark.slow
def test_seed_accepted_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kernelgen verify fp8_gemm seeds/fp8_gemm.py --device cpu`: every CPU case passes, the
    GPU-only sizes are reported not run (tests/verify/test_controls.py runs the seed in CI)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KERNELGEN_ROOT", raising=False)
    result = CliRunner().invoke(
        app, ["verify", "fp8_gemm", "seeds/fp8_gemm.py", "--device", "cpu", "--json"]
    )
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.output.strip().splitlines()[-1])
    assert verdict["accepted"] and verdict["kernels"] == ["_fp8_gemm_kernel"]
    spec = load_spec("fp8_gemm")
    cpu = {c.name for c in spec.cases if c.interpreter}
    status = {c["name"]: c["status"] for c in verdict["cases"]}
    assert {n for n, s in status.items() if s == "passed"} == cpu
    assert all(s == "not_run" for n, s in status.items() if n not in cpu)
