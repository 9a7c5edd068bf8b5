"""Compile ahead, over the protocol: jobs spread over compile-only runners, several sources per
runner, a failing layout reported with the candidate's error, the others still done. On CPU the
interpreter has nothing to compile, so the launches run; the plumbing is what is tested."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen.spec import load_spec
from kernelgen.verify import ahead
from kernelgen.verify.checks import classify

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _seed_with(folder: Path, name: str, lines: str, imports: str = "") -> Path:
    """softmax's seed with `lines` right after its launcher reads the row width (`n_cols`), and
    `imports` above torch's: a launcher that refuses, kills or hangs at a layout."""
    path = folder / name
    text = (ROOT / "seeds" / "softmax.py").read_text()
    if imports:
        text = text.replace("import torch\n", f"{imports}\n\nimport torch\n")
    path.write_text(
        text.replace("    n_cols = x.shape[-1]\n", "    n_cols = x.shape[-1]\n" + lines)
    )
    return path


def test_jobs_spread_over_runners_and_failures_come_back(tmp_path: Path) -> None:
    spec = load_spec("softmax")
    seed = ROOT / "seeds" / "softmax.py"
    # Refuses rows of 1823 columns at "compile" time, as a kernel with a static assert would.
    picky = _seed_with(tmp_path, "picky.py", "    assert n_cols != 1823, 'no such block'\n")
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
    killer = _seed_with(
        tmp_path, "killer.py", "    if n_cols == 1823:\n        os._exit(3)\n", "import os"
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


def test_a_compile_past_its_deadline_is_replaced_when_asked(tmp_path: Path) -> None:
    """The tuner's budget: a compile that outruns the deadline is a timeout miss, and with
    `replace_dead` a fresh runner takes the jobs after it (one runner here: without the
    replacement they would never run)."""
    spec = load_spec("softmax")
    slow = _seed_with(
        tmp_path, "slow.py", "    if n_cols == 1823:\n        time.sleep(600)\n", "import time"
    )
    odd = next(s for s in spec.data.sizes if s.dims.get("cols") == 1823)
    small = next(s for s in spec.data.sizes if s.interpreter and s.dims["cols"] < 100)
    from kernelgen.spec import BenchShape

    layouts = [
        ahead.bench_layout(spec, BenchShape(name=s.name, dims=s.dims, dtype="float32"))
        for s in (odd, small)
    ]
    jobs = [ahead.Job(slow, layout, f"job{i}") for i, layout in enumerate(layouts)]
    pool = ahead.compile_pool(4096, 1, tmp_path / "runners", device="cpu")
    try:
        _, misses = ahead.compile_ahead(spec, pool, jobs, deadline_s=4.0, replace_dead=True)
    finally:
        pool.close()
    assert [m.job.name for m in misses] == ["job0"]
    assert misses[0].dead is not None and misses[0].dead.category == "timeout"
    assert jobs[1].seconds is not None and jobs[1].seconds < 4.0


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


def test_a_specialization_sees_what_triton_sees() -> None:
    from kernelgen.verify.protocol import TensorMeta

    def row(stride: int, offset: int = 0) -> ahead.Layout:
        return [
            TensorMeta(
                shape=[4, 8], stride=[stride, 1], offset=offset, storage=64, dtype="float32"
            ),
            1e-6,
        ]

    # Paddings of 19 and 21 columns (as two runs draw them): one compile; 32 is another.
    assert ahead.specialization(row(27)) == ahead.specialization(row(29))
    assert ahead.specialization(row(27)) != ahead.specialization(row(32))
    assert ahead.specialization(row(32)) != ahead.specialization(row(32, offset=1))
    assert ahead.specialization(row(32)) == ahead.specialization([*row(32)[:1], 0.5])


def test_compiled_remembers_a_source_per_cache(tmp_path: Path) -> None:
    spec = load_spec("softmax")
    layout = ahead.bench_layout(spec, spec.data.bench[0])
    job = ahead.Job(ROOT / "seeds" / "softmax.py", layout, "bench")
    first = ahead.Compiled(tmp_path, "abc")
    assert first.new(job)
    first.add([job])
    assert not ahead.Compiled(tmp_path, "abc").new(job)
    assert ahead.Compiled(tmp_path, "another source").new(job)
    assert ahead.Compiled(tmp_path / "another cache", "abc").new(job)
    (tmp_path / "kernelgen-ahead" / "abc.json").write_text("{not json")
    assert ahead.Compiled(tmp_path, "abc").new(job)  # unreadable: everything compiles again
    # A cache the judge cannot write to (a file where its folder would be): no index, no error.
    (tmp_path / "blocked").write_text("")
    ahead.Compiled(tmp_path / "blocked", "abc").add([job])
    assert ahead.Compiled(tmp_path / "blocked", "abc").new(job)


def test_a_cached_source_starts_no_compile_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second judge of the same source in the same cache compiles nothing ahead and starts
    no compile runner (on the H200 their start held a fresh judge's runner back 13 s); its
    verdict is the same. On CPU the compile runners are forced on; no bench shapes (the
    interpreter would run them)."""
    from kernelgen.verify import judge, verify_candidate
    from kernelgen.verify.judge import Evaluator

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(judge, "LONE_COMPILES", 0)  # the next test's path
    # Two small cases are enough to tell (the whole grid twice in the interpreter: 80 s).
    monkeypatch.setattr(
        Evaluator, "cases", lambda self: [c for c in self.spec.cases if c.interpreter][:2]
    )
    seed = ROOT / "seeds" / "softmax.py"
    phases = []
    for _ in range(2):
        with Evaluator("softmax", "cpu", seed=5, keep_warm=False) as ev:
            ev._compile_workers, ev._bench_layouts = 2, []
            v = verify_candidate("softmax", seed, device="cpu", evaluator=ev)
            assert v.accepted, v.reason
            phases.append((v.phases.compiles, ev.compilers is not None))
    assert phases[0][0] > 0 and phases[0][1]
    assert phases[1] == (0, False)


def test_a_lone_new_specialization_is_left_to_the_judging_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source with no new bench shape and one new case layout starts no compile runner: the
    judging runner compiles it at its first call (a compile runner's start cost 6 s on the H200
    for a 0.9 s compile), and it is not entered in the index as compiled ahead."""
    from kernelgen.verify import verify_candidate
    from kernelgen.verify.judge import Evaluator

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(
        Evaluator, "cases", lambda self: [c for c in self.spec.cases if c.interpreter][:1]
    )
    seed = ROOT / "seeds" / "softmax.py"
    with Evaluator("softmax", "cpu", seed=5, keep_warm=False) as ev:
        ev._compile_workers, ev._bench_layouts = 2, []
        v = verify_candidate("softmax", seed, device="cpu", evaluator=ev)
        assert v.accepted, v.reason
        assert ev.compilers is None
    assert (v.phases.compiles, v.phases.compiled_by_runner) == (0, 1)
    assert not (tmp_path / "cache" / "kernelgen-ahead").exists()


def test_a_bench_job_comes_after_the_cases_unless_a_case_needs_it() -> None:
    """The judge waits on the cases' compiles, not the bench shapes': those are taken last,
    unless a case turns out to share one's layout."""
    jobs = [
        ahead.Job(Path("a.py"), [], n, later=n.startswith("bench")) for n in "bench1 c1 c2".split()
    ]
    feed = ahead.Feed()
    for job in jobs:
        feed.put(job)
    bench2 = ahead.Job(Path("a.py"), [], "bench2", later=True)
    feed.put(bench2)
    feed.promote(bench2)
    feed.close()
    assert [j.name for j in iter(feed.take, None)] == ["c1", "c2", "bench2", "bench1"]
    dropped = ahead.Feed()
    dropped.put(jobs[1])
    dropped.drop()
    assert dropped.take() is None


def test_background_compiles_mark_each_job_and_stop_kills_the_rest(tmp_path: Path) -> None:
    """Compiles beside the judging: each job is marked done as it ends (its miss with it); a
    rejected candidate's compiles still running are stopped, their runners killed, at once."""
    import time

    spec = load_spec("softmax")
    slow = _seed_with(
        tmp_path,
        "slow.py",
        "    if n_cols == 1823:\n        time.sleep(600)\n"
        "    assert n_cols != 7, 'no such block'\n",
        "import time",
    )
    from kernelgen.spec import BenchShape

    def job(name: str, cols: int) -> ahead.Job:
        shape = BenchShape(name=name, dims={"rows": 3, "cols": cols}, dtype="float32")
        return ahead.Job(slow, ahead.bench_layout(spec, shape), name)

    hang, good, bad = job("hang", 1823), job("good", 64), job("bad", 7)
    feed = ahead.Feed()
    for j in (hang, good, bad):
        feed.put(j)
    feed.close()
    pool = ahead.compile_pool(4096, 2, tmp_path / "runners", device="cpu")
    try:
        background = ahead.Background(spec, pool, feed, 2)
        assert background.wait(good) is None and good.done.is_set()
        miss = background.wait(bad)
        assert miss is not None and miss.error is not None
        assert "no such block" in miss.error.message
        assert not hang.done.is_set()
        start = time.monotonic()
        background.stop()
        assert time.monotonic() - start < 30
        killed = background.wait(hang)  # the judging runner's to compile, if ever reached
        assert killed is not None and killed.error is None and killed.dead is not None
    finally:
        pool.close()


def test_a_verdict_judges_beside_its_compiles_and_stops_them_when_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's whole path with compile runners (on CPU their launches just run): a case
    waits for its own compile, the bench shapes' are waited for at the end of an accepted
    verdict, and a candidate rejected on its first case leaves no compile running."""
    from kernelgen.verify import verify_candidate
    from kernelgen.verify.judge import Evaluator

    for name in ("KERNELGEN_TRITON_CACHE", "TRITON_CACHE_DIR"):  # cold: nothing compiled yet
        monkeypatch.setenv(name, str(tmp_path / "cache"))
    with Evaluator("softmax", "cpu", seed=2, keep_warm=False) as ev:
        ev.grid = [c for c in ev.grid if c.interpreter][:4]
        ev._compile_workers = 2
        small = [s for s in ev.spec.data.bench if s.dims["rows"] * s.dims["cols"] < 1 << 16]
        ev._bench_layouts = [(s.name, ahead.bench_layout(ev.spec, s)) for s in small]
        seed = ROOT / "seeds" / "softmax.py"
        v = verify_candidate("softmax", seed, device="cpu", evaluator=ev)
        assert v.accepted, v.reason
        assert v.phases is not None and v.phases.compiles > 0 and v.phases.compile > 0
        # The slowest compile, named and timed: the floor under the verdict that is its own.
        assert 0 < v.phases.slowest_compile_s <= v.phases.compile
        names = {c.name for c in ev.grid} | {f"bench {n}" for n, _ in ev._bench_layouts}
        assert v.phases.slowest_compile in names
        wrong = tmp_path / "wrong.py"
        wrong.write_text(seed.read_text().replace("y.to(y_ptr", "(y * 1.01).to(y_ptr"))
        w = verify_candidate("softmax", wrong, device="cpu", evaluator=ev)
        assert not w.accepted and w.category == "incorrect"
        assert ev._ahead is None  # ended with its verdict


def test_a_judge_lets_the_gpu_go_while_it_waits_for_a_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A case whose compile is still going is waited for with no call in flight and the GPU's
    shared lock let go (a timing of another job need not wait for the compile), then taken
    again for the case's calls; a compiled case is not waited for."""
    from kernelgen import gpulock
    from kernelgen.verify.judge import Evaluator
    from kernelgen.verify.verdict import Judging

    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "gpu.lock"))
    with Evaluator("softmax", "cpu", seed=1, keep_warm=False) as ev:
        held_while_waiting: list[int] = []

        def compiled_for(case: object) -> None:
            held_while_waiting.append(gpulock._held("shared"))

        monkeypatch.setattr(ev, "compiling", lambda case: case is ev.grid[0])
        monkeypatch.setattr(ev, "compiled_for", compiled_for)
        judging = Judging(ev, ROOT / "seeds" / "softmax.py", "digest")
        judging.on_gpu()
        try:
            judging.compiled(ev.grid[0])
            judging.compiled(ev.grid[1])
            assert held_while_waiting == [0, 1]
            assert judging.gpu_held and gpulock._held("shared") == 1
        finally:
            judging.gpu.close()


def test_an_input_makers_bench_layout_is_drawn_on_meta_unless_it_reads_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bench shape's layout, at sizes of GBs, is described on the meta device: drawn for real
    beside other judges, KernelBench's 6 GiB inputs ran the GPU out of memory. A maker that
    reads a value back (decode_attn's page table) cannot run there and is drawn for real."""
    import kernelgen.spec.inputs as inputs
    from kernelgen.verify.tensors import meta

    topk, decode = load_spec("topk"), load_spec("decode_attn")
    real = inputs.make_inputs
    expected = meta(real(topk, topk.data.bench[0], topk.data.bench[0].dtype, "normal", 0, "cpu"))
    drawn: list[str] = []

    def counted(spec, *args, **kwargs):  # noqa: ANN001, ANN202 - make_inputs' own
        drawn.append(spec.name)
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(inputs, "make_inputs", counted)
    assert ahead.bench_layout(topk, topk.data.bench[0]) == expected
    assert drawn == []
    assert ahead.bench_layout(decode, decode.data.bench[0])
    assert drawn == ["decode_attn"]
