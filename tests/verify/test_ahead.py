"""Compile ahead, over the protocol: jobs spread over compile-only runners, several sources per
runner, a failing layout reported with the candidate's error, the others still done. On CPU the
interpreter has nothing to compile, so the launches run; the plumbing is what is tested."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen.spec import load_spec
from kernelgen.verify import ahead
from kernelgen.verify.judge import classify

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_jobs_spread_over_runners_and_failures_come_back(tmp_path: Path) -> None:
    spec = load_spec("softmax")
    seed = ROOT / "seeds" / "softmax.py"
    picky = tmp_path / "picky.py"
    # Refuses rows of 1823 columns at "compile" time, as a kernel with a static assert would.
    picky.write_text(
        seed.read_text().replace(
            "    n_cols = x.shape[-1]\n",
            "    n_cols = x.shape[-1]\n    assert n_cols != 1823, 'no such block'\n",
        )
    )
    small = [s for s in spec.data.bench if s.dims["rows"] * s.dims["cols"] <= 32000]
    layouts = [(s.name, ahead.bench_layout(spec, s)) for s in small]
    odd = next(s for s in spec.data.sizes if s.dims.get("cols") == 1823)
    from kernelgen.spec import BenchShape

    odd_shape = BenchShape(name="odd", dims=odd.dims, dtype="float32")
    layouts.append(("odd", ahead.bench_layout(spec, odd_shape)))
    jobs = [ahead.Job(p, layout, f"{p.stem} {n}") for p in (seed, picky) for n, layout in layouts]
    pool = ahead.compile_pool(4096, 2, tmp_path / "runners", device="cpu")
    try:
        seconds, misses = ahead.compile_ahead(spec, pool, jobs)
    finally:
        pool.close()
    assert seconds > 0
    assert [m.job.name for m in misses] == ["picky odd"]
    miss = misses[0]
    assert miss.error is not None and miss.dead is None
    assert classify(miss.error).category == "crash"
    assert "no such block" in miss.error.message


def test_a_dead_runner_leaves_its_queue_to_the_others(tmp_path: Path) -> None:
    """One shared queue, largest layouts first: when a compile kills its runner, the jobs after
    it are taken by the runners still alive, not lost with a fixed share."""
    spec = load_spec("softmax")
    killer = tmp_path / "killer.py"
    killer.write_text(
        (ROOT / "seeds" / "softmax.py")
        .read_text()
        .replace("import torch\n", "import os\n\nimport torch\n")
        .replace(
            "    n_cols = x.shape[-1]\n",
            "    n_cols = x.shape[-1]\n    if n_cols == 1823:\n        os._exit(3)\n",
        )
    )
    shapes = [
        s for s in spec.data.sizes if s.interpreter and s.dims["rows"] * s.dims["cols"] < 4000
    ]
    odd = next(s for s in spec.data.sizes if s.dims.get("cols") == 1823)
    from kernelgen.spec import BenchShape

    layouts = [
        ahead.bench_layout(spec, BenchShape(name=s.name, dims=s.dims, dtype="float32"))
        for s in [odd, *shapes]
    ]
    jobs = [ahead.Job(killer, layout, f"job{i}") for i, layout in enumerate(layouts)]
    pool = ahead.compile_pool(4096, 2, tmp_path / "runners", device="cpu")
    try:
        _, misses = ahead.compile_ahead(spec, pool, jobs)
    finally:
        pool.close()
    assert [m.dead is not None for m in misses] == [True]
    assert misses[0].job.layout == layouts[0]
    # The odd layout comes first (and is the largest): with fixed shares, every second job after
    # it died with its runner.
    assert all(j.seconds is not None for j in jobs if j is not misses[0].job)


def test_a_feed_takes_jobs_while_the_runners_work(tmp_path: Path) -> None:
    """The judge feeds each case's layout as its ground truth is drawn: jobs put after the
    runners started are compiled too, and the runners stop only once the feed is closed."""
    import threading

    spec = load_spec("softmax")
    seed = ROOT / "seeds" / "softmax.py"
    small = [s for s in spec.data.sizes if s.interpreter][:3]
    from kernelgen.spec import BenchShape

    jobs = [
        ahead.Job(
            seed,
            ahead.bench_layout(spec, BenchShape(name=s.name, dims=s.dims, dtype="float32")),
            s.name,
        )
        for s in small
    ]
    feed = ahead.Feed(jobs[:1])
    pool = ahead.compile_pool(4096, 2, tmp_path / "runners", device="cpu")
    later = threading.Timer(1.0, lambda: ([feed.put(j) for j in jobs[1:]], feed.close()))
    later.start()
    try:
        _, misses = ahead.compile_ahead(spec, pool, feed)
    finally:
        later.cancel()
        pool.close()
    assert misses == []
    assert all(j.seconds is not None for j in jobs)
