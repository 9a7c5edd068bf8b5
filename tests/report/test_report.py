"""`kernelgen report`: terminal output through CliRunner, the files beside the run, --all --json."""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.cli import app
from kernelgen.cli import pipeline as cli_commands
from kernelgen.errors import UsageError
from kernelgen.records import Budget, RunRecord, RunSettings
from kernelgen.report import render_run, render_status

runner = CliRunner()


def invoke(*args: str, width: int = 140):
    """`kernelgen report ARGS` on a terminal `width` columns wide."""
    with pytest.MonkeyPatch.context() as mp:
        # The CLI's console is made at import; give it the width of the terminal under test.
        mp.setattr(cli_commands, "out", Console(width=width, highlight=False))
        result = runner.invoke(app, ["report", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def flat(out: str) -> str:
    """The output with panel borders and line breaks taken out."""
    return re.sub(r"[\s│]+", " ", out)


def test_text_report_of_a_run_with_a_best(project):
    r = invoke("softmax", "--run", project.cuda_run)
    assert r.exit_code == 0, r.output
    out = r.output
    # The summary: operator, proposer and model, device, rounds, tokens and cost, why it stopped.
    for words in (
        "kernelgen report · softmax",
        f"{project.cuda_run} (finished)",
        "llm · gpt-test at http://127.0.0.1:8000/v1",
        "NVIDIA H200 (driver 580.95.05, CUDA 13.0)",
        "2 of 2 (2 candidates a round",
        "4 (2 accepted, 2 rejected)",
        "12,345 tokens (10,000 prompt, 2,345 completion) in 6 calls · $0.0420",
        "budget: 2 of 2 rounds done",
        "r2-c1 (round 2, llm · gpt-test): 2.10× the seed, 1.69× eager, 1.82× torch.compile",
    ):
        assert words in out, words
    # Per shape: seed, best, eager, compile, speedups and % of the limit.
    row = next(line for line in out.splitlines() if line.lstrip().startswith("256x151936"))
    assert row.split() == [
        "256x151936",
        "846",
        "78.0",
        "94.3",
        "150",
        "1.21×",
        "1.93×",
        "10.84×",
        "4%",
        "→",
        "47%",
        "memory",
    ]
    assert re.search(r"geomean\s+1\.69×\s+1\.82×\s+2\.10×", out)
    # The history: every candidate with its verdict, category, reason and speedup.
    assert re.search(r"1\s+r1-c0\s+seed\s+rejected\s+incorrect\s+odd/bfloat16/normal", out)
    assert re.search(r"1\s+r1-c1\s+seed\s+accepted\s+1\.43×\s+1\.32×\s+↑ was best", out)
    assert re.search(r"2\s+r2-c0\s+r1-c1\s+rejected\s+compile\s+OutOfResources", out)
    assert re.search(r"2\s+r2-c1\s+r1-c1\s+accepted\s+1\.62×\s+2\.10×\s+★ best", out)
    assert re.search(r"_softmax_kernel\s+40\s+0\s+16\s+8\s+1", out)
    # The diff from the seed to the best, with line numbers.
    assert "Diff: seed → r2-c1" in out
    assert "seeds/softmax.py → candidates/r2-c1/source.py" in out
    assert re.search(r"17\s+-\s+DEFAULT_CONFIG = \{\"num_warps\": 4\}", out)
    assert re.search(r"17\s+\+\s+DEFAULT_CONFIG = \{\"num_warps\": 8\}", out)
    assert re.search(r"35\s+\+\s+for start in range\(0, n_cols, BLOCK_SIZE\):", out)
    assert re.search(r"@@ -26,17 \+26,27 @@", out)
    # The files beside the run.
    folder = project.run_dir("softmax", project.cuda_run)
    assert "wrote evaluations/softmax/" in out
    assert (folder / "report.md").is_file() and (folder / "report.html").is_file()


def test_narrow_terminal_moves_long_cells_below_tables(project):
    out = invoke("softmax", "--run", project.cuda_run, width=80).output
    assert "…" not in out
    assert "r1-c0: odd/bfloat16/normal: max abs err 0.31" in out
    assert re.search(r"32768x1024\s+39\.9\s+37\.5", out)
    panel = [line for line in out.splitlines() if line.startswith(("│", "╭", "╰"))]
    assert panel and all(len(line) <= 80 for line in panel)


def test_markdown_and_html_beside_the_run(project):
    report = render_run("softmax", project.cuda_run)
    folder = project.run_dir("softmax", project.cuda_run)
    assert report.written == [folder / "report.md", folder / "report.html"]
    md = (folder / "report.md").read_text()
    assert md.startswith(f"# kernelgen report: softmax, run {project.cuda_run}")
    assert "| 256x151936 | bfloat16 | 846 | 78.0 | 94.3 | 150 | 1.21× | 1.93× | 10.84× |" in md
    assert "| 2 | **r2-c1** | r1-c1 | llm · gpt-test | accepted |" in md
    assert "```diff\n--- seed (seeds/softmax.py)\n+++ r2-c1 (candidates/r2-c1/source.py)" in md
    assert '-DEFAULT_CONFIG = {"num_warps": 4}\n+DEFAULT_CONFIG = {"num_warps": 8}' in md

    page = (folder / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<img alt="') == 3
    assert 'id="diff-sbs"' in page and 'id="diff-unified"' in page
    assert page.count('<td class="code add">') > 10 and page.count('<td class="code del">') > 5
    assert '<tr class="best focus">' in page
    assert_self_contained(page)


def assert_self_contained(page: str) -> None:
    """Nothing the browser would fetch: no scripts, stylesheets, fonts or non-data images."""
    assert "<script" not in page and "<link" not in page
    assert "@import" not in page and "url(" not in page
    for src in re.findall(r"""\bsrc\s*=\s*["']([^"']*)""", page):
        assert src.startswith("data:"), src
    # Links go to other reports of the same folder tree, never off the machine.
    for href in re.findall(r"""\bhref\s*=\s*["']([^"']*)""", page):
        assert ":" not in href and not href.startswith(("/", "\\")), href


def test_candidate_report_diffs_against_its_parent(project):
    r = invoke("softmax", "--run", project.cuda_run, "--candidate", "r2-c1")
    assert r.exit_code == 0, r.output
    assert "Diff: r1-c1 → r2-c1" in r.output
    assert "candidates/r1-c1/source.py → candidates/r2-c1/source.py" in r.output
    # The change of r1-c1 (num_warps) is in the parent already: not part of this diff.
    assert "DEFAULT_CONFIG" not in r.output
    folder = project.run_dir("softmax", project.cuda_run)
    assert "Diff: r1-c1 → r2-c1" in (folder / "candidates/r2-c1/report.md").read_text()
    # The run's own report stays seed -> best.
    assert "## Diff: seed → r2-c1" in (folder / "report.md").read_text()


def test_rejected_candidate_shows_its_failure(project):
    out = invoke("softmax", "--run", project.cuda_run, "--candidate", "r1-c0").output
    assert "Failed cases of r1-c0" in out
    assert re.search(r"odd/bfloat16/normal\s+0\.31\s+0\.12\s+0\.004\s+mismatch at row 3", out)
    assert "r1-c0 has no benchmark record" in out
    assert "Diff: seed → r1-c0" in out
    assert re.search(r"-\s+num = tl\.exp\(x - tl\.max\(x, axis=0\)\)", out)


def test_unknown_candidate_is_a_usage_error(project):
    r = invoke("softmax", "--run", project.cuda_run, "--candidate", "r9-c9")
    assert r.exit_code == 2
    assert "no candidate 'r9-c9'" in r.output and "r1-c0, r1-c1, r2-c0, r2-c1" in r.output


def test_unknown_run_names_the_latest(project):
    r = invoke("softmax", "--run", "nope")
    assert r.exit_code == 2  # what was given is wrong: a usage error
    assert "no run 'nope' for softmax" in r.output and project.rejected_run in r.output


def test_the_shipped_run_by_default(project):
    # The library ships softmax from the CUDA run, which is older than the all-rejected one:
    # a bare `kernelgen report softmax` reviews what users import.
    assert render_run("softmax").data.run.id == project.cuda_run
    # No library entry for rms_norm: its latest run.
    assert render_run("rms_norm").data.run.id == project.running_run


def test_latest_run_when_the_shipped_one_is_not_stored(project):
    manifest = project.root / "generated" / "kernelgen_ops" / "MANIFEST.json"
    manifest.write_text(manifest.read_text().replace(project.cuda_run, "20990101-000000-gone"))
    assert render_run("softmax").data.run.id == project.rejected_run


def test_run_where_everything_was_rejected(project):
    out = invoke("softmax", "--run", project.rejected_run).output
    assert "No candidate was accepted: every one was rejected" in out
    assert "the seed (no candidate was accepted)" in out
    assert "Per shape: the seed against torch eager and torch.compile" in out
    # The seed's own row: no second column of the same times, no speedup over itself.
    assert re.search(r"256x151936\s+846\s+94\.3\s+150\s+0\.11×\s+0\.18×\s+4%\s+memory", out)
    assert "× seed" not in out.split("History of candidates")[0]
    assert re.search(r"r1-c0\s+seed\s+rejected\s+compile\s+OutOfResources: registers", out)
    assert re.search(r"r2-c0\s+seed\s+rejected\s+timeout\s+ran past the 60 s limit", out)
    assert "The seed remained the best: there is no diff to show." in out
    page = (project.run_dir("softmax", project.rejected_run) / "report.html").read_text()
    assert "The seed remained the best" in page and page.count('<img alt="') == 3


def test_cpu_run_without_timings(project):
    out = invoke("silu_and_mul", "--run", project.cpu_run).output
    assert "CPU (Triton interpreter: no timings)" in out
    assert "Ran on CPU through the Triton interpreter: correctness only, no timings" in out
    assert "Per shape: no timings (the run was on CPU)." in out
    assert re.search(r"r1-c1\s+—\s+rejected\s+no_code\s+the file held no Python code", out)
    assert f"--run {project.cpu_run} --candidate r1-c0" in flat(out)
    folder = project.run_dir("silu_and_mul", project.cpu_run)
    page = (folder / "report.html").read_text()
    assert "No plots: this run has no timings." in page and "<img" not in page
    assert "No timings: the run was on CPU." in (folder / "report.md").read_text()
    # The accepted candidate is reviewable on its own.
    out = invoke("silu_and_mul", "--run", project.cpu_run, "--candidate", "r1-c0").output
    assert re.search(r"\+\s+# vectorised", out)


def test_an_open_agent_run_says_what_may_change(project):
    """An agent's run stays open after its last submission; its figures are not "in progress"."""
    run = store.load_run("rms_norm", project.running_run)
    run.settings.proposer, run.promoted = "agent", True
    store.save_run(run)
    out = flat(invoke("rms_norm").output)
    assert "Run in progress" not in out
    assert (
        "Agent run, open for more submissions (1 so far): a judged candidate's figures are "
        "final, the run's best may change with a later submission; its best was promoted into "
        "generated/." in out
    ), out
    # Not "(running)" hours after the last submission: when it was last submitted to.
    last = max(c.created for c in store.load_candidates("rms_norm", run.id))
    day, clock = last[:10], last[11:16]
    assert f"{run.id} (open, last submission {day} {clock} UTC)" in out, out
    assert "Stopped not yet: open for more submissions" in out
    assert "Submissions 1 (each judged as a round of its own)" in out
    page = (project.run_dir("rms_norm", run.id) / "report.html").read_text()
    assert 'class="badge state-running">open</span>' in page


def test_run_in_progress(project):
    out = invoke("rms_norm").output
    assert f"{project.running_run} (running)" in out
    assert "Run in progress (1 of 2 rounds done" in out
    assert "2 (1 accepted, 0 rejected, 1 pending)" in out
    assert re.search(r"r2-c0\s+r1-c0\s+pending", out)
    assert "still running" in out
    page = (project.run_dir("rms_norm", project.running_run) / "report.html").read_text()
    assert 'class="badge state-running"' in page


def test_run_just_started(project):
    run = store.load_run("rms_norm", project.running_run)
    fresh = RunRecord(
        id="20261130-130000-llm-ffff",
        op="rms_norm",
        settings=RunSettings(op="rms_norm", proposer="llm", device="cuda", budget=Budget(), seed=1),
        environment=run.environment,
        state="running",
    )
    store.save_run(fresh)
    out = invoke("rms_norm", "--run", fresh.id).output
    assert "No candidates were recorded yet." in out
    assert "No benchmark of the seed was recorded yet." in out
    assert "History: no candidates yet." in out


def test_seed_changed_since_the_run(project):
    seed = project.root / "seeds" / "softmax.py"
    seed.write_text(seed.read_text() + "\n# edited\n")
    out = invoke("softmax", "--run", project.cuda_run).output
    assert "seeds/softmax.py changed since this run" in out


def test_formats_and_out(project, tmp_path):
    md = invoke("softmax", "--run", project.cuda_run, "--format", "md").output
    assert md.startswith("# kernelgen report: softmax") and "wrote" not in md
    assert "| 4096x4096 | bfloat16 | 20.4 | 19.8 |" in md  # not wrapped at the terminal width

    for fmt, start in (("md", "# kernelgen report"), ("html", "<!DOCTYPE html>")):
        path = tmp_path / f"r.{fmt}"
        r = invoke("softmax", "--run", project.cuda_run, "--format", fmt, "--out", str(path))
        assert r.exit_code == 0 and path.read_text().startswith(start)
        assert str(path) in r.output.replace("\n", "")

    path = tmp_path / "r.txt"
    invoke("softmax", "--run", project.cuda_run, "--out", str(path))
    text = path.read_text()
    assert "History of candidates" in text and "\x1b[" not in text

    with pytest.raises(UsageError, match="--format 'pdf'"):
        render_run("softmax", project.cuda_run, fmt="pdf")  # type: ignore[arg-type]


def test_plots_without_matplotlib(project, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    render_run("softmax", project.cuda_run)
    page = (project.run_dir("softmax", project.cuda_run) / "report.html").read_text()
    assert "Plots unavailable: matplotlib is not installed" in page and "<img" not in page
    assert 'id="diff-sbs"' in page


def test_matplotlib_is_imported_lazily():
    code = (
        "import sys, kernelgen.report, kernelgen.report.html, kernelgen.report.plots;"
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def test_status_json(project):
    r = invoke("--all", "--json")
    assert r.exit_code == 0, r.output
    status = json.loads(r.output.strip().splitlines()[-1])
    assert list(status) == ["ops"]
    keys = [
        "name",
        "generated",
        "device",
        "speedup_vs_eager",
        "speedup_vs_compile",
        "worst_shape_vs_best_peer",
        "limit_pct",
        "run",
        "library",
    ]
    assert all(list(op) == keys for op in status["ops"])
    ops = {op["name"]: op for op in status["ops"]}
    assert list(ops) == ["rms_norm", "silu_and_mul", "softmax"]

    soft = ops["softmax"]
    best, eager, comp = project.best_us, project.eager_us, project.compile_us
    assert soft["generated"] is True and soft["device"] == "NVIDIA H200"
    assert soft["run"] == project.cuda_run
    assert soft["speedup_vs_eager"] == pytest.approx(
        _geomean([e / b for e, b in zip(eager, best, strict=True)])
    )
    assert soft["speedup_vs_compile"] == pytest.approx(
        _geomean([c / b for c, b in zip(comp, best, strict=True)])
    )
    assert soft["worst_shape_vs_best_peer"] == pytest.approx(
        min(min(e, c) / b for e, c, b in zip(eager, comp, best, strict=True))
    )
    shapes = [(4096, 4096), (32768, 1024), (1024, 32768), (256, 151936), (1, 32000), (16, 151936)]
    limits = [100 * (4 * r * c / 4270e3) / b for (r, c), b in zip(shapes, best, strict=True)]
    assert soft["limit_pct"] == pytest.approx(statistics.median(limits))

    # Not promoted, but measured: the running run is its evidence.
    assert ops["rms_norm"]["generated"] is False and ops["rms_norm"]["run"] == project.running_run
    assert ops["rms_norm"]["speedup_vs_eager"] is not None
    # Only a CPU run: nothing to show.
    assert ops["silu_and_mul"] == {
        "name": "silu_and_mul",
        "generated": False,
        "device": None,
        "speedup_vs_eager": None,
        "speedup_vs_compile": None,
        "worst_shape_vs_best_peer": None,
        "limit_pct": None,
        "run": None,
        "library": None,
    }

    # The page, with links to the run reports (written where missing).
    index = project.root / "evaluations" / "index.html"
    page = index.read_text()
    assert f'href="softmax/{project.cuda_run}/report.html"' in page
    assert f'href="silu_and_mul/{project.cpu_run}/report.html"' in page
    assert (index.parent / "softmax" / project.cuda_run / "report.html").is_file()
    assert_self_contained(page)


def test_status_table(project):
    out = invoke("--all").output
    assert "kernelgen library status" in out and '{"ops"' not in out
    # No library bench record here: its column says so.
    row = r"softmax\s+yes · r2-c1\s+NVIDIA H200\s+1\.69×\s+1\.82×\s+1\.01× 32768x1024\s+—\s+56%"
    assert re.search(row, out)
    assert re.search(r"rms_norm\s+no\s+NVIDIA H200\s+1\.06×\s+1\.15×\s+0\.31× 256x151936", out)
    assert re.search(r"silu_and_mul\s+no\s+—\s+—\s+—\s+—\s+—\s+—\s+yes\s+no run with a", out)
    assert "wrote evaluations/index.html" in out

    narrow = invoke("--all", width=80).output
    assert "…" not in narrow
    assert re.search(r"softmax\s+yes\s+1\.69×\s+1\.82×\s+1\.01×\s+56%", narrow)
    assert f"softmax: NVIDIA H200, 2026-11-30, run {project.cuda_run}" in narrow


def test_status_is_tolerant_of_the_manifest(project):
    manifest = project.root / "generated" / "kernelgen_ops" / "MANIFEST.json"
    manifest.write_text("{not json")
    st = render_status().data
    soft = next(op for op in st.ops if op.name == "softmax")
    # No manifest: the latest run with a measured best is the evidence (the later, all-rejected
    # run is passed over).
    assert soft.generated is False and soft.run == project.cuda_run

    manifest.unlink()
    assert all(not op.generated for op in render_status().data.ops)

    manifest.write_text(
        json.dumps(
            {
                "ops": [
                    {
                        "name": "softmax",
                        "run_id": "gone",
                        "device": "H100",
                        "speedups": {"eager": 1.5, "compile": 1.1},
                    }
                ]
            }
        )
    )
    st = render_status()
    soft = next(op for op in st.data.ops if op.name == "softmax")
    assert soft.generated is True and soft.run == "gone" and soft.device == "H100"
    assert soft.speedup_vs_eager == 1.5 and soft.worst_shape_vs_best_peer is None
    row = next(r for r in st.rows if r.status.name == "softmax")
    assert row.note == "run gone is not under evaluations/"


def test_unreadable_run_is_reported_not_crashed_on(project):
    path = project.run_dir("softmax", project.rejected_run) / "run.json"
    path.write_text('{"id": 3}')
    r = invoke("softmax", "--run", project.rejected_run)
    assert r.exit_code == 2 and "run.json" in r.output  # a record that does not parse
    soft = next(op for op in render_status().data.ops if op.name == "softmax")
    assert soft.run == project.cuda_run


def test_best_without_a_record_is_said_not_crashed_on(project):
    folder = project.run_dir("softmax", project.cuda_run) / "candidates" / "r2-c1"
    (folder / "record.json").unlink()
    out = flat(invoke("softmax", "--run", project.cuda_run).output)
    assert "run.json names 'r2-c1' as the best, but it has no record." in out
    assert "Per shape: the seed against torch eager and torch.compile" in out


def test_status_shows_where_the_library_takes_the_kernel(project):
    configs = project.root / "generated" / "kernelgen_ops" / "configs"
    configs.mkdir(parents=True, exist_ok=True)

    def status(table: dict, width: int) -> str:
        (configs / "softmax.json").write_text(
            json.dumps({"dispatch": {"NVIDIA H200|triton-3.6.0": table}})
        )
        return flat(invoke("--all", width=width).output)

    table = {
        "4096x4096": {"shape": "4096x4096", "kernel": True, "kernel_us": 1.0, "torch_us": 2.0},
        "1x32768": {"shape": "1x32000", "kernel": False, "kernel_us": 3.0, "torch_us": 2.0},
    }
    assert "dispatch: NVIDIA H200: kernel at 1 of 2 (4096x4096)" in status(table, 80)
    # Launch-bound rows as the library answers them: 1x151936 won by enough to hold on a slower
    # host, and for a direct call past the route's cost too; 1x32000 did not (9.7 against 12.9).
    launch = {"host_included": True, "kernel": True}
    table["1x262144"] = launch | {"shape": "1x151936", "kernel_us": 15.0, "torch_us": 40.5}
    table["1x32768"] = launch | {"shape": "1x32000", "kernel_us": 9.7, "torch_us": 12.9}
    table["16x32768"] = launch | {"shape": "16x32000", "kernel_us": 22.0, "torch_us": 40.0}
    for row in table.values():
        row["torch_device_us"] = row["torch_us"]
    got = status(table, 200)
    assert (
        "NVIDIA H200: kernel at 3 of 4 (4096x4096, 1x151936, 16x32000), routed at 2 "
        "(4096x4096, 1x151936)" in got
    ), got
    # By device time (set_dispatch("device")): 1x32000's kernel at 5.5 us against 12.9.
    table["1x32768"]["kernel_device_us"] = 5.5
    got = status(table, 300)
    assert (
        "routed at 2 (4096x4096, 1x151936); by device time (CUDA graphs) at 4 "
        "(4096x4096, 1x32000, 1x151936, 16x32000)" in got
    ), got


def test_a_bare_report_says_which_run_it_shows(project):
    out = flat(invoke("softmax").output)
    assert (
        f"Run {project.cuda_run}: the evidence behind the softmax kernel that generated/ ships."
        in out
    )
    newest = project.rejected_run
    assert f"The newest run is {newest}: kernelgen report softmax --run {newest}" in out
    out = flat(invoke("rms_norm").output)
    assert f"Run {project.running_run}: the newest run of rms_norm" in out
    # A run named on the command line needs no word on which it is.
    assert "the evidence behind" not in invoke("softmax", "--run", project.cuda_run).output


def test_unknown_operator_is_a_usage_error_naming_the_known(project):
    r = invoke("nosuchop")
    assert r.exit_code == 2
    assert "unknown operator 'nosuchop'; known: rms_norm, silu_and_mul, softmax" in r.output
    assert "kernelgen optimize nosuchop" not in r.output


def test_history_says_against_what_each_speedup_is(project):
    """The history's × seed and the summary's `× the seed` are one figure, also for a candidate
    timed against the best alone (an agent's), whose benchmark has no seed beside it."""
    rec = next(c for c in store.load_candidates("softmax", project.cuda_run) if c.id == "r2-c1")
    assert rec.bench is not None
    alone = rec.bench.model_copy(
        update={
            "geomean_seed": None,
            "shapes": [
                t.model_copy(update={"seed": None, "speedup_seed": None}) for t in rec.bench.shapes
            ],
        }
    )
    store.save_candidate("softmax", project.cuda_run, rec.model_copy(update={"bench": alone}))
    out = invoke("softmax", "--run", project.cuda_run).output
    summary = re.search(r"r2-c1 \(round 2, llm · gpt-test\): ([\d.]+)× the seed", flat(out))
    row = re.search(r"2\s+r2-c1\s+r1-c1\s+accepted\s+([\d.]+)×\s+([\d.]+)×\s+★ best", out)
    assert summary and row, out
    assert row.group(1) == "1.62"  # against the best of its moment, r1-c1
    assert row.group(2) == summary.group(1) == "2.10"
    assert "× best then: against the run's best when the candidate was judged" in flat(out)
    md = (project.run_dir("softmax", project.cuda_run) / "report.md").read_text()
    assert "| × best then | × seed |" in md and "× best then: against the run's best" in md


def test_the_live_panel_counts_rounds_as_the_report_does(project):
    import io

    run = store.load_run("rms_norm", project.running_run)
    observer = cli_commands._LiveObserver(None)
    observer.run = run
    console = Console(width=120, file=io.StringIO())
    console.print(observer._panel())
    panel = console.file.getvalue()
    done = f"{run.rounds_done} of {run.settings.budget.rounds}"
    assert re.search(rf"rounds done\s+{done}", panel), panel
    assert f"Rounds done {done} (" in flat(invoke("rms_norm").output)


def test_counts_take_their_plural_forms(project):
    run = store.load_run("softmax", project.cuda_run)
    run.settings.budget.candidates, run.settings.budget.repairs = 1, 1
    run.usage.calls = 1
    store.save_run(run)
    out = flat(invoke("softmax", "--run", project.cuda_run).output)
    assert "(1 candidate a round, 1 repair each)" in out
    assert "completion) in 1 call ·" in out


def _stamp(path, when="2020-01-01T00:00:00+00:00"):
    """Back-date the file's time stamp, as a report committed earlier carries."""
    text = re.sub(r"Generated by kernelgen at \S+?(?=[.<\s])", f"Generated by kernelgen at {when}",
                  path.read_text())  # fmt: skip
    path.write_text(text)
    return text


def test_reports_are_rewritten_only_when_their_content_changes(project):
    folder = project.run_dir("softmax", project.cuda_run)
    first = render_run("softmax", project.cuda_run)
    assert first.unchanged == [] and first.written == [folder / "report.md", folder / "report.html"]
    before = {p: _stamp(p) for p in first.written}
    assert all("at 2020-01-01T00:00:00+00:00" in t for t in before.values())

    # The same report at a later time: the committed files stay as they are (plots included).
    r = invoke("softmax", "--run", project.cuda_run)
    assert {p: p.read_text() for p in first.written} == before
    assert "unchanged (only the time would differ): evaluations/softmax/" in flat(r.output)
    assert "wrote" not in r.output

    # A change of content is written, with its new time.
    seed = project.root / "seeds" / "softmax.py"
    seed.write_text(seed.read_text() + "\n# edited\n")
    again = render_run("softmax", project.cuda_run)
    assert again.unchanged == []
    assert all("2020-01-01" not in p.read_text() for p in again.written)

    # The status page likewise.
    render_status()
    index = project.root / "evaluations" / "index.html"
    page = _stamp(index)
    r = invoke("--all")
    assert index.read_text() == page
    assert "unchanged (only the time would differ): evaluations/index.html" in flat(r.output)


def test_write_report_ignores_only_the_time_stamp(tmp_path):
    from kernelgen.report import write_report

    path = tmp_path / "report.md"
    assert write_report(
        path, "# r\n\n<sub>Generated by kernelgen at 2026-12-04T17:08:08+00:00.</sub>\n"
    )
    old = path.read_text()
    assert not write_report(path, old.replace("17:08:08", "23:10:26"))
    assert path.read_text() == old
    assert write_report(
        path, "# r2\n\n<sub>Generated by kernelgen at 2026-12-04T23:10:26+00:00.</sub>\n"
    )
    assert path.read_text().startswith("# r2")
