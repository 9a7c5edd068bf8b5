"""sparse_attn's contract: the grid, the inputs' invariants, the truth, and the rule compare judges
by (the default one, plus zeros for a token that selects nothing)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen.cli import app
from kernelgen.spec import BenchShape, Case, OpSpec, load_spec
from kernelgen.spec.draw import drawn_cases
from kernelgen.spec.inputs import case_inputs, make_inputs

ROOT = Path(__file__).resolve().parents[1]
BLOCK = 64  # the seed's slots per step (seeds/sparse_attn.py DEFAULT_CONFIG)
TILE = 8192  # the most values of one of the seed's k or v tiles (seeds/sparse_attn.py TILE)
MLA = {"Hkv": 1, "D": 576, "Dv": 512}  # DeepSeek's sparse MLA (V3.2)


@pytest.fixture(scope="module")
def spec() -> OpSpec:
    return load_spec("sparse_attn")


def _case(spec: OpSpec, name: str) -> Case:
    return next(c for c in spec.cases if c.name == name)


def _truth(spec: OpSpec, args: list) -> torch.Tensor:
    up = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
    return spec.reference(*up)


def _shape(d: dict[str, int]) -> tuple[int, ...]:
    return tuple(d[k] for k in ("T", "S", "topk", "Hq", "Hkv", "D", "Dv"))


def _seed_block(d: dict[str, int]) -> int:
    """The seed's slots per step at these dims: BLOCK, fewer where the head dims are wide."""
    widest = max(1 << (d["D"] - 1).bit_length(), 1 << (d["Dv"] - 1).bit_length())
    return min(BLOCK, TILE // widest)


def test_grid(spec: OpSpec) -> None:
    assert {c.dtype for c in spec.cases} == {"bfloat16", "float16", "float32"}
    cpu = [c for c in spec.cases if c.interpreter]
    assert {c.dtype for c in cpu} == {"float16", "float32"}
    dims = [c.dims for c in cpu]
    # One decode token; topk a whole block and not; a context shorter than topk; padded rows
    # (an empty, a full and a partial one need T >= 3); one latent KV head under several query
    # heads, GQA with several KV heads, one query head per KV head; a head dim no power of two;
    # v as wide as q and k, and narrower, at MLA's own 576 and 512 among them (in fp32 too, the
    # dtype whose tiles take the most shared memory when the CPU verdict compiles for sm_90).
    assert any(d["T"] == 1 for d in dims)
    assert {d["topk"] % BLOCK == 0 for d in dims} == {True, False}
    assert any(d["topk"] > d["S"] for d in dims)
    assert any(d["padded"] and d["T"] >= 3 for d in dims)
    assert any(d["Hkv"] == 1 < d["Hq"] for d in dims)
    assert any(1 < d["Hkv"] < d["Hq"] for d in dims)
    assert any(d["Hq"] == d["Hkv"] for d in dims)
    assert any(d["D"] & (d["D"] - 1) for d in dims)
    assert any(d["Dv"] == d["D"] for d in dims) and any(d["Dv"] < d["D"] for d in dims)
    assert any(d["Dv"] & (d["Dv"] - 1) for d in dims)
    assert {c.dtype for c in cpu if {k: c.dims[k] for k in MLA} == MLA} == {"float16", "float32"}
    assert {c.size.layout for c in cpu} == {"contiguous", "strided", "transposed"}
    assert {"wide", "specials"} <= {c.dist for c in cpu}
    # Interpreter time: a program per (token, query head), ~10 ms per block of slots it walks.
    work = {
        c.size.name: c.dims["T"] * c.dims["Hq"] * -(-c.dims["topk"] // _seed_block(c.dims))
        for c in cpu
    }
    assert max(work.values()) <= 40 and sum(work.values()) <= 140, work
    gpu = [c for c in spec.cases if not c.size.interpreter]
    bench = {b.name: _shape(b.dims) for b in spec.data.bench}
    mla = (MLA["Hkv"], MLA["D"], MLA["Dv"])
    # DeepSeek-V3.2 at 128K: a decode token, 64 of them, a prefill; 64 and 128 query heads.
    assert bench == {
        "dsv32_decode_h128": (1, 131072, 2048, 128, *mla),
        "dsv32_batch64_h64": (64, 131072, 2048, 64, *mla),
        "dsv32_batch64_h128": (64, 131072, 2048, 128, *mla),
        "dsv32_prefill_h128": (2048, 131072, 2048, 128, *mla),
        "gqa_64x64K": (64, 65536, 2048, 32, 8, 128, 128),
    }
    # Every bench shape is a correctness size of its own name.
    assert all(bench[n] in {_shape(c.dims) for c in gpu if c.size.name == n} for n in bench)
    assert all(b.dtype == "bfloat16" and not b.dims["padded"] for b in spec.data.bench)
    # Every GPU size at MLA's dims is named by its model; one GQA size keeps v as wide as k.
    for c in gpu:
        at_mla = {k: c.dims[k] for k in MLA} == MLA
        assert at_mla == c.size.name.startswith("dsv32_"), c.size.name
        assert at_mla or (c.dims["D"] == c.dims["Dv"] == 128 and c.dims["Hkv"] > 1), c.name
    assert {c.dims["Hq"] for c in gpu if c.size.name.startswith("dsv32_")} == {16, 64, 128}
    assert max(c.dims["T"] for c in gpu) > 4 * 132  # past a persistent grid of 4 per SM
    assert any(c.dims["padded"] and c.dims["topk"] > c.dims["S"] for c in gpu)


def _check_invariants(args: list, dims: dict[str, int], padded: bool, finite: bool) -> None:
    """What make_inputs promises (references/sparse_attn.py), for one draw."""
    q, k, v, indices, _ = args
    t, s, topk, hkv = (dims[x] for x in ("T", "S", "topk", "Hkv"))
    assert k.shape == (s, hkv, dims["D"]) and v.shape == (s, hkv, dims["Dv"])
    n = min(topk, s)
    assert indices.dtype == torch.int32 and tuple(indices.shape) == (t, topk)
    assert int(indices.min()) >= -1 and int(indices.max()) < s
    valid = indices >= 0
    assert not bool((valid[:, 1:] & ~valid[:, :-1]).any())  # the -1 slots come last
    # Distinct: each -1 slot stands in as a negative number of its own before the sort.
    slots = torch.arange(topk, dtype=torch.int32)
    ranked = torch.where(valid, indices, -2 - slots).sort(dim=-1).values
    assert not bool((ranked[:, 1:] == ranked[:, :-1]).any())
    counts = valid.sum(dim=-1).tolist()
    if padded:
        assert 0 in counts and (t < 2 or n in counts) and all(c <= n for c in counts)
    else:
        assert counts == [n] * t
    used = torch.zeros(s, dtype=torch.bool)
    used[indices[indices >= 0].long()] = True
    for x in (k, v):
        d = x.shape[2]
        assert x.is_contiguous() and x.storage_offset() == hkv * d
        pool = torch.as_strided(x, (s + 2, hkv, d), x.stride(), 0)  # the storage under x
        assert bool(pool[0].isnan().all() and pool[-1].isnan().all())
        assert bool(x[~used].isnan().all())
        assert bool(x[used].isfinite().all()) == finite
    assert q.dtype == k.dtype == v.dtype


@pytest.mark.parametrize("seed", range(2))
def test_inputs(spec: OpSpec, seed: int) -> None:
    """Valid indices distinct and first in each row, -1 after them, an empty and a full row in
    every padded size; NaN in every row of k and v no token selects and in the storage rows
    around them; finite selected rows except under `specials`; scale drawn from its range."""
    lo, hi = spec.module.SPEC["inputs"][-1]["draw"]
    for case in (c for c in spec.cases if c.interpreter):
        args = case_inputs(spec, case, seed, "cpu")
        padded = bool(case.dims["padded"])
        _check_invariants(args, case.dims, padded, finite=case.dist != "specials")
        assert lo <= args[4] <= hi, case.name
        assert args[0].is_contiguous() == (case.size.layout == "contiguous"), case.name


def test_bench_inputs(spec: OpSpec) -> None:
    """Bench shapes: full rows, the model's scale, q contiguous, and as many distinct rows as
    cost() counts (drawn with S = 4096, 2 heads and D = Dv = 2 to stay small)."""
    for shape in spec.data.bench:
        dims = {**shape.dims, "S": 4096, "Hq": 2, "Hkv": 1, "D": 2, "Dv": 2}
        small = BenchShape(name=shape.name, dims=dims)
        args = make_inputs(spec, small, "bfloat16", "normal", 0, "cpu")
        _check_invariants(args, dims, padded=False, finite=True)
        assert args[4] == 128**-0.5 and args[0].is_contiguous()
        distinct = int(torch.unique(args[3]).numel())
        assert abs(distinct - spec.module.distinct_rows(dims)) <= 0.01 * distinct, shape.name


def _loop(q, k, v, indices, scale) -> torch.Tensor:
    """Attention one (token, head) at a time over the valid slots, max-subtracted exp."""
    t, hq, _ = q.shape
    group = hq // k.shape[1]
    out = torch.zeros(t, hq, v.shape[2], dtype=torch.float64)
    for i in range(t):
        rows = [r for r in indices[i].tolist() if r >= 0]
        for h in range(hq):
            if not rows:
                continue
            keys, vals = k[rows, h // group].double(), v[rows, h // group].double()
            s = [scale * float(q[i, h].double() @ key) for key in keys]
            w = torch.tensor([math.exp(x - max(s)) for x in s], dtype=torch.float64)
            out[i, h] = (w[:, None] * vals).sum(0) / w.sum()
    return out


@pytest.mark.parametrize(
    "name",
    [
        "latent_head/float16/normal",
        "gqa_strided/float16/uniform",
        "short_context/float16/uniform",
        "dsv32_mla_dims/float32/normal",
    ],
)
def test_reference_is_the_loop(spec: OpSpec, name: str) -> None:
    """The float64 truth against a per-head loop over the valid slots: the same to float64
    rounding, zeros for an empty row, and no NaN from the rows it must not read."""
    case = _case(spec, name)
    args = case_inputs(spec, case, 0, "cpu")
    ref = _truth(spec, args)
    assert ref.dtype == torch.float64 and bool(ref.isfinite().all())
    torch.testing.assert_close(ref, _loop(*args), rtol=1e-12, atol=1e-12)
    empty = ~(args[3] >= 0).any(-1)
    assert bool(empty.any()) and bool((ref[empty] == 0).all())


@pytest.mark.parametrize("seed", range(2))
def test_compare_accepts_torch_on_every_cpu_case(spec: OpSpec, seed: int) -> None:
    """The reference in the case dtype (fp32 math rounded once) and the SDPA peer both pass the
    judge's rule, bf16 cases included; and each passes against the other, as the bench's
    re-check and the call-to-call agreement compare two rounded answers."""
    for case in (c for c in spec.cases if c.size.interpreter):
        args = case_inputs(spec, case, seed, "cpu")
        ref = _truth(spec, args)
        native, peer = spec.reference(*args), spec.eager(*args)
        assert native.dtype == peer.dtype == args[0].dtype
        for out in (native, peer):
            assert spec.judge(out, ref, case, args) is None, case.name
        assert spec.judge(peer, native, case, args) is None, case.name


def test_compare_rejects_a_nonzero_empty_row(spec: OpSpec) -> None:
    case = _case(spec, "latent_head/float16/normal")
    args = case_inputs(spec, case, 0, "cpu")
    out = spec.reference(*args)
    t = int((~(args[3] >= 0).any(-1)).nonzero()[0])
    out[t, 1, 3] = math.nan
    msg = spec.judge(out, _truth(spec, args), case, args)
    assert msg and msg.startswith(f"NaN at [{t}, 1, 3], in the output of token {t}, which ")
    assert "selects no KV position" in msg and "1 such entries, in 1 of 1 empty rows" in msg


def test_compare_judges_the_selecting_rows_first(spec: OpSpec) -> None:
    """A kernel wrong in a row that selects something is told that, whatever its empty rows."""
    case = _case(spec, "latent_head/float16/normal")
    args = case_inputs(spec, case, 0, "cpu")
    out = spec.reference(*args)
    empty = ~(args[3] >= 0).any(-1)
    out[empty] = math.nan
    t = int((~empty).nonzero()[0])
    out[t, 0, 0] += 0.25
    msg = spec.judge(out, _truth(spec, args), case, args)
    assert msg and msg.startswith(f"{float(out[t, 0, 0]):.6g} at [{t}, 0, 0], reference ")
    assert "1 of " in msg and "entries off" in msg


def test_compare_keeps_the_error_ratio(spec: OpSpec) -> None:
    """fp16 outputs each within the fp16 tolerance but biased by 6e-4 of themselves: twice
    torch's mean error and more, which the default rule calls lower precision."""
    case = _case(spec, "latent_head/float16/normal")
    args = case_inputs(spec, case, 0, "cpu")
    ref = _truth(spec, args)
    out = (ref * (1 + 6e-4)).half()
    msg = spec.judge(out, ref, case, args)
    assert msg and "computed in lower precision?" in msg


def test_cost(spec: OpSpec) -> None:
    """q (D) and out (Dv) once, 4 bytes per index, the distinct KV rows once, D + Dv wide;
    2D + 2Dv + 5 flops per valid slot and query head, Dv per output row."""
    one = next(b for b in spec.data.bench if b.name == "dsv32_decode_h128")
    cost = spec.cost(one.dims, "bfloat16")
    assert cost.bytes == 128 * (576 + 512) * 2 + 2048 * 4 + 2048 * (576 + 512) * 2
    assert cost.flops == 2048 * 128 * (2 * 576 + 2 * 512 + 5) + 128 * 512
    gqa = next(b for b in spec.data.bench if b.name == "gqa_64x64K")
    rows = spec.module.distinct_rows(gqa.dims)
    cost = spec.cost(gqa.dims, "bfloat16")
    assert cost.bytes == 2 * 64 * 32 * 128 * 2 + 64 * 2048 * 4 + rows * 8 * 128 * 2 * 2
    rows = {b.name: spec.module.distinct_rows(b.dims) for b in spec.data.bench}
    assert rows["dsv32_prefill_h128"] == 131072
    assert rows["dsv32_batch64_h64"] == round(131072 * (1 - (1 - 2048 / 131072) ** 64))
    short = {"T": 3, "S": 40, "topk": 80, "Hq": 2, "Hkv": 1, "D": 16, "Dv": 16}
    assert spec.module.distinct_rows(short) == 40


def test_reference_attends_in_steps_of_tokens(
    spec: OpSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference bounds its gathered rows by attending TOKENS_PER_STEP tokens at a time:
    in steps of 2 over 5 tokens (the last step short, an empty row among them) it is still
    the per-head loop."""
    monkeypatch.setattr(spec.module, "TOKENS_PER_STEP", 2)
    case = _case(spec, "short_context/float16/uniform")
    args = case_inputs(spec, case, 0, "cpu")
    assert args[0].shape[0] == 5
    torch.testing.assert_close(_truth(spec, args), _loop(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_verify_accepts_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI verdict on the seed (~10 s; test_controls runs the same seed through the API)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KERNELGEN_ROOT", raising=False)
    result = CliRunner().invoke(
        app, ["verify", "sparse_attn", "seeds/sparse_attn.py", "--device", "cpu"]
    )
    assert result.exit_code == 0, result.output
    assert "ACCEPTED" in result.output and "not run on CPU" in result.output


def test_drawn_v_is_at_most_as_wide_as_k(spec: OpSpec) -> None:
    """The domain draws v's head dim at most q's and k's: as wide (GQA, MHA) and narrower (MLA),
    and on CUDA head dims past 256 up to MLA's 576."""
    for device in ("cpu", "cuda"):
        dims = [c.dims for seed in range(10) for c in drawn_cases(spec, seed, device)]
        assert all(d["Dv"] <= d["D"] for d in dims), device
        assert any(d["Dv"] == d["D"] for d in dims) and any(d["Dv"] < d["D"] for d in dims)
        top = max(d["D"] for d in dims)
        assert top <= 64 if device == "cpu" else 256 < top <= 576, (device, top)


@pytest.mark.parametrize(
    "name",
    ["latent_head/float16/normal", "gqa_strided/float16/uniform", "short_context/float16/uniform"],
)
def test_limit_rows_is_the_whole_call_at_the_rows(spec: OpSpec, name: str) -> None:
    """A limit case's sampled call (limit_rows): the reference on the chosen tokens alone, with
    only the KV rows they select, is the whole call's at them, in float64 and in the case dtype,
    padded and empty rows (-1 slots) included; and a choice of only the empty token, which
    selects no row, gives its zeros."""
    args = case_inputs(spec, _case(spec, name), 0, "cpu")
    empty = int((~(args[3] >= 0).any(-1)).nonzero()[0])
    rows = torch.tensor(sorted({0, empty, args[0].shape[0] - 1}))
    call = spec.module.limit_rows(args, rows)
    kept = args[3][rows][args[3][rows] >= 0].unique()
    assert call[1].shape[0] == kept.numel() <= args[1].shape[0]  # a short context: all of S
    assert torch.equal((call[3] >= 0), (args[3][rows] >= 0))
    assert torch.equal(_truth(spec, call), _truth(spec, args)[rows])
    assert torch.equal(spec.reference(*call), spec.reference(*args)[rows])
    alone = spec.module.limit_rows(args, torch.tensor([empty]))
    assert alone[1].shape[0] == 1 and bool((alone[3] == -1).all())
    assert bool((_truth(spec, alone) == 0).all())
