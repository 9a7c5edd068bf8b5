"""What of bench/ runs without a GPU: request validation, the device check, the ceilings cache,
compile facts, saving records, and the worker's flow with the GPU steps faked (the timing
protocol itself: test_timing.py; the peer cache: test_peers.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from pydantic import ValidationError

from kernelgen.bench import bench_files, save_bench, timing, tune_variants
from kernelgen.bench.ceilings import cache_path, load_cached
from kernelgen.bench.worker import BenchRequest, TuneRequest, compile_facts, select_shapes
from kernelgen.errors import NoDeviceError, UsageError
from kernelgen.records import BenchRecord, Ceilings, Environment
from kernelgen.spec import BenchShape, OpSpec, load_module, load_spec

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seeds" / "softmax.py"
# Two of softmax's bench shapes: a decode step over a 32K vocabulary, 16 rows of a 152K one.
DECODE = "mixtral_8x7b_1x32000"
VOCAB = "qwen3_8b_16x151936"
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KERNELGEN_ROOT", raising=False)


@no_cuda
def test_bench_files_needs_a_gpu() -> None:
    with pytest.raises(NoDeviceError, match="no CUDA device: kernelgen bench needs a GPU"):
        bench_files("softmax", [("seed", SEED)])
    assert NoDeviceError("x").exit_code == 2


@no_cuda
def test_tune_variants_needs_a_gpu() -> None:
    with pytest.raises(NoDeviceError):
        tune_variants("softmax", [SEED.read_text()], shapes=["4096x4096"])


def test_bad_requests_are_usage_errors_before_the_device_check() -> None:
    with pytest.raises(UsageError, match="no bench shape 'nope'; known: 4096x4096"):
        bench_files("softmax", [("seed", SEED)], shapes=["nope"])
    with pytest.raises(UsageError, match="no such file"):
        bench_files("softmax", [("seed", ROOT / "seeds" / "missing.py")])
    with pytest.raises(UsageError, match="duplicate labels"):
        bench_files("softmax", [("a", SEED), ("a", SEED)])
    with pytest.raises(UsageError, match="unknown operator"):
        bench_files("no_such_op", [("seed", SEED)])


def _req(**kw: object) -> dict:
    base = {"op": "softmax", "root": str(ROOT), "contenders": [{"label": "seed", "path": "s.py"}]}
    return {**base, **kw}


def test_bench_request_validation() -> None:
    req = BenchRequest.model_validate(_req())
    assert req.peers and req.cached_peers is None and req.shapes is None
    assert req.rounds == timing.ROUNDS
    with pytest.raises(ValidationError, match="reserved for the peers"):
        BenchRequest.model_validate(_req(contenders=[{"label": "eager", "path": "a.py"}]))
    with pytest.raises(ValidationError, match="duplicate labels"):
        BenchRequest.model_validate(
            _req(contenders=[{"label": "a", "path": "a.py"}, {"label": "a", "path": "b.py"}])
        )
    with pytest.raises(ValidationError):
        BenchRequest.model_validate(_req(contenders=[]))
    with pytest.raises(ValidationError, match="Extra inputs"):
        BenchRequest.model_validate(_req(warmup=3))
    with pytest.raises(ValidationError):
        BenchRequest.model_validate(_req(rounds=0))
    with pytest.raises(ValidationError, match="one per source"):
        TuneRequest(op="softmax", root=".", sources=["a", "b"], indices=[0])
    with pytest.raises(ValidationError, match="baseline: 7 is not one"):
        TuneRequest(op="softmax", root=".", sources=["a", "b"], indices=[3, 4], baseline=7)
    assert TuneRequest(op="softmax", root=".", sources=["a"], baseline=0).numbers == [0]


def test_select_shapes_keeps_the_spec_order() -> None:
    spec = load_spec("softmax")
    assert [s.name for s in select_shapes(spec, None)] == [s.name for s in spec.data.bench]
    picked = select_shapes(spec, [DECODE, "4096x4096"])
    assert [s.name for s in picked] == ["4096x4096", DECODE]


def _ceilings(gpu: str = "NVIDIA H200") -> Ceilings:
    return Ceilings(
        gpu=gpu, copy_gbps=4270.0, bf16_tflops=712.0, launch_us=2.5,
        measured="2026-11-30T00:00:00+00:00", torch="2.11.0+cu130", triton="3.6.0",
    )  # fmt: skip


def test_ceilings_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELGEN_CACHE", str(tmp_path))
    path = cache_path("NVIDIA H200 NVL (x/2)", "2.11.0+cu130", "3.6.0")
    assert path == tmp_path / "ceilings-NVIDIA_H200_NVL_x_2-torch2.11.0_cu130-triton3.6.0.json"
    assert load_cached(path) is None
    path.write_text("{not json")
    assert load_cached(path) is None
    path.write_text(_ceilings().model_dump_json())
    assert load_cached(path) == _ceilings()


_KERNELS = """
import triton
import triton.language as tl


@triton.jit
def _helper(x):
    return x


@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=[])
@triton.heuristics({"B": lambda args: 4})
@triton.jit
def _tuned_kernel(x_ptr, B: tl.constexpr):
    pass


@triton.jit
def _plain_kernel(x_ptr):
    pass


def op(x):
    return x
"""


def test_compile_facts_reads_the_compiled_kernels(tmp_path: Path) -> None:
    from triton.runtime.jit import JITFunction

    (tmp_path / "cand.py").write_text(_KERNELS)
    module = load_module(tmp_path / "cand.py", "kernelgen_test_compile_facts")
    tuned = module._tuned_kernel.fn.fn
    if not isinstance(tuned, JITFunction):
        pytest.skip("triton.jit runs interpreted here (TRITON_INTERPRET=1)")
    assert compile_facts(module) == []  # nothing compiled yet
    meta = SimpleNamespace(shared=16384, num_warps=8, num_stages=3)
    tuned.device_caches[0] = ({"k1": SimpleNamespace(n_regs=96, n_spills=4, metadata=meta)},)
    plain = SimpleNamespace(metadata=SimpleNamespace(shared=0, num_warps=4, num_stages=3))
    future = SimpleNamespace(result=lambda: plain)  # async compile: a future, loaded lazily
    module._plain_kernel.device_caches[0] = ({"k2": future},)
    facts = {f.kernel: f for f in compile_facts(module)}
    assert set(facts) == {"_tuned_kernel", "_plain_kernel"}
    t = facts["_tuned_kernel"]
    assert (t.registers, t.spills, t.shared_bytes, t.num_warps, t.num_stages) == (
        96,
        4,
        16384,
        8,
        3,
    )
    p = facts["_plain_kernel"]
    assert p.registers is None and p.shared_bytes == 0  # not loaded yet: no register count


_LAUNCHER = """
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def softmax(x):
    y = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(x.numel(), 128),)](y, x, x.numel(), BLOCK=128)
    return y
"""


def test_as_shipped_launches_a_candidate_as_the_library_does(tmp_path: Path) -> None:
    """The bench times a contender's host path as kernelgen_ops would ship it: its kernels lean,
    its launcher replaying plans; compile_facts still finds the kernels under the lean ones."""
    from triton.runtime.jit import JITFunction

    from kernelgen.bench.worker import as_shipped

    (tmp_path / "cand.py").write_text(_LAUNCHER)
    module = load_module(tmp_path / "cand.py", "kernelgen_test_as_shipped")
    if not isinstance(module._copy_kernel, JITFunction):
        pytest.skip("triton.jit runs interpreted here (TRITON_INTERPRET=1)")
    from kernelgen_ops import _launch, _plans

    if not _launch.ACTIVE:
        pytest.skip("lean launches are off on this Triton")
    fn = module.softmax
    shipped = as_shipped(module, fn, "softmax")
    assert isinstance(module._copy_kernel, _launch.LeanKernel)
    if _plans.replays():
        assert isinstance(shipped, _plans.Planned) and shipped.__wrapped__ is fn
    else:
        assert shipped is fn
    module._copy_kernel.jit.device_caches[0] = (
        {"k": SimpleNamespace(metadata=SimpleNamespace(shared=0, num_warps=4, num_stages=3))},
    )
    assert [f.kernel for f in compile_facts(module)] == ["_copy_kernel"]


def _tiny_record(label: str) -> BenchRecord:
    env = Environment(
        device="cuda", torch="2.11.0", triton="3.6.0", python="3.12", host="h", interpreter=False
    )
    return BenchRecord(
        op="softmax", candidate="c.py", sha256="0", label=label, shapes=[],
        ceilings=_ceilings(), environment=env,
    )  # fmt: skip


def test_save_bench_writes_atomically_under_evaluations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "references").mkdir()
    (tmp_path / "seeds").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    first = save_bench(_tiny_record("r01-c02/x"), "softmax")
    second = save_bench(_tiny_record("r01-c02/x"), "softmax")
    assert first.parent == tmp_path / "evaluations" / "softmax"
    assert first.name.startswith("bench-r01-c02_x-") and first.suffix == ".json"
    assert second != first and second.is_file()
    assert BenchRecord.model_validate(json.loads(first.read_text())).label == "r01-c02/x"
    assert not list(first.parent.glob(".*.tmp"))


# ---- the worker's flow on CPU, with the GPU parts faked ---------------------------------------

_CANDIDATES = {
    "fast.py": "import torch\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n",
    "raises.py": "def softmax(x):\n    raise RuntimeError('out of resource: shared memory')\n",
    "broken.py": "def softmax(x:\n",
    "misnamed.py": "def soft_max(x):\n    return x\n",
}
_TIMES = {"seed": 30.0, "fast": 20.0, "raises": 1.0, "broken": 1.0, "misnamed": 1.0,
          "eager": 60.0, "compile": 40.0}  # fmt: skip


class _Seen:
    """What the faked timing was asked for."""

    timed: list[list[str]] = []  # per interleaved call, the labels timed
    options: list[dict[str, object]] = []
    method: timing.Method = "graph"


def _fake_gpu(monkeypatch: pytest.MonkeyPatch, cuda_ok: bool = True) -> None:
    from kernelgen.bench import worker
    from kernelgen.records import PeerTime
    from kernelgen.spec.inputs import make_inputs

    _Seen.timed, _Seen.options = [], []

    def fake_interleaved(
        calls: dict[str, timing.Call], rounds: int = 5, **kw: object
    ) -> tuple[dict[str, PeerTime], dict[str, str]]:
        for call in calls.values():
            call()
        _Seen.timed.append(list(calls))
        _Seen.options.append({"rounds": rounds, **kw})
        method = kw.get("method", "do_bench")
        return {k: PeerTime(median_us=_TIMES[k], spread=0.01, method=method) for k in calls}, {}

    def fake_choose(calls: dict[str, timing.Call], **kw: object) -> tuple[str, int]:
        return (_Seen.method, 51) if _Seen.method == "graph" else ("do_bench", 0)

    def sets(spec: OpSpec, shape: BenchShape, seed: int) -> list[list[object]]:
        return [make_inputs(spec, shape, "float32", "normal", seed, "cpu")]

    env = Environment(device="cuda", gpu="fake", torch="t", triton="t", python="p", host="h",
                      interpreter=False)  # fmt: skip
    monkeypatch.setattr(worker, "interleaved", fake_interleaved)
    monkeypatch.setattr(worker, "choose_method", fake_choose)
    monkeypatch.setattr(worker, "graph_pool", lambda sets: sets)  # copies: test_timing.py
    monkeypatch.setattr(worker, "_input_sets", sets)
    monkeypatch.setattr(worker, "get_ceilings", _ceilings)
    monkeypatch.setattr(worker, "_cuda_ok", lambda: cuda_ok)
    monkeypatch.setattr("kernelgen.env.environment", lambda device: env)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)


def test_run_bench_builds_one_record_per_contender(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.worker import BenchRequest, Contender, run_bench

    _fake_gpu(monkeypatch)
    for name, text in _CANDIDATES.items():
        (tmp_path / name).write_text(text)
    # A torch stand-in for the seed: a real Triton kernel cannot launch without a driver.
    (tmp_path / "seed.py").write_text(_CANDIDATES["fast.py"])
    contenders = [
        Contender(label=name[:-3], path=str(tmp_path / name)) for name in ["seed.py", *_CANDIDATES]
    ]
    req = BenchRequest(op="softmax", root=str(ROOT), contenders=contenders,
                       shapes=[DECODE, VOCAB])  # fmt: skip
    result = run_bench(req)
    records = {r.label: r for r in result.records}
    assert list(records) == ["seed", "fast", "raises", "broken", "misnamed"]
    # Fresh peers: timed with the contenders on every shape, and handed back to be cached.
    assert all({"eager", "compile", "seed", "fast"} <= set(t) for t in _Seen.timed)
    assert result.peers is not None and [e.shape for e in result.peers.entries] == [
        DECODE,
        VOCAB,
    ]
    # Both shapes were graph-timed (the fake probe said so): the method reached the rounds.
    assert all(o["method"] == "graph" and o["n_calls"] == 51 for o in _Seen.options)

    fast = records["fast"]
    assert [s.shape for s in fast.shapes] == [DECODE, VOCAB] and fast.failed == []
    row = fast.shapes[0]
    assert (row.speedup_eager, row.speedup_compile, row.speedup_seed) == pytest.approx(
        (3.0, 2.0, 1.5)
    )
    assert row.candidate.method == "graph" and row.eager and not row.eager.cached
    assert fast.geomean_seed == pytest.approx(1.5) and fast.geomean_eager == pytest.approx(3.0)
    assert row.bound == "launch" and row.suspect is None
    assert len(fast.sha256) == 64
    assert fast.launch == "kernelgen_ops"  # host times as the library would ship it

    seed = records["seed"]
    assert seed.geomean_seed is None and seed.shapes[0].speedup_seed is None
    assert seed.geomean_eager == pytest.approx(2.0)

    for label, text in [
        ("raises", "RuntimeError: out of resource: shared memory"),
        ("broken", "syntax error"),
        ("misnamed", "no function named 'softmax'"),
    ]:
        rec = records[label]
        assert rec.shapes == [] and [f.shape for f in rec.failed] == [DECODE, VOCAB]
        assert all(f.who == "candidate" and text in f.error for f in rec.failed), rec.failed


def test_run_tune_stops_when_a_variant_breaks_the_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kernelgen.bench.worker import TuneRequest, run_tune

    _fake_gpu(monkeypatch)
    _TIMES.update({"0": 5.0, "2": 7.0})
    ok = _CANDIDATES["fast.py"]
    req = TuneRequest(op="softmax", root=str(ROOT), sources=[ok, _CANDIDATES["raises.py"], ok],
                      shapes=[DECODE])  # fmt: skip
    res = run_tune(req)
    assert res.poisoned_by is None
    times = [v.shapes[0].median_us for v in res.variants]
    assert times == [5.0, None, 7.0]
    assert "out of resource" in (res.variants[1].shapes[0].error or "")

    _fake_gpu(monkeypatch, cuda_ok=False)
    res = run_tune(req)
    assert (res.poisoned_by, res.poisoned_shape) == (1, DECODE)
    assert [len(v.shapes) for v in res.variants] == [0, 1, 0]


def test_tune_variants_isolates_crashes_and_broken_contexts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kernelgen.bench as bench
    from kernelgen.bench.worker import TuneRequest, TuneResult, VariantShape, VariantTiming

    calls: list[tuple[list[int], list[str]]] = []

    def fake_worker(target: str, request: str, timeout_s: float) -> str | tuple[str, str]:
        req = TuneRequest.model_validate_json(request)
        idx, shapes = req.indices or [], req.shapes or []
        calls.append((idx, shapes))
        if 3 in idx:  # variant 3 segfaults the process
            return "crash", "process died of SIGSEGV (segmentation fault)"
        out = TuneResult(variants=[])
        for i in idx:
            rows = []
            for n in shapes:
                if i == 1 and n == DECODE:  # variant 1 breaks the context on the 2nd shape
                    rows.append(VariantShape(shape=n, error="RuntimeError: CUDA error: illegal"))
                    out.poisoned_by, out.poisoned_shape = 1, n
                    break
                rows.append(VariantShape(shape=n, median_us=10.0 + i, spread=0.0))
            out.variants.append(VariantTiming(index=i, shapes=rows))
            if out.poisoned_by is not None:
                break
        return out.model_dump_json()

    monkeypatch.setattr(bench, "_run_worker", fake_worker)
    monkeypatch.setattr(bench, "_require_cuda", lambda: None)
    monkeypatch.setattr(bench, "compile_variants", lambda *a: (0.0, []))
    sources = ["v0", "v1", "v2", "v3"]
    res = tune_variants("softmax", sources, shapes=["4096x4096", DECODE])
    by = {v.index: {s.shape: s for s in v.shapes} for v in res.variants}
    assert [v.index for v in res.variants] == [0, 1, 2, 3]
    assert by[0]["4096x4096"].median_us == 10.0 and by[0][DECODE].median_us == 10.0
    assert by[1]["4096x4096"].median_us == 11.0 and "illegal" in (by[1][DECODE].error or "")
    assert by[2][DECODE].median_us == 12.0
    assert all("SIGSEGV" in (s.error or "") for s in by[3].values())
    # The crash split the group; the broken context re-ran the others from its shape on.
    assert calls[0][0] == [0, 1, 2, 3] and [0, 1] in [c[0] for c in calls]
    assert ([0], [DECODE]) in calls


def test_run_tune_times_the_baseline_in_the_same_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelgen.bench.worker import TuneRequest, run_tune

    _fake_gpu(monkeypatch)
    _TIMES.update({"0": 5.0, "1": 4.0, "2": 7.0})
    ok = _CANDIDATES["fast.py"]
    req = TuneRequest(op="softmax", root=str(ROOT), sources=[ok, ok, ok], baseline=0,
                      shapes=[DECODE, "4096x4096"])  # fmt: skip
    res = run_tune(req)
    by = {v.index: v.shapes for v in res.variants}
    # Every variant row carries the baseline's time from the same interleaved call.
    assert [(r.median_us, r.baseline_us, r.method) for r in by[1]] == [(4.0, 5.0, "graph")] * 2
    assert all(r.baseline_us is None for r in by[0])  # not held against itself
    assert _Seen.timed == [["0", "1", "2"]] * 2
    # A fixed number of rounds (many variants), no host figure, the probe's method.
    assert all(o["max_rounds"] == o["rounds"] == req.rounds for o in _Seen.options)
    assert all(o["host"] is False and o["method"] == "graph" for o in _Seen.options)


def test_a_variant_past_the_compile_budget_is_not_run_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """compile_variants' skips reach the worker, which neither compiles nor times the variant
    on that shape (the GPU would wait on the compile) and says why in its row."""
    import kernelgen.bench as bench
    from kernelgen.bench.worker import Skip, TuneRequest, run_tune

    slow = Skip(index=2, shape="4096x4096", reason="not timed: its compile ran past the budget")
    sent: list[TuneRequest] = []

    def fake_worker(target: str, request: str, timeout_s: float) -> str:
        req = TuneRequest.model_validate_json(request)
        sent.append(req)
        return run_tune(req).model_dump_json()

    _fake_gpu(monkeypatch)
    _TIMES.update({"0": 5.0, "1": 4.0, "2": 3.0})
    monkeypatch.setattr(bench, "_run_worker", fake_worker)
    monkeypatch.setattr(bench, "_require_cuda", lambda: None)
    monkeypatch.setattr(bench, "compile_variants", lambda *a: (0.0, [slow]))
    ok = _CANDIDATES["fast.py"]
    res = tune_variants("softmax", [ok, ok, ok], shapes=[DECODE, "4096x4096"], baseline=0)
    assert sent[0].skip == [slow]
    by = {v.index: {r.shape: r for r in v.shapes} for v in res.variants}
    assert by[2][DECODE].median_us == 3.0
    assert by[2]["4096x4096"].median_us is None
    assert by[2]["4096x4096"].error == slow.reason
    assert by[1]["4096x4096"].median_us == 4.0
    assert _Seen.timed == [["0", "1"], ["0", "1", "2"]]  # the spec's order: 4096x4096 first


def test_tune_variants_keeps_the_baseline_in_every_split(monkeypatch: pytest.MonkeyPatch) -> None:
    import kernelgen.bench as bench
    from kernelgen.bench.worker import TuneRequest, TuneResult, VariantShape, VariantTiming

    requests: list[TuneRequest] = []
    crasher = {"i": 3}

    def fake_worker(target: str, request: str, timeout_s: float) -> str | tuple[str, str]:
        req = TuneRequest.model_validate_json(request)
        requests.append(req)
        if crasher["i"] in req.numbers:
            return "crash", "process died of SIGSEGV (segmentation fault)"
        base = 10.0 if req.baseline is not None else None
        out = TuneResult(
            variants=[
                VariantTiming(index=i, shapes=[
                    VariantShape(shape=DECODE, median_us=10.0 + i,
                                 baseline_us=None if i == req.baseline else base)
                ])
                for i in req.numbers
            ]
        )  # fmt: skip
        return out.model_dump_json()

    monkeypatch.setattr(bench, "_run_worker", fake_worker)
    monkeypatch.setattr(bench, "_require_cuda", lambda: None)
    monkeypatch.setattr(bench, "compile_variants", lambda *a: (0.0, []))
    res = tune_variants("softmax", ["b", "v1", "v2", "v3", "v4"], shapes=[DECODE], baseline=0)
    by = {v.index: v.shapes[0] for v in res.variants}
    assert "SIGSEGV" in (by[3].error or "")
    # The variants that ran were timed beside the baseline, in the same worker.
    assert [by[i].baseline_us for i in (1, 2, 4)] == [10.0, 10.0, 10.0]
    assert all(r.baseline == 0 for r in requests if 0 in r.numbers)
    assert [r.numbers for r in requests][:3] == [[0, 1, 2, 3, 4], [0, 1, 2], [0, 3, 4]]

    # A baseline that crashes the process itself: the search still ends.
    requests.clear()
    crasher["i"] = 0
    res = tune_variants("softmax", ["b", "v1", "v2"], shapes=[DECODE], baseline=0)
    assert all("SIGSEGV" in (s.error or "") for s in res.variants[0].shapes)
    assert res.variants[1].shapes[0].median_us == 11.0 and len(requests) < 10
    with pytest.raises(UsageError, match="baseline 5 is not one of 2 sources"):
        tune_variants("softmax", ["a", "b"], baseline=5)
