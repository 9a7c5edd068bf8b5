"""Every operator against a plain-torch reference written here, evaluated in float64.

On CPU the kernels run through Triton's interpreter, on small cases; on CUDA the same cases run
compiled, plus bf16 and larger shapes.
"""

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import kernelgen_ops
from kernelgen_ops import _runtime

# (rtol, atol) against a float64 reference; the kernels compute in fp32 and round once.
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}


def _ref_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


def _ref_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    xd = x.double()
    return (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + eps) * weight.double()).to(x.dtype)


def _ref_silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    xd = x.double()
    return (F.silu(xd[..., :d]) * xd[..., d:]).to(x.dtype)


def _close(out: torch.Tensor, ref: torch.Tensor) -> None:
    assert type(out) is torch.Tensor
    assert out.shape == ref.shape and out.dtype == ref.dtype and out.device == ref.device
    rtol, atol = TOL[ref.dtype]
    torch.testing.assert_close(out, ref, rtol=rtol, atol=atol, equal_nan=True)


# Odd sizes, no power of two, one row, one element, rank 1 and 3; larger ones on CUDA only.
SHAPES = [(1, 1), (1, 77), (37, 181), (5, 1030), (2, 3, 50), (77,)]
CUDA_SHAPES = [(4096, 4096), (33, 8200)]  # the seeds compile slowly for huge rows


def _shapes() -> list[tuple[int, ...]]:
    return SHAPES + ([] if _runtime.INTERPRET else CUDA_SHAPES)


def _make(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 3).to(dtype=dtype, device=device)


def _layouts(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The same values as contiguous, transposed-then-back (strided rows) and sliced views."""
    out = {"contiguous": x}
    if x.dim() >= 2:
        out["transposed"] = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    wide = torch.cat([x, x], dim=-1)
    out["sliced"] = wide[..., : x.shape[-1]]
    return out


@pytest.mark.parametrize("shape", _shapes(), ids=str)
def test_softmax(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> None:
    for layout, x in _layouts(_make(shape, dtype, device)).items():
        before = x.clone()
        out = kernelgen_ops.softmax(x)
        _close(out, _ref_softmax(x))
        assert torch.equal(x, before), f"{layout}: input changed"


def test_softmax_masked_rows(device: str) -> None:
    # -inf entries (masked attention scores) must give exact zeros; the rest still sums to one.
    x = _make((4, 33), torch.float32, device)
    x[:, ::3] = float("-inf")
    out = kernelgen_ops.softmax(x)
    assert (out[:, ::3] == 0).all()
    _close(out, _ref_softmax(x))


@pytest.mark.parametrize("shape", _shapes(), ids=str)
def test_rms_norm(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> None:
    weight = _make(shape[-1:], dtype, device, seed=1) * 0.1 + 1
    for layout, x in _layouts(_make(shape, dtype, device)).items():
        for eps in (1e-6, 1e-2):
            before = x.clone()
            out = kernelgen_ops.rms_norm(x, weight, eps)
            _close(out, _ref_rms_norm(x, weight, eps))
            assert torch.equal(x, before), f"{layout}: input changed"


def test_rms_norm_default_eps(device: str) -> None:
    x, w = _make((3, 40), torch.float32, device), torch.ones(40, device=device)
    _close(kernelgen_ops.rms_norm(x, w), _ref_rms_norm(x, w, 1e-6))


@pytest.mark.parametrize("shape", _shapes(), ids=str)
def test_silu_and_mul(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> None:
    shape = (*shape[:-1], 2 * shape[-1])
    for layout, x in _layouts(_make(shape, dtype, device)).items():
        before = x.clone()
        out = kernelgen_ops.silu_and_mul(x)
        _close(out, _ref_silu_and_mul(x))
        assert torch.equal(x, before), f"{layout}: input changed"


def test_outputs_are_fresh(device: str) -> None:
    x = _make((8, 64), torch.float32, device)
    w = torch.ones(64, device=device)
    for out in (kernelgen_ops.softmax(x), kernelgen_ops.rms_norm(x, w, 1e-6)):
        assert out.is_contiguous() and out.data_ptr() != x.data_ptr()
    a, b = kernelgen_ops.softmax(x), kernelgen_ops.softmax(x)
    assert a.data_ptr() != b.data_ptr()


def test_empty_rows(device: str) -> None:
    x = torch.empty((0, 16), device=device)
    assert kernelgen_ops.softmax(x).shape == (0, 16)
    assert kernelgen_ops.rms_norm(x, torch.ones(16, device=device), 1e-6).shape == (0, 16)
    assert kernelgen_ops.silu_and_mul(x).shape == (0, 8)


# ------------------------------------------------------------ what the kernels refuse


@pytest.mark.parametrize("dtype_", [torch.float64, torch.int32, torch.bool], ids=str)
def test_unsupported_dtype_is_a_clear_error(dtype_: torch.dtype, device: str) -> None:
    x = torch.ones((2, 8), device=device).to(dtype_)
    for call in (kernelgen_ops.softmax, kernelgen_ops.silu_and_mul):
        with pytest.raises(TypeError, match="float16, bfloat16 and float32"):
            call(x)


def test_bad_shapes_are_clear_errors(device: str) -> None:
    x = torch.ones((4, 6), device=device)
    with pytest.raises(ValueError, match="expected \\(6,\\)"):
        kernelgen_ops.rms_norm(x, torch.ones(5, device=device), 1e-6)
    with pytest.raises(ValueError, match="expected \\(6,\\)"):
        kernelgen_ops.rms_norm(x, torch.ones(1, 6, device=device), 1e-6)
    with pytest.raises(ValueError, match="must be even"):
        kernelgen_ops.silu_and_mul(torch.ones((4, 5), device=device))
    with pytest.raises(ValueError, match="at least one dimension"):
        kernelgen_ops.softmax(torch.tensor(1.0, device=device))
    with pytest.raises(ValueError, match="non-empty last one"):
        kernelgen_ops.softmax(torch.ones((3, 0), device=device))
    with pytest.raises(TypeError, match="must be a tensor"):
        kernelgen_ops.softmax([1.0, 2.0])  # type: ignore[arg-type]


def test_gradients_are_refused_not_dropped(device: str) -> None:
    # The kernels have no backward: a silent detach would train with a wrong (zero) gradient.
    x = _make((2, 8), torch.float32, device).requires_grad_()
    with pytest.raises(RuntimeError, match="no backward"):
        kernelgen_ops.softmax(x)
    with torch.no_grad():
        _close(kernelgen_ops.softmax(x), _ref_softmax(x.detach()))


def test_cpu_tensors_need_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_runtime, "INTERPRET", False)
    with pytest.raises(ValueError, match="run on CUDA"):
        kernelgen_ops.softmax(torch.ones(2, 8))


@pytest.mark.skipif(not _runtime.INTERPRET, reason="bf16 on CPU arises only under the interpreter")
def test_bf16_under_the_interpreter_is_refused() -> None:
    with pytest.raises(TypeError, match="interpreter"):
        kernelgen_ops.softmax(torch.ones(2, 8, dtype=torch.bfloat16))


def test_public_api() -> None:
    manifest = json.loads((Path(kernelgen_ops.__file__).parent / "MANIFEST.json").read_text())
    assert sorted(kernelgen_ops.__all__) == sorted(manifest["ops"])
    info = kernelgen_ops.available()
    assert sorted(info) == sorted(kernelgen_ops.__all__)
    for op, entry in info.items():
        assert entry["op"] == op and len(entry["sha256"]) == 64
        # Unmeasured seeds say so; measured kernels carry their device and speedups.
        assert entry["measured"] == (entry["device"] is not None and entry["speedups"] is not None)
    info["softmax"]["proposer"] = "edited"
    assert kernelgen_ops.available()["softmax"]["proposer"] != "edited"


def _ref_router_gemm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x.double() @ w.double().T


@pytest.mark.skipif(_runtime.INTERPRET or not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("m", [1, 16, 97, 1024])
@pytest.mark.parametrize("x_dtype", [torch.bfloat16, torch.float16])
def test_router_gemm_keeps_fp32_weights(m: int, x_dtype: torch.dtype) -> None:
    """Within the reference's bound, 1e-4 * sqrt(K), of float64: a bf16 copy of w would be 25x
    over it, TF32 4x."""
    g = torch.Generator().manual_seed(m)
    k = 4099
    x = torch.randn(m, k, generator=g).to(dtype=x_dtype, device="cuda")
    w = torch.randn(200, k, generator=g).cuda()
    with torch.no_grad():
        out = kernelgen_ops.router_gemm(x, w)
    assert out.dtype == torch.float32 and out.shape == (m, 200)
    assert float((out.double() - _ref_router_gemm(x, w)).abs().max()) < 1e-4 * k**0.5


def test_router_gemm_refuses_the_interpreter() -> None:
    if not _runtime.INTERPRET:
        pytest.skip("the CPU path exists only under TRITON_INTERPRET=1")
    x, w = torch.randn(3, 64).half(), torch.randn(8, 64)
    with torch.no_grad(), pytest.raises(TypeError, match="interpreter"):
        kernelgen_ops.router_gemm(x, w)


def _paged(
    dtype: torch.dtype, device: str, lens: list[int], hq: int = 4, hkv: int = 2, d: int = 32
):
    """A paged KV cache of 64-token pages, the requests' pages shuffled in the pool and every
    slot that no request owns NaN (a kernel must not read them)."""
    g = torch.Generator().manual_seed(len(lens))
    page = 64
    width = max(-(-n // page) for n in lens) + 1
    owned = sum(-(-n // page) for n in lens)
    pool = torch.randperm(owned + 2, generator=g)
    k = torch.full((owned + 2, page, hkv, d), float("nan"))
    v = torch.full_like(k, float("nan"))
    table = torch.full((len(lens), width), int(pool[-1]), dtype=torch.int32)
    at = 0
    for b, n in enumerate(lens):
        for j in range(-(-n // page)):
            p = int(pool[at])
            at += 1
            table[b, j] = p
            live = min(page, n - j * page)
            k[p, :live] = torch.randn((live, hkv, d), generator=g)
            v[p, :live] = torch.randn((live, hkv, d), generator=g)
    q = torch.randn((len(lens), hq, d), generator=g)
    lens_t = torch.tensor(lens, dtype=torch.int32)
    moved = [t.to(device) for t in (q.to(dtype), k.to(dtype), v.to(dtype), table, lens_t)]
    return (*moved, 0.2)


def _ref_decode_attn(q, k_cache, v_cache, block_table, seq_lens, scale) -> torch.Tensor:
    out = torch.empty(q.shape, dtype=torch.float64)
    group = q.shape[1] // k_cache.shape[2]
    for b, n in enumerate(seq_lens.tolist()):
        pages = block_table[b, : -(-n // k_cache.shape[1])].long().cpu()
        k, v = (c.cpu()[pages].flatten(0, 1)[:n].double() for c in (k_cache, v_cache))
        k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
        s = torch.einsum("hd,thd->ht", q[b].cpu().double(), k) * scale
        out[b] = torch.einsum("ht,thd->hd", torch.softmax(s, dim=-1), v)
    return out


def test_torch_decode_attn_matches_the_reference() -> None:
    """The torch path (taken where the kernel lost) reads only live slots: the dead ones are NaN."""
    from kernelgen_ops import _contracts

    args = _paged(torch.float32, "cpu", [1, 70, 130])
    out = _contracts.torch_decode_attn(*args)
    torch.testing.assert_close(out.double(), _ref_decode_attn(*args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("lens", [[1], [64, 7, 200], [600, 3]])
def test_decode_attn(lens: list[int]) -> None:
    dtype = torch.float16 if _runtime.INTERPRET else torch.bfloat16
    device = "cpu" if _runtime.INTERPRET else "cuda"
    args = _paged(dtype, device, lens)
    with torch.no_grad():
        out = kernelgen_ops.decode_attn(*args)
    _close(out, _ref_decode_attn(*args).to(dtype=dtype, device=device))


def test_decode_attn_refuses_what_was_not_verified() -> None:
    device = "cpu" if _runtime.INTERPRET else "cuda"  # anything else is refused for its device
    q, k, v, table, lens, scale = _paged(torch.float32, device, [5])
    with pytest.raises(ValueError, match="64-token pages"):
        kernelgen_ops.decode_attn(q, k[:, :32], v[:, :32], table, lens, scale)
    with pytest.raises(TypeError, match="int32"):
        kernelgen_ops.decode_attn(q, k, v, table.long(), lens, scale)
    with pytest.raises(ValueError, match="multiple of Hkv"):
        kernelgen_ops.decode_attn(q[:, :3], k, v, table, lens, scale)


def _sylvester64(d: int) -> torch.Tensor:
    """H[i, j] = (-1)^popcount(i & j), from the definition, in float64."""
    i = torch.arange(d)
    bits = i[:, None] & i[None, :]
    parity = torch.zeros_like(bits)
    while bool(bits.any()):
        parity ^= bits & 1
        bits = bits >> 1
    return 1.0 - 2.0 * parity.double()


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 64), (129, 128), (3, 1024), (5, 4096), (2, 3, 256)], ids=str)
def test_hadamard(shape: tuple[int, ...], dtype: torch.dtype) -> None:
    x = _make(shape, dtype, "cuda")
    d = shape[-1]
    with torch.no_grad():
        out = kernelgen_ops.hadamard(x)
    ref = (x.double() @ _sylvester64(d).to("cuda")) * d**-0.5
    _close(out, ref.to(dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("m", [1, 37, 4096])
def test_act_quant(m: int, dtype: torch.dtype) -> None:
    """Scales amax / 448 to fp32 rounding; q * scale within one e4m3 step of x (2^-3 of the
    binade's bottom, 2^-9 among the subnormals below 2^-6, which 4096 rows of normal values
    reach); an all-zero group gives scale 0 and q 0, not NaN."""
    k = 512
    x = _make((m, k), dtype, "cuda") * torch.exp2(torch.arange(k, device="cuda") // 128 - 2.0)
    x[0, 128:256] = 0
    with torch.no_grad():
        q, scale = kernelgen_ops.act_quant(x)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (m, k)
    assert scale.dtype == torch.float32 and scale.shape == (m, k // 128)
    groups = x.double().view(m, k // 128, 128)
    want = (groups.abs().amax(-1) / 448).float()
    torch.testing.assert_close(scale, want, rtol=2**-23, atol=0)
    assert float(scale[0, 1]) == 0.0 and not bool(q.float().isnan().any())
    s = scale.double()[..., None]
    back = q.double().view(m, k // 128, 128) * s
    at = torch.maximum(back.abs(), groups.abs()) / torch.where(s > 0, s, 1.0)
    step = torch.exp2(torch.floor(torch.log2(at.clamp_min(2**-6))) - 3)
    assert bool(((back - groups).abs() <= step * s).all())


def _quantize(x: torch.Tensor, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x (R, K) to e4m3 with one fp32 scale (amax / 448) per `rows` x 128 block."""
    r, k = x.shape
    padded = torch.cat([x, x.new_zeros(-r % rows, k)]).view(-1, rows, k // 128, 128)
    scale = (padded.abs().amax(dim=(1, 3)) / 448).float()
    full = scale.double().repeat_interleave(rows, 0).repeat_interleave(128, 1)[:r]
    return (x.double() / full).to(torch.float8_e4m3fn), scale


@pytest.mark.gpu
@pytest.mark.parametrize(("m", "n", "k"), [(1, 576, 256), (16, 7168, 2048), (333, 200, 1024)])
def test_fp8_gemm(m: int, n: int, k: int) -> None:
    """Against float64 on the dequantized operands, within bf16 rounding of the result plus 2^-5
    of sqrt(sum_k (a_k b_k)^2), the reference's bound; N not a multiple of 128 included."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, k, device="cuda", generator=gen)
    w = torch.randn(n, k, device="cuda", generator=gen) * 2**-6
    a, a_scale = _quantize(x, 1)
    b, b_scale = _quantize(w, 128)
    out = kernelgen_ops.fp8_gemm(a, a_scale, b, b_scale)
    assert out.dtype == torch.bfloat16 and out.shape == (m, n)
    a64 = a.double() * a_scale.double().repeat_interleave(128, 1)
    b64 = b.double() * b_scale.double().repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)
    ref = a64 @ b64.T
    bound = 2**-8 * ref.abs() + 2**-5 * ((a64 * a64) @ (b64 * b64).T).sqrt()
    assert bool(((out.double() - ref).abs() <= bound).all())


def test_fp8_gemm_refuses_what_was_not_verified() -> None:
    a = torch.zeros(4, 200).to(torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="multiple of 128"):
        kernelgen_ops.fp8_gemm(a, torch.ones(4, 2), a, torch.ones(1, 2))
    a = torch.zeros(4, 256).to(torch.float8_e4m3fn)
    with pytest.raises(TypeError, match="a_scale is torch.float16"):
        kernelgen_ops.fp8_gemm(a, torch.ones(4, 2).half(), a, torch.ones(1, 2))
    with pytest.raises(ValueError, match="b_scale has shape"):
        kernelgen_ops.fp8_gemm(a, torch.ones(4, 2), a, torch.ones(2, 2))


def test_kernels_with_bf16_or_fp8_inside_refuse_the_interpreter() -> None:
    if not _runtime.INTERPRET:
        pytest.skip("the CPU path exists only under TRITON_INTERPRET=1")
    with torch.no_grad():
        with pytest.raises(TypeError, match="interpreter"):
            kernelgen_ops.hadamard(torch.randn(3, 64))
        with pytest.raises(TypeError, match="interpreter"):
            kernelgen_ops.act_quant(torch.randn(3, 128))


@pytest.mark.parametrize(
    "b, n, k",
    [(1, 1, 1), (3, 77, 77), (5, 1000, 64), (4, 2048, 1), (2, 40000, 100)],
    ids=lambda v: str(v),
)
def test_topk(b: int, n: int, k: int, device: str) -> None:
    """The chosen values are the k largest, as a multiset (order and ties are free), each index
    once; coarse values make many ties at the k-th. The kernel itself, whatever the dispatch
    table says (40000 columns take its chunked path)."""
    g = torch.Generator().manual_seed(n)
    x = (torch.randn(b, n, generator=g) * 4).round().to(device)
    _runtime.set_dispatch("kernel")
    try:
        with torch.no_grad():
            idx = kernelgen_ops.topk(x, k)
    finally:
        _runtime.set_dispatch("measured")
    assert idx.dtype == torch.int32 and idx.shape == (b, k)
    ids = idx.long().sort(dim=-1).values
    assert bool((ids[:, 1:] != ids[:, :-1]).all()) and 0 <= int(ids.min()) and int(ids.max()) < n
    got = x.gather(-1, ids).sort(dim=-1, descending=True).values
    assert torch.equal(got, x.topk(k, dim=-1).values)


def test_topk_refuses_what_was_not_verified(device: str) -> None:
    x = torch.randn(2, 10, device=device)
    with torch.no_grad():
        with pytest.raises(TypeError, match="float32"):
            kernelgen_ops.topk(x.half(), 3)
        with pytest.raises(ValueError, match=r"k=11"):
            kernelgen_ops.topk(x, 11)
        with pytest.raises(ValueError, match=r"\(B, N\)"):
            kernelgen_ops.topk(x[0], 3)


def _moe_inputs(dtype: torch.dtype, device: str, m: int, e: int, k: int, h: int, i: int) -> list:
    g = torch.Generator().manual_seed(3)
    x = torch.randn((m, h), generator=g)
    w1 = torch.randn((e, 2 * i, h), generator=g) * h**-0.5
    w2 = torch.randn((e, h, i), generator=g) * i**-0.5
    ids = torch.stack([torch.randperm(e, generator=g)[:k] for _ in range(m)]).to(torch.int32)
    weights = torch.softmax(torch.randn((m, k), generator=g), dim=-1)
    moved = [t.to(dtype=dtype, device=device) for t in (x, w1, w2)]
    return [*moved, weights.to(device), ids.to(device)]


def _ref_fused_moe(x, w1, w2, topk_weights, topk_ids) -> torch.Tensor:
    inter = w2.shape[2]
    y = torch.zeros(x.shape, dtype=torch.float64)
    for m in range(x.shape[0]):
        for w, e in zip(topk_weights[m].tolist(), topk_ids[m].tolist(), strict=True):
            h = w1[e].cpu().double() @ x[m].cpu().double()
            y[m] += w * (w2[e].cpu().double() @ (F.silu(h[:inter]) * h[inter:]))
    return y


def test_torch_fused_moe_matches_the_reference() -> None:
    """The torch path (the per-expert loop, taken where the kernel lost), experts left idle."""
    from kernelgen_ops import _contracts

    args = _moe_inputs(torch.float32, "cpu", m=5, e=6, k=2, h=24, i=10)
    out = _contracts.torch_fused_moe(*args)
    torch.testing.assert_close(out.double(), _ref_fused_moe(*args), rtol=1e-5, atol=1e-5)


def test_fused_moe_contract_refuses_what_was_not_verified() -> None:
    from kernelgen_ops import _contracts

    device = "cpu" if _runtime.INTERPRET else "cuda"
    x, w1, w2, tw, ti = _moe_inputs(torch.float16, device, m=3, e=4, k=2, h=16, i=8)
    _contracts.check_fused_moe(x, w1, w2, tw, ti)
    assert _contracts.dims_fused_moe(x, w1, w2, tw, ti) == (3, 4, 16, 8)
    with pytest.raises(TypeError, match="all three bfloat16 or all three float16"):
        _contracts.check_fused_moe(x.float(), w1.float(), w2.float(), tw, ti)
    with pytest.raises(TypeError, match="torch.int32"):
        _contracts.check_fused_moe(x, w1, w2, tw, ti.long())
    with pytest.raises(TypeError, match="torch.float32"):
        _contracts.check_fused_moe(x, w1, w2, tw.half(), ti)
    with pytest.raises(ValueError, match=r"w1 \(E, 2I, H\)"):
        _contracts.check_fused_moe(x, w1[:, :15], w2, tw, ti)
    with pytest.raises(ValueError, match="contiguous"):
        _contracts.check_fused_moe(x, w1.transpose(1, 2).contiguous().transpose(1, 2), w2, tw, ti)
    with pytest.raises(ValueError, match=r"\(M, k\)"):
        _contracts.check_fused_moe(x, w1, w2, tw[:2], ti[:2])


def _sparse_inputs(dtype: torch.dtype, device: str) -> list:
    g = torch.Generator().manual_seed(4)
    t, s, topk, hq, hkv, d = 4, 50, 12, 4, 2, 16
    q, k, v = (torch.randn(shape, generator=g) for shape in ((t, hq, d), (s, hkv, d), (s, hkv, d)))
    indices = torch.full((t, topk), -1, dtype=torch.int32)
    for row, valid in enumerate((12, 5, 0, 1)):  # a full, a partial, an empty and a 1-slot row
        indices[row, :valid] = torch.randperm(s, generator=g)[:valid].to(torch.int32)
    moved = [x.to(dtype=dtype, device=device) for x in (q, k, v)]
    return [*moved, indices.to(device), 0.3]


def _ref_sparse_attn(q, k, v, indices, scale) -> torch.Tensor:
    out = torch.zeros((*q.shape[:2], v.shape[2]), dtype=torch.float64)
    group = q.shape[1] // k.shape[1]
    for t in range(q.shape[0]):
        rows = indices[t][indices[t] >= 0].long().cpu()
        if len(rows) == 0:
            continue
        kk, vv = (x.cpu()[rows].double().repeat_interleave(group, dim=1) for x in (k, v))
        s = torch.einsum("hd,jhd->hj", q[t].cpu().double(), kk) * scale
        out[t] = torch.einsum("hj,jhd->hd", torch.softmax(s, dim=-1), vv)
    return out


@pytest.mark.parametrize("dv", [None, 5], ids=["v_as_wide", "v_narrower"])
def test_torch_sparse_attn_matches_the_reference(dv: int | None) -> None:
    """The torch path (gather + SDPA), an empty row giving zeros, unused rows never read."""
    from kernelgen_ops import _contracts

    q, k, v, indices, scale = _sparse_inputs(torch.float32, "cpu")
    if dv is not None:
        v = v[..., :dv].contiguous()
    used = indices[indices >= 0].long().unique()
    unused = torch.ones(k.shape[0], dtype=torch.bool)
    unused[used] = False
    k[unused], v[unused] = float("nan"), float("nan")  # a kernel must not read them
    out = _contracts.torch_sparse_attn(q, k, v, indices, scale)
    ref = _ref_sparse_attn(q, k, v, indices, scale)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


def test_sparse_attn_contract_refuses_what_was_not_verified() -> None:
    from kernelgen_ops import _contracts

    device = "cpu" if _runtime.INTERPRET else "cuda"
    q, k, v, indices, scale = _sparse_inputs(torch.float16, device)
    _contracts.check_sparse_attn(q, k, v, indices, scale)
    assert _contracts.dims_sparse_attn(q, k, v, indices, scale) == (4, 12)
    with pytest.raises(TypeError, match="one dtype"):
        _contracts.check_sparse_attn(q, k.float(), v, indices, scale)
    with pytest.raises(TypeError, match="int32"):
        _contracts.check_sparse_attn(q, k, v, indices.long(), scale)
    with pytest.raises(ValueError, match="multiple of Hkv"):
        _contracts.check_sparse_attn(q[:, :3], k, v, indices, scale)
    with pytest.raises(ValueError, match=r"\(T, topk\)"):
        _contracts.check_sparse_attn(q, k, v, indices[:3], scale)
    with pytest.raises(ValueError, match="contiguous"):
        _contracts.check_sparse_attn(q, k[::2], v[::2], indices, scale)
    # v wider than k was never drawn by the judge: one line naming what is supported, from the
    # op itself and from its fake (torch.compile's tracing).
    wide = torch.cat([v, v], dim=-1)
    supported = r"supported: v as wide as k or narrower \(Dv <= D\)"
    for call in (
        _contracts.check_sparse_attn,
        _contracts.fake_sparse_attn,
        kernelgen_ops.sparse_attn,
    ):
        with pytest.raises(ValueError, match=supported) as refused:
            call(q, k, wide, indices, scale)
        assert "\n" not in str(refused.value)


def test_fused_moe() -> None:
    """Idle experts, k of E per token, the weighted sum: the kernel against a float64 loop."""
    dtype = torch.float16 if _runtime.INTERPRET else torch.bfloat16
    device = "cpu" if _runtime.INTERPRET else "cuda"
    args = _moe_inputs(dtype, device, m=5, e=6, k=2, h=40, i=24)
    with torch.no_grad():
        out = kernelgen_ops.fused_moe(*args)
    _close(out, _ref_fused_moe(*args).to(dtype=dtype, device=device))


@pytest.mark.parametrize("dv", [None, 5], ids=["v_as_wide", "v_narrower"])
def test_sparse_attn(dv: int | None) -> None:
    """A full, a partial, an empty and a one-slot row, v as wide as k or narrower (MLA's
    576/512 in small): the kernel against a float64 loop, its fake's shape against both."""
    from kernelgen_ops import _contracts

    dtype = torch.float16 if _runtime.INTERPRET else torch.bfloat16
    device = "cpu" if _runtime.INTERPRET else "cuda"
    q, k, v, indices, scale = _sparse_inputs(dtype, device)
    if dv is not None:
        v = v[..., :dv].contiguous()
    args = (q, k, v, indices, scale)
    with torch.no_grad():
        out = kernelgen_ops.sparse_attn(*args)
    ref = _ref_sparse_attn(*args)
    assert out.shape == ref.shape == _contracts.fake_sparse_attn(*args).shape
    _close(out, ref.to(dtype=dtype, device=device))
