"""scripts/peers without a GPU: the arguments each serving peer is called with, built from the
references' own inputs at their CPU sizes and checked by putting the peer's documented layout
back together (FlashInfer's CSR page lists, SGLang's token locations, rowwise fp8 operands,
FlashMLA's latent KV); the peers themselves stand in as fakes that compute what their docs say,
so the binders run end to end and the answer is compared with the reference's."""

import sys
import types
from pathlib import Path

import pytest
import torch

from kernelgen.spec import load_spec
from kernelgen.spec.inputs import make_inputs

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.append(str(SCRIPTS))

import peers  # noqa: E402
from peers import flashinfer as fi_peer  # noqa: E402
from peers import flashmla as mla_peer  # noqa: E402
from peers import scaled_mm as mm_peer  # noqa: E402
from peers import sglang as sgl_peer  # noqa: E402


def _decode_cases():
    spec = load_spec("decode_attn")
    for size in spec.data.sizes:
        if size.interpreter:
            yield spec, size, make_inputs(spec, size, "float32", "normal", 7, "cpu")


def _live_tokens(cache, block_table, b, n):
    """Request b's first n tokens as the reference reads them: block_table[b, t // page]."""
    page = cache.shape[1]
    t = torch.arange(n)
    return cache[block_table[b, t // page].long(), t % page]


def _attention(q, k, v, scale):
    """One request's decode attention over its (n, Hkv, D) tokens, in float64."""
    group = q.shape[0] // k.shape[1]
    k = k.double().repeat_interleave(group, dim=1)
    v = v.double().repeat_interleave(group, dim=1)
    s = torch.einsum("hd,thd->ht", q.double(), k) * scale
    return torch.einsum("ht,thd->hd", torch.softmax(s, -1), v)


def test_the_families_ops_are_their_modules_candidates() -> None:
    # bench_library.py starts a family by FAMILIES' ops without importing its module.
    for group, family in peers.FAMILIES.items():
        module = __import__(f"peers.{group}", fromlist=["CANDIDATES"])
        assert set(module.CANDIDATES) == set(family.ops), group
        assert all(peers.candidates(group, op) for op in family.ops), group


def test_flashinfer_page_lists_hold_each_requests_tokens_in_order() -> None:
    seen = set()
    for _, size, (_, k_cache, _, table, lens, _) in _decode_cases():
        page = k_cache.shape[1]
        seen.add(page)
        indptr, indices, last = fi_peer.paged_indices(table, lens, page)
        assert indptr.dtype == indices.dtype == last.dtype == torch.int32
        for b, n in enumerate(lens.tolist()):
            mine = indices[indptr[b] : indptr[b + 1]].long()
            assert 1 <= int(last[b]) <= page, size.name
            # Whole pages but the last, which holds last[b] tokens: n in all, the reference's.
            tokens = k_cache[mine].flatten(0, 1)[: (len(mine) - 1) * page + int(last[b])]
            assert len(tokens) == n
            assert torch.equal(tokens, _live_tokens(k_cache, table, b, n)), size.name
    assert len(seen) > 1  # the CPU sizes page their caches more than one way


class _FakeFlashInfer:
    """FlashInfer's batch decode as its docs define it: NHD pages, CSR page lists, the last
    page's length; the planned problem kept and run() computing it in float64."""

    def __init__(self) -> None:
        self.planned = None

    def BatchDecodeWithPagedKVCacheWrapper(self, workspace, layout, use_tensor_cores=False):  # noqa: N802
        assert layout == "NHD" and workspace.dtype == torch.uint8
        fake = self

        class Wrapper:
            def plan(self, indptr, indices, last, heads, kv_heads, head_dim, page, **kw):
                fake.planned = (indptr, indices, last, heads, kv_heads, head_dim, page, kw)
                fake.tensor_cores = use_tensor_cores

            def run(self, q, kv):
                indptr, indices, last, heads, kv_heads, _, page, kw = fake.planned
                k_cache, v_cache = kv
                assert q.shape[1] == heads and k_cache.shape[2] == kv_heads
                out = []
                for b in range(q.shape[0]):
                    pages = indices[indptr[b] : indptr[b + 1]].long()
                    n = (len(pages) - 1) * page + int(last[b])
                    k = k_cache[pages].flatten(0, 1)[:n]
                    v = v_cache[pages].flatten(0, 1)[:n]
                    out.append(_attention(q[b], k, v, kw["sm_scale"]))
                return torch.stack(out).to(q.dtype)

        return Wrapper()


def test_flashinfer_binder_plans_the_references_problem(monkeypatch) -> None:
    fake = _FakeFlashInfer()
    monkeypatch.setitem(sys.modules, "flashinfer", fake)
    bind = fi_peer.CANDIDATES["decode_attn"][0][1]()
    for _, size, args in _decode_cases():
        call = bind(args)
        out = call.fn(*call.args)
        ref = load_spec("decode_attn").reference(
            *[a.double() if a.is_floating_point() else a for a in args[:5]], args[5]
        )
        assert call.expected is None  # checked against eager's answer: the same problem
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5, msg=size.name)
        q, k_cache = args[0], args[1]
        assert fake.tensor_cores == (q.shape[1] // k_cache.shape[2] >= 4)
        assert fake.planned[6] == k_cache.shape[1]  # the case's page size is FlashInfer's


def test_sglang_token_locations_are_the_references_tokens() -> None:
    for _, size, (_, k_cache, _, table, lens, _) in _decode_cases():
        page = k_cache.shape[1]
        indptr, indices = sgl_peer.token_indices(table, lens, page)
        assert indptr.dtype == torch.int32 and indices.dtype == torch.int64
        assert int(indptr[-1]) == int(lens.sum())
        for b, n in enumerate(lens.tolist()):
            loc = indices[indptr[b] : indptr[b + 1]]
            # The kernel's page math on the 4-D cache: page loc // page, slot loc % page.
            tokens = k_cache[loc // page, loc % page]
            assert torch.equal(tokens, _live_tokens(k_cache, table, b, n)), size.name


_FAKE_DECODE = """
from sglang.kernels.ops.attention.score_mod import unpack_aux_tensors
from sglang.srt.utils import is_hip
import torch

def decode_attention_fwd(q, k, v, o, indptr, indices, logits, lse, splits, max_splits,
                         sm_scale, k_scale, v_scale, page_size=1):
    assert k.ndim == 4 and k.shape[1] == page_size and not is_hip()
    assert logits.shape[2] == max_splits and int(splits.min()) >= 1
    group = q.shape[1] // k.shape[2]
    for b in range(q.shape[0]):
        loc = indices[indptr[b] : indptr[b + 1]]
        kk = k[loc // page_size, loc % page_size].double().repeat_interleave(group, 1)
        vv = v[loc // page_size, loc % page_size].double().repeat_interleave(group, 1)
        s = torch.einsum("hd,thd->ht", q[b].double(), kk) * sm_scale * k_scale
        o[b] = (torch.einsum("ht,thd->hd", torch.softmax(s, -1), vv) * v_scale).to(o.dtype)
"""

_FAKE_SPLITS = """
class _Kernel:
    def __getitem__(self, grid):
        def launch(splits, seq_lens, num_seq, num_group, heads, kv_heads, max_splits, cores,
                   MAX_NUM_SEQ):
            assert MAX_NUM_SEQ >= num_seq and num_group == 1
            splits.fill_(min(max_splits, 2))
        return launch

get_num_kv_splits_triton = _Kernel()
"""


@pytest.fixture
def fake_sglang(tmp_path, monkeypatch):
    """An installed sglang whose package __init__s fail (the server runtime is not there) and
    whose kernel modules are the three the decode binder loads."""
    root = tmp_path / "sglang"
    attention = root / "kernels" / "ops" / "attention"
    attention.mkdir(parents=True)
    (root / "srt").mkdir()
    for package in (root, root / "kernels", root / "kernels" / "ops", attention, root / "srt"):
        (package / "__init__.py").write_text("raise ImportError('the server runtime')\n")
    (root / "srt" / "utils.py").write_text("raise ImportError('orjson, pybase64, starlette')\n")
    (attention / "score_mod.py").write_text("def unpack_aux_tensors(*a):\n    return None\n")
    (attention / "metadata.py").write_text(_FAKE_SPLITS)
    (attention / "decode_attention.py").write_text(_FAKE_DECODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda d: types.SimpleNamespace(multi_processor_count=132),
    )
    return root


def test_sglang_decode_kernel_loads_alone_and_computes_the_references_problem(fake_sglang):
    before = set(sys.modules)
    bind = sgl_peer.CANDIDATES["decode_attn"][0][1]()
    # The stand-in packages are gone again: a later `import sglang` meets the real ones.
    assert not {m for m in set(sys.modules) - before if m.startswith("sglang")}
    spec = load_spec("decode_attn")
    for _, size, args in _decode_cases():
        call = bind(args)
        out = call.fn(*call.args)
        ref = spec.reference(
            *[a.double() if a.is_floating_point() else a for a in args[:5]], args[5]
        )
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5, msg=size.name)


def test_sglang_without_the_package_says_so(monkeypatch) -> None:
    monkeypatch.setattr(sgl_peer.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="sglang"):
        sgl_peer.CANDIDATES["decode_attn"][0][1]()


def test_rowwise_requantization_keeps_each_row_within_e4m3s_rounding() -> None:
    x = (
        torch.randn(7, 256, dtype=torch.float64)
        * torch.logspace(-3, 3, 7, dtype=torch.float64)[:, None]
    )
    codes, scale = mm_peer.rowwise(x)
    assert codes.dtype == torch.float8_e4m3fn and scale.shape == (7, 1)
    back = codes.double() * scale.double()
    # e4m3 keeps 3 mantissa bits: half a step is 2^-4 of a value (subnormals aside, an absolute
    # 2^-10 of the row's scale), and each row's largest entry lands on 448.
    assert ((back - x).abs() <= x.abs() * 2**-4 + scale.double() * 2**-9).all()
    assert torch.equal(codes.double().abs().amax(1), torch.full((7,), 448.0, dtype=torch.float64))


def test_scaled_mm_binder_times_rowwise_operands_and_checks_its_own_answer() -> None:
    spec = load_spec("fp8_gemm")
    size = next(s for s in spec.data.sizes if s.interpreter and s.dims["M"] > 1)
    args = make_inputs(spec, size, "bfloat16", "normal", 3, "cpu")
    call = mm_peer.CANDIDATES["fp8_gemm"][0][1]()(args)
    a_row, s_a, b_row, s_b = call.args
    m, n = size.dims["M"], size.dims["N"]
    assert a_row.dtype == b_row.dtype == torch.float8_e4m3fn
    assert s_a.shape == (m, 1) and s_b.shape == (1, n) and s_b.is_contiguous()
    assert call.note.startswith("block scales ")  # refused, or ran: the record says which
    # Its own problem's answer is the block-scaled one up to the requantization: e4m3's half
    # step, 2^-4 of each product at most, about 3% of the output's norm on these sizes.
    eager = spec.eager(*args).double()
    assert call.expected.dtype == torch.bfloat16 and call.expected.shape == (m, n)
    assert (call.expected.double() - eager).norm() < 0.08 * eager.norm()


def _mla_inputs(t=2, s=12, heads=64, topk=5):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(t, heads, 576, generator=gen).bfloat16()
    k = torch.randn(s, 1, 576, generator=gen).bfloat16()
    v = torch.randn(s, 1, 512, generator=gen).bfloat16()
    indices = torch.stack([torch.randperm(s, generator=gen)[:topk] for _ in range(t)]).int()
    indices[1, 3:] = -1  # a row with fewer candidates: its unused slots last
    return [q, k, v, indices, 576**-0.5]


def test_flashmla_refuses_all_but_mlas_shapes() -> None:
    spec = load_spec("sparse_attn")
    for bench in spec.data.bench:
        d = bench.dims
        why = mla_peer.refusal(
            (d["T"], d["Hq"], d["D"]),
            (d["S"], d["Hkv"], d["D"]),
            (d["S"], d["Hkv"], d.get("Dv", d["D"])),
        )
        mla = (
            d["Hkv"] == 1
            and d["D"] in (512, 576)
            and d.get("Dv", d["D"]) == 512
            and d["Hq"] in (64, 128)
        )
        assert (why is None) == mla, bench.name
    why = mla_peer.refusal((64, 32, 128), (65536, 8, 128), (65536, 8, 128))
    assert "8 KV heads" in why and "q/k dim 128" in why and "v dim 128" in why


def test_flashmla_binder_passes_the_latent_kv_and_checks_against_v_from_it(monkeypatch):
    calls = []

    def sparse_fwd(q, kv, indices, sm_scale, d_v=512, use_legacy=False, return_log2_lse=None):
        # FlashMLA's docs: kv (s_kv, h_kv, d_qk), indices (s_q, h_kv, topk), V = kv[..., :d_v].
        assert kv.shape[1] == 1 and indices.shape == (q.shape[0], 1, indices.shape[2])
        calls.append(use_legacy)
        out = spec.reference(
            q.double(), kv.double(), kv[..., :d_v].double(), indices[:, 0], sm_scale
        )
        return out.to(q.dtype), None, None

    spec = load_spec("sparse_attn")
    monkeypatch.setitem(
        sys.modules, "flash_mla", types.SimpleNamespace(flash_mla_sparse_fwd=sparse_fwd)
    )
    args = _mla_inputs()
    call = mla_peer.CANDIDATES["sparse_attn"][0][1]()(args)
    out = call.fn(*call.args)
    assert calls == [True]  # the SM90 kernels are the wheel's legacy half
    assert "k[..., :512]" in call.note
    torch.testing.assert_close(out.float(), call.expected.float(), rtol=2e-2, atol=2e-2)
    # Not the case's own v: against eager with it the answers differ.
    assert not torch.allclose(spec.eager(*args).float(), call.expected.float(), atol=1e-2)
    with pytest.raises(ValueError, match="refuses"):
        call = mla_peer.CANDIDATES["sparse_attn"][0][1]()(
            [args[0][:, :32], args[1], args[2], args[3], args[4]]
        )


def test_pth_files_of_a_target_install_are_read(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site"
    inner = site / "nvidia_cutlass_dsl" / "dsl_packages"
    inner.mkdir(parents=True)
    (site / "nvidia_cutlass_dsl_packages.pth").write_text(str(inner) + "\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    assert str(inner) not in sys.path
    assert str(site) in peers.add_pth_dirs()
    assert str(inner) in sys.path
