"""The benchmark on a real GPU (the H200): skipped without CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelgen.bench import bench_files, tune_variants

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "seeds" / "softmax.py"

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_bench_seed_softmax_against_peers() -> None:
    (rec,) = bench_files("softmax", [("seed", SEED)], peers=True, shapes=["4096x4096"])
    assert rec.label == "seed" and rec.op == "softmax" and rec.failed == []
    (row,) = rec.shapes
    assert (row.shape, row.dtype, row.bound) == ("4096x4096", "bfloat16", "memory")
    # 64 MiB moved: the floor is ~15 us at ~4.3 TB/s; a real time sits above it.
    assert row.suspect is None and row.candidate.median_us > row.floor_us
    assert 0 < row.limit_pct < 100 / 0.9  # above that it would be suspect
    assert row.eager is not None and row.compile is not None
    assert row.speedup_eager and row.speedup_eager > 0
    assert row.speedup_compile and row.speedup_compile > 0
    assert row.speedup_seed is None  # the seed is not compared with itself
    assert rec.geomean_eager == pytest.approx(row.speedup_eager)
    assert 0 <= row.candidate.spread < 0.5 and row.candidate.host_us
    c = rec.ceilings
    assert 1000 < c.copy_gbps < 6000 and 100 < c.bf16_tflops < 1500 and 0 < c.launch_us < 50
    assert rec.environment.device == "cuda" and rec.environment.gpu
    facts = [f for f in rec.compile if f.kernel == "_softmax_kernel"]
    assert facts and all(f.registers and f.num_warps for f in facts)


def test_tune_isolates_a_bad_config() -> None:
    source = SEED.read_text()
    assert 'DEFAULT_CONFIG = {"num_warps": 4}' in source
    # 64 warps = 2048 threads: more than a block may have, so this variant cannot launch.
    bad = source.replace('DEFAULT_CONFIG = {"num_warps": 4}', 'DEFAULT_CONFIG = {"num_warps": 64}')
    res = tune_variants("softmax", [source, bad], shapes=["32768x1024"])
    good_row, bad_row = res.variants[0].shapes[0], res.variants[1].shapes[0]
    assert good_row.error is None and good_row.median_us and good_row.median_us > 0
    assert bad_row.median_us is None and bad_row.error


def test_small_shapes_are_graph_timed_within_the_spread_target_and_peers_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.bench.timing import SPREAD_TARGET

    # A scratch project: the peer cache goes to its evaluations/, not the repository's.
    for folder in ("references", "seeds"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    seed = ROOT / "seeds" / "silu_and_mul.py"
    shapes = ["deepseek_v3_64x18432", "llama3_8b_1x14336", "llama3_8b_4096x14336"]
    (first,) = bench_files("silu_and_mul", [("seed", seed)], peers=True, shapes=shapes)
    rows = {r.shape: r for r in first.shapes}
    # 7 MB and 86 KB: kernels of a few us, graph-timed; 352 MB (~85 us): do_bench.
    assert [rows[n].candidate.method for n in shapes] == ["graph", "graph", "do_bench"]
    for row in rows.values():
        for who, t in (("seed", row.candidate), ("eager", row.eager), ("compile", row.compile)):
            assert t is not None and t.spread <= SPREAD_TARGET, (row.shape, who, t)
        assert row.suspect is None and row.candidate.host_us
    assert list((tmp_path / "evaluations" / "peers").glob("silu_and_mul-*.json"))

    (again,) = bench_files("silu_and_mul", [("seed", seed)], peers="cached", shapes=shapes)
    for row in again.shapes:
        assert row.eager is not None and row.eager.cached and row.eager.measured
        assert row.compile is not None and row.compile.cached
        assert row.speedup_eager is not None
