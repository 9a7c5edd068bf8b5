"""fast_p as KernelBench scores it, over every problem of the record: correct (accepted by
kernelgen and passed by KernelBench's check) and faster than p times the baseline; and the last
line of `kernelgen report kernelbench --json`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.cli import app
from kernelgen.kernelbench.results import SuiteProblem, SuiteRecord, SuiteSettings
from kernelgen.kernelbench.scores import merged, row, state_path, summarize


def _p(level: int, number: int, status: str, **kw: object) -> SuiteProblem:
    fields = {"selected": True, "device": "cuda", **kw}
    return SuiteProblem(
        level=level, problem=number, title=f"P{number}", op=f"kb{level}_{number}_p{number}",
        status=status, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _record(name: str = "suite") -> SuiteRecord:
    """Level 1: two correct (2x and 1.2x over eager), one accepted that KernelBench's check
    fails, one rejected, one not attempted. Level 2: one correct but slower than eager (and no
    compile time), one never selected, one left running by a killed suite."""
    ok = {"kb_correct": True, "run": "r", "candidate": "c"}
    problems = [
        _p(1, 1, "accepted", speedup_vs_eager=2.0, speedup_vs_compile=0.8, **ok),
        _p(1, 2, "accepted", speedup_vs_eager=1.2, speedup_vs_compile=1.6, **ok),
        _p(1, 3, "accepted", kb_correct=False, run="r", candidate="c"),
        _p(1, 4, "rejected", category="incorrect", reason="1 judged, none accepted"),
        _p(1, 5, "not attempted", reason="no proposer: no candidates for it"),
        _p(2, 1, "accepted", speedup_vs_eager=0.5, **ok),
        _p(2, 2, "pending", selected=False),
        _p(2, 3, "running", started="20260101-000000"),
    ]
    settings = SuiteSettings(
        levels=[1, 2], device="cuda", rounds=4, candidates=2, repairs=2, proposer="agent"
    )
    return SuiteRecord(name=name, settings=settings, problems=problems)


def test_fast_p_counts_over_every_problem_of_the_levels() -> None:
    rows = [row(p) for p in _record().problems]
    s = summarize(rows)
    assert (s.problems, s.accepted, s.kb_correct, s.rejected, s.not_attempted) == (8, 4, 3, 1, 3)
    assert s.eager.fast_0 == 3 / 8  # correct: 1:1, 1:2, 2:1 (1:3 fails KernelBench's check)
    assert s.eager.fast_1 == 2 / 8  # 2.0x and 1.2x
    assert s.eager.fast_1_5 == 1 / 8  # 2.0x
    assert s.compile.fast_0 == 3 / 8
    assert s.compile.fast_1 == 1 / 8  # 1.6x; 0.8x is slower
    assert s.compile.fast_1_5 == 1 / 8
    assert s.eager.timed == 3 and math.isclose(s.eager.geomean or 0, (2.0 * 1.2 * 0.5) ** (1 / 3))
    assert s.compile.timed == 2 and math.isclose(s.compile.geomean or 0, (0.8 * 1.6) ** 0.5)
    one, two = s.levels["1"], s.levels["2"]
    assert (one.problems, one.eager.fast_0, one.eager.fast_1, one.eager.fast_1_5) == (
        5, 2 / 5, 2 / 5, 1 / 5,
    )  # fmt: skip
    assert (two.problems, two.eager.fast_0, two.eager.fast_1) == (3, 1 / 3, 0.0)


def test_an_unfinished_problem_shows_as_not_attempted_with_why() -> None:
    shown = {r.problem: r for r in (row(p) for p in _record().problems) if r.level == 2}
    assert (shown[2].status, shown[2].reason) == ("not attempted", "not selected")
    assert shown[3].status == "not attempted" and "in progress" in (shown[3].reason or "")
    assert shown[1].category is None  # a category is a rejection's


def test_split_suites_merge_at_the_furthest_each_problem_got() -> None:
    a = _record("a")
    b = _record("b")
    b.problems[3] = _p(1, 4, "accepted", kb_correct=True, speedup_vs_eager=1.1, run="r2")
    got = {p.key: p for p in merged([a, b])}
    assert got[(1, 4)].status == "accepted" and got[(1, 4)].run == "r2"
    assert got[(1, 1)].speedup_vs_eager == 2.0 and len(got) == 8


def test_report_json_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    store.write_atomic(state_path("suite"), _record().model_dump_json())
    result = CliRunner().invoke(app, ["report", "kernelbench", "--json"])
    assert result.exit_code == 0, result.output
    last = json.loads(result.output.strip().splitlines()[-1])
    assert set(last) == {"problems", "summary"}
    keys = {"level", "problem", "op", "status", "kb_correct", "speedup_vs_eager"}
    keys |= {"speedup_vs_compile", "device", "run"}
    assert all(keys <= set(p) for p in last["problems"]) and len(last["problems"]) == 8
    assert {p["status"] for p in last["problems"]} == {"accepted", "rejected", "not attempted"}
    rejected = next(p for p in last["problems"] if p["status"] == "rejected")
    assert rejected["category"] == "incorrect"
    for against in ("eager", "compile"):
        assert {"fast_0", "fast_1", "fast_1.5", "geomean"} <= set(last["summary"][against])
    assert last["summary"]["eager"]["fast_1.5"] == 1 / 8
    assert set(last["summary"]["levels"]) == {"1", "2"}

    text = CliRunner().invoke(app, ["report", "kernelbench"])
    assert text.exit_code == 0 and "kb1_4_p4" in text.output and "fast_1.5" in text.output
    page = CliRunner().invoke(app, ["report", "kernelbench", "--format", "html"])
    assert page.exit_code == 0, page.output
    html = (state_path("suite").parent / "report.html").read_text()
    assert "KernelAgent" in html and "METR" in html and "H100" in html and "<svg" not in html
    assert "data:image/svg+xml;base64," in html  # the plots, inline


def test_no_suite_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    result = CliRunner().invoke(app, ["report", "kernelbench", "--json"])
    assert result.exit_code != 0 and "suite kernelbench" in result.output


def test_a_row_names_the_gpu_of_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An H100's figures are not an H200's: the row says whose they are, read from the run."""
    from kernelgen.records import Budget, Environment, RunRecord, RunSettings

    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    env = Environment(
        device="cuda", gpu="NVIDIA H100 80GB HBM3", torch="2.11", triton="3.6.0", python="3.12",
        host="vm", interpreter=False,
    )  # fmt: skip
    op = "kb1_1_p1"
    settings = RunSettings(op=op, proposer="files", device="cuda", budget=Budget(), seed=1)
    store.save_run(RunRecord(id="r", op=op, environment=env, state="finished", settings=settings))
    p = _p(1, 1, "accepted", kb_correct=True, run="r", candidate="c")
    assert row(p).device == "NVIDIA H100 80GB HBM3"
    assert row(_p(1, 2, "rejected", run="gone")).device == "cuda"  # no run record: the kind
    record = SuiteRecord(name="suite", settings=_record().settings, problems=[p])
    store.write_atomic(state_path("suite"), record.model_dump_json())
    text = CliRunner().invoke(app, ["report", "kernelbench"], terminal_width=200)
    assert text.exit_code == 0 and "measured on NVIDIA H100 80GB HBM3" in text.output


def test_a_record_of_two_gpus_is_summed_up_per_gpu_too() -> None:
    """A record rejudged part-way holds an H200's figures and an H100's: the summary gives each
    GPU's fast_p and geomeans over the problems it timed, beside the whole record's; a record
    of one GPU has none."""
    rows = [
        r.model_copy(update={"device": gpu})
        for r, gpu in zip(
            [row(p) for p in _record().problems[:3]],
            ["NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H200"],
            strict=True,
        )
    ] + [row(p) for p in _record().problems[3:]]
    s = summarize(rows)
    assert set(s.gpus) == {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}
    h200, h100 = s.gpus["NVIDIA H200"], s.gpus["NVIDIA H100 80GB HBM3"]
    assert (h200.problems, h200.accepted, h200.kb_correct) == (2, 2, 1)
    assert h200.eager.fast_1 == 1 / 2 and h200.eager.geomean == 2.0  # 1:3 fails KB's check
    assert (h100.problems, h100.eager.fast_1, h100.compile.fast_1) == (1, 1.0, 1.0)
    assert s.eager.fast_1 == 2 / 8  # the whole record's, as before
    assert summarize([row(p) for p in _record().problems]).gpus == {}  # "cuda" is no GPU's name
