"""The peer cache: peers timed once per shape and stack, reused by later bench calls, never
compiled nor timed again on a hit; a corrupt file is an error that names it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kernelgen.bench import bench_files, peers, timing
from kernelgen.bench.peers import PeerCache, PeerEntry
from kernelgen.errors import StoreError
from kernelgen.records import PeerTime
from kernelgen.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
# Two of softmax's bench shapes: a decode step over a 32K vocabulary, 16 rows of a 152K one.
DECODE = "mixtral_8x7b_1x32000"
VOCAB = "qwen3_8b_16x151936"
SHAPES = [DECODE, VOCAB]


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose evaluations/ is a scratch folder; references and seeds are the real ones."""
    for folder in ("references", "seeds"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def _entry(shape: str = DECODE, method: timing.Method = "graph", us: float = 60.0) -> PeerEntry:
    spec = load_spec("softmax")
    bench = next(b for b in spec.data.bench if b.name == shape)
    return PeerEntry(
        shape=shape, dtype=bench.dtype, dims=bench.dims, method=method,
        protocol=timing.PROTOCOL, reference=peers.reference_sha(spec), peers=peers.peer_kind(spec),
        eager=PeerTime(median_us=us, spread=0.01, method=method),
        compile=PeerTime(median_us=us * 2 / 3, spread=0.01, method=method),
        measured="2026-12-01T00:00:00+00:00",
    )  # fmt: skip


def _cache(*entries: PeerEntry, gpu: str = "fake") -> PeerCache:
    return PeerCache(op="softmax", gpu=gpu, torch="t", triton="t", entries=list(entries))


def test_one_file_per_op_device_and_stack(project: Path) -> None:
    path = peers.cache_path("softmax", "NVIDIA H200 NVL", "2.11.0+cu130", "3.6.0")
    expected = "softmax-NVIDIA_H200_NVL-torch2.11.0_cu130-triton3.6.0.json"
    assert path == project / "evaluations" / "peers" / expected
    assert peers.load(path, "softmax") is None  # no file: nothing cached


def test_store_merges_by_key_and_writes_atomically(project: Path) -> None:
    first = peers.store(_cache(_entry(DECODE, us=60.0), _entry(VOCAB, us=90.0)))
    second = peers.store(_cache(_entry(DECODE, us=55.0)))
    assert first == second and not list(first.parent.glob(".*.tmp"))
    back = peers.load(first, "softmax")
    assert back is not None
    times = {e.shape: e.eager.median_us for e in back.entries if e.eager}
    assert times == {VOCAB: 90.0, DECODE: 55.0}  # the newer entry replaced its key
    # Another method is another key: a graph-timed and a do_bench-timed entry live side by side.
    peers.store(_cache(_entry(DECODE, method="do_bench", us=70.0)))
    back = peers.load(first, "softmax")
    assert back is not None and len(back.entries) == 3
    # Only this torch and Triton's files are read, for every device.
    peers.store(_cache(_entry(), gpu="other GPU"))
    stack = peers.load_stack("softmax", "t", "t")
    assert sorted(c.gpu for c in stack) == ["fake", "other GPU"]
    assert peers.load_stack("softmax", "2.11.0", "t") == []


def test_a_corrupt_cache_is_an_error_naming_the_file(project: Path) -> None:
    path = peers.cache_path("softmax", "fake", "t", "t")
    path.parent.mkdir(parents=True)
    path.write_text('{"op": "softmax", "gpu": "fake", "torch": "t"')
    with pytest.raises(StoreError, match=rf"{path}: corrupt peer cache .*delete it"):
        peers.load_stack("softmax", "t", "t")
    path.write_text(json.dumps({**_cache().model_dump(), "entries": [{"shape": 3}]}))
    with pytest.raises(StoreError, match=rf"{path}: corrupt peer cache \(entries.0.shape"):
        peers.load(path, "softmax")
    path.write_text(_cache().model_copy(update={"op": "rms_norm"}).model_dump_json())
    with pytest.raises(StoreError, match="a peer cache of 'rms_norm' under the name of 'softmax'"):
        peers.load(path, "softmax")


def test_bench_files_reads_the_cache_first_and_stores_what_was_timed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kernelgen.bench as bench
    from kernelgen.bench.worker import BenchRequest, BenchResult

    requests: list[BenchRequest] = []

    def fake_worker(target: str, request: str, timeout_s: float) -> str:
        req = BenchRequest.model_validate_json(request)
        requests.append(req)
        return BenchResult(records=[], peers=_cache(_entry(VOCAB))).model_dump_json()

    monkeypatch.setattr(bench, "_run_worker", fake_worker)
    monkeypatch.setattr(bench, "_require_cuda", lambda: None)
    monkeypatch.setattr(bench, "_stack", lambda: ("t", "t"))
    peers.store(_cache(_entry(DECODE)))
    seed = ROOT / "seeds" / "softmax.py"

    bench_files("softmax", [("seed", seed)], peers="cached", shapes=SHAPES)
    (cache,) = requests[-1].cached_peers or []
    assert [e.shape for e in cache.entries] == [DECODE]
    stored = peers.load(peers.cache_path("softmax", "fake", "t", "t"), "softmax")
    assert stored is not None and {e.shape for e in stored.entries} == set(SHAPES)

    bench_files("softmax", [("seed", seed)], peers=True, shapes=SHAPES)
    assert requests[-1].peers and requests[-1].cached_peers is None  # fresh: timed anew
    bench_files("softmax", [("seed", seed)], peers=False, shapes=SHAPES)
    assert not requests[-1].peers

    # A corrupt file stops the call before any worker starts.
    peers.cache_path("softmax", "fake", "t", "t").write_text("{")
    n = len(requests)
    with pytest.raises(StoreError, match="corrupt peer cache"):
        bench_files("softmax", [("seed", seed)], peers="cached", shapes=SHAPES)
    assert len(requests) == n


# ---- the worker with the GPU steps faked --------------------------------------------------------

_TIMES = {"seed": 30.0, "eager": 999.0, "compile": 999.0}


def _fake_worker_gpu(monkeypatch: pytest.MonkeyPatch, method: timing.Method = "graph") -> dict:
    from kernelgen.bench import worker
    from kernelgen.records import Ceilings, Environment
    from kernelgen.spec.inputs import make_inputs

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("KERNELGEN_ROOT", raising=False)
    seen: dict = {"timed": [], "compiled": 0, "cuda_ok": True}

    def fake_interleaved(calls: dict, rounds: int = 7, **kw: object) -> tuple[dict, dict]:
        seen["timed"].append(sorted(calls))
        m = kw.get("method", "do_bench")
        return {k: PeerTime(median_us=_TIMES[k], spread=0.01, method=m) for k in calls}, {}

    def fake_compile(fn: object, **kw: object) -> object:
        seen["compiled"] += 1
        return fn

    env = Environment(device="cuda", gpu="fake", torch="t", triton="t", python="p", host="h",
                      interpreter=False)  # fmt: skip
    ceilings = Ceilings(gpu="fake", copy_gbps=4000.0, bf16_tflops=700.0, launch_us=2.5,
                        measured="m", torch="t", triton="t")  # fmt: skip
    monkeypatch.setattr(worker, "interleaved", fake_interleaved)
    monkeypatch.setattr(worker, "choose_method", lambda calls, **kw: (method, 51))
    monkeypatch.setattr(worker, "graph_pool", lambda sets: sets)
    monkeypatch.setattr(
        worker,
        "_input_sets",
        lambda spec, shape, seed: [make_inputs(spec, shape, "float32", "normal", seed, "cpu")],
    )
    monkeypatch.setattr(worker, "get_ceilings", lambda: ceilings)
    monkeypatch.setattr(worker, "_cuda_ok", lambda: seen["cuda_ok"])
    monkeypatch.setattr("kernelgen.env.environment", lambda device: env)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch, "compile", fake_compile)
    return seen


def _request(tmp_path: Path, cached: list[PeerCache] | None):  # noqa: ANN202
    from kernelgen.bench.worker import BenchRequest, Contender

    (tmp_path / "seed.py").write_text(
        "import torch\n\ndef softmax(x):\n    return torch.softmax(x, -1)\n"
    )
    seed = Contender(label="seed", path=str(tmp_path / "seed.py"))
    return BenchRequest(
        op="softmax", root=str(ROOT), contenders=[seed], shapes=SHAPES, cached_peers=cached
    )


def test_a_cache_hit_neither_compiles_nor_times_the_peers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.worker import run_bench

    seen = _fake_worker_gpu(monkeypatch)
    hit = _cache(_entry(DECODE, us=60.0), _entry(VOCAB, us=90.0))
    result = run_bench(_request(tmp_path, [_cache(gpu="another GPU"), hit]))
    assert seen["compiled"] == 0 and seen["timed"] == [["seed"], ["seed"]]
    assert result.peers is None  # nothing new to store
    (record,) = result.records
    assert record.peers == "reference"  # which peer ran is still said (softmax has no eager)
    row = record.shapes[0]
    assert row.eager is not None and row.eager.cached and row.eager.median_us == 60.0
    assert row.eager.measured == "2026-12-01T00:00:00+00:00"
    assert row.compile is not None and row.compile.cached
    assert row.speedup_eager == pytest.approx(2.0) and row.speedup_compile == pytest.approx(40 / 30)


def test_a_cache_miss_times_that_shape_and_returns_it_to_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.worker import run_bench

    seen = _fake_worker_gpu(monkeypatch)
    result = run_bench(_request(tmp_path, [_cache(_entry(DECODE))]))
    # DECODE came from the cache; VOCAB was compiled and timed with the seed.
    assert seen["timed"] == [["seed"], ["compile", "eager", "seed"]] and seen["compiled"] == 1
    assert result.peers is not None and [e.shape for e in result.peers.entries] == [VOCAB]
    fresh = result.peers.entries[0]
    assert fresh.method == "graph" and fresh.eager is not None and not fresh.eager.cached
    rows = {r.shape: r for r in result.records[0].shapes}
    assert rows[DECODE].eager and rows[DECODE].eager.cached
    assert rows[VOCAB].eager and not rows[VOCAB].eager.cached


def test_an_entry_of_another_method_or_reference_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.worker import run_bench

    seen = _fake_worker_gpu(monkeypatch, method="do_bench")
    stale = _entry(VOCAB).model_copy(update={"method": "do_bench", "reference": "0" * 64})
    run_bench(_request(tmp_path, [_cache(_entry(DECODE), stale)]))
    assert seen["compiled"] == 2  # graph entry vs a do_bench shape; an older reference


def test_peers_timed_after_a_broken_context_are_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.worker import run_bench

    seen = _fake_worker_gpu(monkeypatch)
    seen["cuda_ok"] = False
    result = run_bench(_request(tmp_path, None))
    assert seen["compiled"] == 2 and result.peers is None
