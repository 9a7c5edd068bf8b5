"""The library benchmark's record (evaluations/library/) on the status page: per operator in
`report --all --json`, in the table and the page; the newest record wins; a broken one is passed
over, not crashed on. And the library's dispatch on the page: counts in view, shapes folded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_report import invoke as report

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where scripts_module.py lives
from scripts_module import script  # noqa: E402

from kernelgen.bench.library import (
    Availability,
    HostTarget,
    LibraryBench,
    Measurement,
    Ratio,
    RoutedCheck,
    newest_record,
)


def invoke(*args: str, width: int = 140):
    """`kernelgen report ARGS` (test_report's), which must succeed here."""
    result = report(*args, width=width)
    assert result.exit_code == 0, result.output
    return result


def _m(op: str, impl: str, device_us: float | None = 10.0, **kw) -> Measurement:
    return Measurement(
        op=op,
        shape="1x32000",
        dims={"rows": 1, "cols": 32000},
        dtype="bfloat16",
        decode=True,
        impl=impl,
        device_us=device_us,
        host_us=20.0,
        **kw,
    )


def _ratio(op: str, impl: str, against: str, geomean: float, worst: float, shape: str, **kw):
    return Ratio(
        op=op,
        metric=kw.pop("metric", "device_us"),
        against=against,
        impl=impl,
        shapes=kw.pop("shapes", 3),
        geomean=geomean,
        worst=worst,
        worst_shape=shape,
        **kw,
    )


def record(created: str = "2026-12-01T17:14:20+00:00", scale: float = 1.0) -> LibraryBench:
    """softmax and rms_norm measured (silu_and_mul not); FlagGems did not import, and Liger
    raised on every softmax shape."""
    return LibraryBench(
        created=created,
        command="python scripts/bench_library.py out.json",
        budget_s=190.0,
        environment={"device": "cuda", "gpu": "NVIDIA H200", "interpreter": False},
        lean_launches=True,
        availability=[
            Availability(impl="liger", available=True, version="0.8.5"),
            Availability(impl="flaggems", available=False, reason="ImportError"),
        ],
        measurements=[
            _m("softmax", "kernelgen_ops"),
            _m("softmax", "eager"),
            _m("softmax", "compile"),
            _m("softmax", "liger", None, error="RuntimeError: too wide"),
            _m("rms_norm", "kernelgen_ops"),
            _m("rms_norm", "eager"),
            _m("rms_norm", "liger"),
        ],
        summary=[
            _ratio("softmax", "kernelgen_ops", "best_peer", 1.1 * scale, 2.5, "1x32000"),
            # Host time and the eager baseline are not what the page shows.
            _ratio("softmax", "kernelgen_ops", "best_peer", 9.0, 9.0, "x", metric="host_us"),
            _ratio("softmax", "kernelgen_ops", "eager", 0.5, 0.9, "x"),
            _ratio("softmax", "kernelgen_ops[kernel]", "best_peer", 1.05, 1.07, "64x32000"),
            _ratio("softmax", "routed", "eager", 0.81, 1.0, "16x32000"),
            _ratio("rms_norm", "kernelgen_ops", "best_peer", 0.9, 1.2, "8x7168", shapes=9),
            _ratio("rms_norm", "kernelgen_ops[kernel]", "best_peer", 0.95, 1.0, "8x7168"),
        ],
        host_target=[
            HostTarget(
                op="softmax",
                impl="kernelgen_ops",
                decode_shapes=4,
                worst_excess_us=25.83,
                worst_shape="64x32000",
                met=False,
            ),
            HostTarget(op="softmax", impl="routed", decode_shapes=4, worst_excess_us=1.0, met=True),
        ],
        routed=[
            RoutedCheck(op="softmax", metric="host_us", shapes=4, met=True),
            RoutedCheck(
                op="softmax", metric="device_us", shapes=7, over_noise=["1x32000"], met=False
            ),
        ],
        complete=True,
    )


def write(project, name: str, text: str) -> None:
    folder = project.root / "evaluations" / "library"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def status(*args: str) -> dict[str, dict]:
    out = invoke("--all", "--json", *args).output
    return {op["name"]: op for op in json.loads(out.strip().splitlines()[-1])["ops"]}


def test_the_record_shows_per_operator(project):
    write(project, "bench-20261201T171420Z.json", record().model_dump_json())
    ops = status()
    assert ops["softmax"]["library"] == {
        "record": "library/bench-20261201T171420Z.json",
        "created": "2026-12-01T17:14:20+00:00",
        "gpu": "NVIDIA H200",
        "complete": True,
        "lean_launches": True,
        "peers": ["eager", "compile"],  # Liger raised on softmax, FlagGems did not import
        "shapes": 3,
        "time_over_best_peer": 1.1,
        "time_over_best_peer_worst": 2.5,
        "time_over_best_peer_worst_shape": "1x32000",
        "kernel_time_over_best_peer": 1.05,
        "routed_time_over_eager": 0.81,
        "decode_host_excess_us": 25.83,
        "decode_host_target_met": False,
        "routed_within_noise": False,
        "routed_over_noise": ["device_us:1x32000"],
        # eager and compile tie at the one shape: each is the fastest there
        "peer_figures": [
            {"peer": "eager", "shapes": 1, "fastest_at": 1, "time_over": 1.0},
            {"peer": "compile", "shapes": 1, "fastest_at": 1, "time_over": 1.0},
        ],
        # An older record: no QuACK worker in it, so not run, and said so.
        "missing_peers": [
            {
                "peer": "quack",
                "why": "not run",
                "shapes": 1,
                "of": 1,
                "reason": "no figure of it in this record",
            },
            {
                "peer": "liger",
                "why": "failed",
                "shapes": 1,
                "of": 1,
                "reason": "RuntimeError: too wide",
            },
            {
                "peer": "flaggems",
                "why": "not installed",
                "shapes": 1,
                "of": 1,
                "reason": "ImportError",
            },
        ],
    }
    rms = ops["rms_norm"]["library"]
    assert rms["peers"] == ["eager", "liger"]
    assert (rms["time_over_best_peer"], rms["shapes"]) == (0.9, 9)
    assert rms["routed_time_over_eager"] is None and rms["decode_host_excess_us"] is None
    assert rms["routed_within_noise"] is None
    # Not in the record: nothing from it.
    assert ops["silu_and_mul"]["library"] is None

    out = invoke("--all").output
    assert "1.10× time" in out and "worst 2.50×" in out and "1x32000" in out
    assert "library bench: evaluations/library/bench-20261201T171420Z.json" in out
    narrow = invoke("--all", width=80).output
    assert "vs best peer: 1.10× time · worst 2.50× 1x32000" in narrow
    assert "…" not in narrow
    page = (project.root / "evaluations" / "index.html").read_text()
    assert "vs best peer (library bench)" in page and "1.10× time" in page
    assert "target ≤ 2 µs: not met" in page
    assert "torch call under use(): slower past noise at device_us:1x32000" in page


def test_the_newest_record_wins(project):
    # Newest by the time inside, not the file name; a tie goes to the later name.
    write(project, "bench-a.json", record("2026-12-02T09:00:00+00:00", scale=2).model_dump_json())
    write(project, "bench-b.json", record("2026-12-01T09:00:00+00:00").model_dump_json())
    soft = status()["softmax"]["library"]
    assert soft["record"] == "library/bench-a.json" and soft["time_over_best_peer"] == 2.2
    write(project, "bench-c.json", record("2026-12-02T09:00:00+00:00", scale=3).model_dump_json())
    assert newest_record().newest.path == "library/bench-c.json"


def test_a_broken_record_is_passed_over(project):
    write(project, "bench-20261201T000000Z.json", record().model_dump_json())
    write(project, "bench-20261202T000000Z.json", "{not json")
    missing = record("2026-12-03T00:00:00+00:00").model_dump()
    del missing["budget_s"]
    write(project, "bench-20261203T000000Z.json", json.dumps(missing))
    bad_time = record("yesterday").model_dump_json()
    write(project, "bench-20261204T000000Z.json", bad_time)

    found = newest_record()
    assert found.newest.path == "library/bench-20261201T000000Z.json"
    reasons = {s.path: s.reason for s in found.skipped}
    assert "Invalid JSON" in reasons["library/bench-20261202T000000Z.json"]
    assert "budget_s: Field required" in reasons["library/bench-20261203T000000Z.json"]
    assert "created is not an ISO time" in reasons["library/bench-20261204T000000Z.json"]

    assert status()["softmax"]["library"]["time_over_best_peer"] == 1.1
    out = invoke("--all").output
    assert "library bench: skipped evaluations/library/bench-20261202T000000Z.json" in out
    page = (project.root / "evaluations" / "index.html").read_text()
    assert "skipped evaluations/library/bench-20261203T000000Z.json" in page


def test_no_record_no_figures(project):
    write(project, "bench-broken.json", "")
    ops = status()
    assert all(op["library"] is None for op in ops.values())
    assert "library bench: no record under evaluations/library/" in invoke("--all").output


def test_the_page_folds_the_dispatch_shapes_under_their_counts(project, wide_dispatch):
    n = wide_dispatch
    invoke("--all")
    page = (project.root / "evaluations" / "index.html").read_text()
    brief = (
        f"NVIDIA H200: kernel at {n['direct']} of {n['shapes']}, routed at {n['routed']}; "
        f"by device time at {n['graphs']}"
    )
    assert f'<details class="dispatch"><summary>{brief}</summary><small class="dim">' in page
    # Folded, every shape is still there, each list where the terminal's line has it.
    full = page.split(f"{brief}</summary>", 1)[1].split("</details>", 1)[0]
    assert "kernel at 9 of 12 (4096x4096, 8192x4096, 16384x4096," in full
    assert "routed at 7 (4096x4096," in full and "1024x151936, 1x151936)" in full
    assert "by device time (CUDA graphs) at 11 (" in full and "1x32000, 4x32000)" in full


def _bench_script():
    """scripts/bench_library.py, for its summary: the synthetic records below are ranked as the
    bench ranks a real one."""
    return script("bench_library")


def _shape_m(op: str, shape: str, impl: str, device_us: float | None, **kw) -> Measurement:
    rows, cols = (int(d) for d in shape.split("x"))
    return Measurement(
        op=op,
        shape=shape,
        dims={"rows": rows, "cols": cols},
        dtype="bfloat16",
        decode=rows <= 64,
        impl=impl,
        device_us=device_us,
        **kw,
    )


def _serving_record() -> LibraryBench:
    """softmax against QuACK, Liger and FlagGems at two shapes: QuACK the fastest at 1x32000 and
    refusing 64x151936, Liger the fastest there, FlagGems disagreeing with eager at both."""
    from kernelgen.bench.library import Worker

    ms = []
    for shape, mine, eager, compile_, quack, liger in (
        ("1x32000", 10.0, 12.0, 11.0, 8.0, 20.0),
        ("64x151936", 40.0, 60.0, 70.0, None, 45.0),
    ):
        ms += [
            _shape_m("softmax", shape, "kernelgen_ops", mine),
            _shape_m("softmax", shape, "eager", eager),
            _shape_m("softmax", shape, "compile", compile_),
            _shape_m("softmax", shape, "liger", liger),
            _shape_m("softmax", shape, "flaggems", None, error="disagrees with eager: max 3.2"),
        ]
        refused = "ValueError: QuACK's softmax refuses rows wider than 131072"
        ms.append(_shape_m("softmax", shape, "quack", quack, error=None if quack else refused))
    return LibraryBench(
        created="2026-12-05T10:00:00+00:00",
        command="python scripts/bench_library.py out.json --ops softmax",
        budget_s=300.0,
        environment={"device": "cuda", "gpu": "NVIDIA H200"},
        workers=[
            Worker(group=g, state="finished") for g in ("kernelgen", "liger", "flaggems", "quack")
        ],
        availability=[Availability(impl=g, available=True) for g in ("liger", "flaggems", "quack")],
        measurements=ms,
        summary=_bench_script().summarize(ms),
        complete=True,
    )


def _silu_only_record() -> LibraryBench:
    """The newest record: silu_and_mul alone, the kernel libraries' workers not started, the
    vllm family's worker (no op of its here, but a stopped worker all the same) cut short."""
    from kernelgen.bench.library import Worker

    ms = [
        _shape_m("silu_and_mul", "16x14336", impl, us)
        for impl, us in (("kernelgen_ops", 5.0), ("eager", 9.0), ("compile", 7.0))
    ]
    return LibraryBench(
        created="2026-12-06T10:00:00+00:00",
        command="python scripts/bench_library.py out.json --ops silu_and_mul --groups kernelgen",
        budget_s=100.0,
        environment={"device": "cuda", "gpu": "NVIDIA H200"},
        workers=[
            Worker(group="kernelgen", state="finished"),
            Worker(group="flaggems", state="timed_out", note="stopped after its 57 s share"),
        ],
        measurements=ms,
        summary=_bench_script().summarize(ms),
        complete=False,
    )


def test_each_operator_from_the_newest_record_that_measured_it(project):
    # Three records, as a bench split over GPU calls leaves them: each operator's figures come
    # from the newest that measured it, not from the newest alone.
    write(project, "bench-1.json", record().model_dump_json())
    write(project, "bench-2.json", _serving_record().model_dump_json())
    write(project, "bench-3.json", _silu_only_record().model_dump_json())
    found = newest_record()
    assert found.newest.path == "library/bench-3.json"
    assert [s.path for s in found.records] == [f"library/bench-{i}.json" for i in (3, 2, 1)]
    ops = status()
    assert ops["softmax"]["library"]["record"] == "library/bench-2.json"
    assert ops["rms_norm"]["library"]["record"] == "library/bench-1.json"
    assert ops["silu_and_mul"]["library"]["record"] == "library/bench-3.json"
    out = invoke("--all", width=400).output
    assert (
        "library bench: evaluations/library/bench-3.json (NVIDIA H200, 2026-12-06, cut short); "
        "softmax from evaluations/library/bench-2.json (NVIDIA H200, 2026-12-05); "
        "rms_norm from evaluations/library/bench-1.json (NVIDIA H200, 2026-12-01)"
    ) in " ".join(out.split())


def test_the_strongest_peer_ranks_and_the_missing_ones_say_why(project):
    write(project, "bench-2.json", _serving_record().model_dump_json())
    write(project, "bench-3.json", _silu_only_record().model_dump_json())
    soft = status()["softmax"]["library"]
    # At 1x32000 QuACK is the best peer (10 / 8), at 64x151936 Liger (40 / 45).
    assert soft["peers"] == ["eager", "compile", "liger", "quack"]
    assert soft["time_over_best_peer"] == round((10 / 8 * 40 / 45) ** 0.5, 4)
    assert (soft["time_over_best_peer_worst"], soft["time_over_best_peer_worst_shape"]) == (
        1.25,
        "1x32000",
    )
    figures = {f["peer"]: f for f in soft["peer_figures"]}
    assert figures["quack"] == {"peer": "quack", "shapes": 1, "fastest_at": 1, "time_over": 1.25}
    assert figures["liger"]["fastest_at"] == 1 and figures["liger"]["shapes"] == 2
    assert figures["eager"]["fastest_at"] == 0
    assert soft["missing_peers"] == [
        {
            "peer": "quack",
            "why": "refused",
            "shapes": 1,
            "of": 2,
            "reason": "ValueError: QuACK's softmax refuses rows wider than 131072",
        },
        {
            "peer": "flaggems",
            "why": "failed",
            "shapes": 2,
            "of": 2,
            "reason": "disagrees with eager: max 3.2",
        },
    ]
    silu = status()["silu_and_mul"]["library"]
    assert {m["peer"]: (m["why"], m["reason"]) for m in silu["missing_peers"]} == {
        "liger": ("not run", "no figure of it in this record"),
        "flaggems": ("failed", "its worker timed_out: stopped after its 57 s share"),
    }
    invoke("--all")
    page = (project.root / "evaluations" / "index.html").read_text()
    assert "no figure: quack (refused at 1 of 2 shapes), flaggems (failed)" in page
    assert "no figure: liger (not run), flaggems (failed)" in page
    out = " ".join(invoke("--all", width=400).output.split())
    assert "no figure: quack (refused at 1 of 2 shapes), flaggems (failed)" in out


def test_a_peer_not_installed_is_named_with_the_reason(project):
    # A serving family the worker could not import: its availability says why, and each shape
    # of the op carries the worker's "not available" row (scripts/bench_library_worker.missing).
    rec = _serving_record()
    rec.availability = [a for a in rec.availability if a.impl != "quack"] + [
        Availability(
            impl="quack",
            available=False,
            reason="ModuleNotFoundError: No module named 'quack'",
        )
    ]
    rec.measurements = [m for m in rec.measurements if m.impl != "quack"] + [
        _shape_m("softmax", s, "quack", None, error="quack not available")
        for s in ("1x32000", "64x151936")
    ]
    write(project, "bench-2.json", rec.model_dump_json())
    missing = status()["softmax"]["library"]["missing_peers"]
    assert missing[0] == {
        "peer": "quack",
        "why": "not installed",
        "shapes": 2,
        "of": 2,
        "reason": "quack not available",
    }


def test_every_peer_the_bench_times_is_one_the_page_looks_for(monkeypatch):
    """OP_PEERS, which the page reads, against what the bench starts: each serving family's ops
    (scripts/peers.FAMILIES) and the kernel libraries' (the worker's candidate lists)."""
    import sys
    import types

    from kernelgen.bench.library import OP_PEERS, PEERS

    bench = _bench_script()
    import peers

    from kernelgen.spec import load_spec

    monkeypatch.setitem(sys.modules, "flag_gems", types.ModuleType("flag_gems"))
    worker = script("bench_library_worker")
    expected: dict[str, set[str]] = {}
    for group, family in peers.FAMILIES.items():
        for op in family.ops:
            expected.setdefault(op, set()).add(group)
    for op in OP_PEERS:
        load_spec(op)  # every key an operator
        if worker._liger_candidates(op):
            expected.setdefault(op, set()).add("liger")
        if worker._flaggems_candidates(op):
            expected.setdefault(op, set()).add("flaggems")
    assert {op: set(p) for op, p in OP_PEERS.items()} == expected
    assert all(p in PEERS for ps in OP_PEERS.values() for p in ps)
    assert set(bench.GROUPS) - {"kernelgen"} <= set(PEERS)


def test_an_operator_is_set_beside_peers_timed_on_its_own_gpu(project):
    """A newer record from an H100 does not rank operators whose figures are the H200's: each
    takes the newest record of its own GPU, and the note says which."""
    write(project, "bench-1.json", record().model_dump_json())
    h100 = record(created="2026-12-07T08:39:00+00:00", scale=3.0)
    h100.environment["gpu"] = "NVIDIA H100 80GB HBM3"
    write(project, "bench-2.json", h100.model_dump_json())
    assert newest_record().newest.path == "library/bench-2.json"
    ops = status()
    assert ops["softmax"]["device"] == "NVIDIA H200"
    assert ops["softmax"]["library"]["record"] == "library/bench-1.json"
    assert ops["softmax"]["library"]["time_over_best_peer"] == 1.1  # bench-1's, not 3.3
    assert ops["rms_norm"]["library"]["record"] == "library/bench-1.json"
    out = " ".join(invoke("--all", width=400).output.split())
    assert (
        "library bench: evaluations/library/bench-2.json (NVIDIA H100 80GB HBM3, 2026-12-07); "
        "rms_norm, softmax from evaluations/library/bench-1.json (NVIDIA H200, 2026-12-01)"
    ) in out
