"""Nsight Compute as an agent tool (kernelgen.bench.profile, agent.profile, `kernelgen agent
profile`, the MCP tool), on CPU: a fake ncu prints what the real one prints for two kernels and
never runs its program, so the command, the parse, the errors, the stored file and the context
are all checked here; only the real profile of a seed waits for the GPU (marked gpu)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.agent import session as agent
from kernelgen.bench import profile as prof
from kernelgen.cli import app
from kernelgen.errors import NoDeviceError, UsageError
from kernelgen.records import (
    BenchRecord,
    Budget,
    CandidateRecord,
    Ceilings,
    Environment,
    PeerTime,
    RunRecord,
    RunSettings,
    ShapeTiming,
)
from kernelgen.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
OP = "rms_norm"
# Three of its bench shapes: a decode batch of 64 and of 8 at DeepSeek-V3's hidden, one token of
# Qwen3-8B's.
WORST = "deepseek_v3_64x7168"
BATCH = "deepseek_v3_8x7168"
DECODE = "qwen3_8b_1x4096"
RUN_ID = "20260101-120000-agent-cafe"
ENV = Environment(
    device="cuda",
    gpu="NVIDIA H200",
    torch="2.11",
    triton="3.6.0",
    python="3.12",
    host="h",
    interpreter=False,
)
CEIL = Ceilings(
    gpu="NVIDIA H200",
    copy_gbps=4250,
    bf16_tflops=700,
    launch_us=3.3,
    measured="t",
    torch="2.11",
    triton="3.6.0",
)
COLUMNS = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "device__attribute_display_name",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__time_duration.sum",
    "launch__block_size",
    "launch__grid_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    *(
        f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
        for r in ("barrier", "long_scoreboard", "not_selected", "selected", "short_scoreboard")
    ),
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "", "%", "%", "nsecond", "", "", ""]
UNITS += ["byte", "byte", "%", "%", "%", "", "", "", "", "", ""]
# fmt: off
ROWS = [
    # The candidate's kernel: every metric there, a duration with a thousands separator.
    [
        "0", "4242", "python", "127.0.0.1", "_rms_norm_kernel", "1", "7", "(256, 1, 1)",
        "(4096, 1, 1)", "0", "9.0", "NVIDIA H200", "44.5", "45.25", "12,345", "256", "4096",
        "64", "0", "1024", "50", "12.4", "38.1", "0.5", "4.1", "1.0", "9.9", "2.0", "2.4",
    ],
    # A layout copy, as reported by an ncu without DRAM or stall figures for it.
    [
        "1", "4242", "python", "127.0.0.1", "copy_kernel", "1", "7", "(128, 2, 1)",
        "(64, 1, 1)", "0", "9.0", "NVIDIA H200", "", "n/a", "2,000", "", "", "32", "", "",
        "100", "3.5", "", "", "", "", "", "", "",
    ],
]
# fmt: on
STALLS = [("long_scoreboard", 41.0), ("wait", 24.0), ("short_scoreboard", 20.0)]
STALLS += [("not_selected", 10.0), ("barrier", 5.0)]


def _csv(row: list[str]) -> str:
    return ",".join(f'"{v}"' for v in row)


NCU_OUTPUT = "\n".join(
    [
        "==PROF== Connected to process 4242 (/usr/bin/python3.12)",
        '==PROF== Profiling "_rms_norm_kernel": 0%....50%....100% - 38 passes',
        '==PROF== Profiling "copy_kernel": 0%....50%....100% - 38 passes',
        "==PROF== Disconnected from process 4242",
        _csv(COLUMNS),
        _csv(UNITS),
        *(_csv(r) for r in ROWS),
    ]
)
FAKE_NCU = f"""#!{sys.executable}
# A stand-in for Nsight Compute: logs its argv, prints a real-looking raw CSV report, and never
# runs the program it was given (there is no GPU here).
import json, os, sys
with open(os.environ["FAKE_NCU_ARGV"], "w") as f:
    json.dump(sys.argv[1:], f)
mode = os.environ.get("FAKE_NCU_MODE", "ok")
if mode == "fail":
    print("==ERROR== The application returned an error code (1).")
    print("profile_target: RuntimeError: CUDA error: an illegal memory access", file=sys.stderr)
    sys.exit(1)
if mode == "none":
    print("==PROF== Disconnected from process 4242")
    print("==WARNING== No kernels were profiled.")
    sys.exit(0)
sys.stdout.write({NCU_OUTPUT!r} + "\\n")
"""


@pytest.fixture()
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = tmp_path / "bin" / "ncu"
    exe.parent.mkdir()
    exe.write_text(FAKE_NCU)
    exe.chmod(0o755)
    argv = tmp_path / "ncu-argv.json"
    monkeypatch.setenv(prof.NCU_ENV, str(exe))
    monkeypatch.setenv("FAKE_NCU_ARGV", str(argv))
    return argv


def _bench(label: str, us: float, slow_shape: str) -> BenchRecord:
    """The candidate at `us` everywhere; torch eager at 100 us except on `slow_shape`, where
    it takes 1.5x the candidate's time, which makes that shape the worst against the peers."""
    spec = load_spec(OP)
    shapes = []
    for b in spec.data.bench:
        cost = spec.cost(b.dims, b.dtype)
        eager = 1.5 * us if b.name == slow_shape else 100.0
        shapes.append(
            ShapeTiming(
                shape=b.name,
                dtype=b.dtype,
                bytes=cost.bytes,
                flops=cost.flops,
                candidate=PeerTime(median_us=us, spread=0.01),
                eager=PeerTime(median_us=eager, spread=0.01),
                gbps=1.0,
                tflops=1.0,
                limit_pct=50.0,
                floor_us=1.0,
                bound="memory",
            )
        )
    return BenchRecord(
        op=OP,
        candidate=label,
        sha256="x",
        label=label,
        shapes=shapes,
        ceilings=CEIL,
        environment=ENV,
    )


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "pyproject.toml").write_text("[tool.kernelgen]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    return tmp_path


def _cuda_run(device: str = "cuda", run_id: str = RUN_ID, former: bool = False) -> RunRecord:
    """A CUDA agent run as the store keeps it: the seed timed, r01-c01 rejected, r02-c01 the
    best (worst against the peers at WORST). `former`: the best's timings name the shapes as
    runs did before shapes were named by model (BenchShape.was)."""
    seed = (ROOT / "seeds" / f"{OP}.py").read_text()
    run = RunRecord(
        id=run_id,
        op=OP,
        settings=RunSettings(
            op=OP, proposer="agent", device=device, budget=Budget(rounds=2), seed=7
        ),
        environment=ENV if device == "cuda" else ENV.model_copy(update={"device": "cpu"}),
        state="running",
        rounds_done=2,
        best="r02-c01",
        seed_bench=_bench("seed", 20.0, DECODE),
    )
    store.save_run(run)
    rejected = CandidateRecord(
        id="r01-c01", round=1, parent="seed", proposer="agent", status="rejected",
        category="syntax", reason="invalid syntax",
    )  # fmt: skip
    best = CandidateRecord(
        id="r02-c01", round=2, parent="seed", proposer="agent", status="accepted",
        became_best=True, bench=_bench("r02-c01", 10.0, WORST),
    )  # fmt: skip
    if former:  # the shapes added since were not timed then
        was = {b.name: b.was[0] for b in load_spec(OP).data.bench if b.was}
        best.bench.shapes = [t for t in best.bench.shapes if t.shape in was]
        for t in best.bench.shapes:
            t.shape = was[t.shape]
    store.save_candidate(OP, run_id, rejected, "def rms_norm(x:\n")
    store.save_candidate(OP, run_id, best, seed.replace("# The tuner", "# Faster. The tuner"))
    return run


@pytest.fixture()
def on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CUDA check guards a real launch; the fake ncu launches nothing.
    monkeypatch.setattr(agent, "_device", lambda device: device)


# ---- the parser and the command -----------------------------------------------------------


def test_parse_reads_two_kernels_and_tolerates_missing_metrics() -> None:
    kernels = prof.parse_csv(NCU_OUTPUT)
    assert [k.name for k in kernels] == ["_rms_norm_kernel", "copy_kernel"]
    k = kernels[0]
    assert k.duration_us == pytest.approx(12.345)
    assert (k.memory_pct, k.dram_pct, k.sm_pct) == (45.25, 44.5, 12.4)
    assert (k.occupancy_pct, k.theoretical_occupancy_pct) == (38.1, 50.0)
    assert (k.registers_per_thread, k.shared_bytes_per_block) == (64, 1024)
    assert (k.block_size, k.grid_size) == (256, 4096)
    # Sorted by share, 'selected' (issuing, not waiting) left out, shares of the stalled cycles.
    assert [(s.reason, round(s.share_pct)) for s in k.stalls] == STALLS
    copy = kernels[1]
    assert copy.dram_pct is None and copy.memory_pct is None and copy.occupancy_pct is None
    assert copy.duration_us == pytest.approx(2.0) and copy.registers_per_thread == 32
    assert copy.shared_bytes_per_block is None and copy.stalls == []
    # Launch metrics missing: the Block Size / Grid Size columns still give the launch.
    assert (copy.block_size, copy.grid_size) == (256, 64)
    assert prof.gpu_name(NCU_OUTPUT) == "NVIDIA H200"
    summary = prof.summarize("r02-c01", WORST, "bfloat16", kernels)
    assert summary.startswith(f"Nsight Compute, r02-c01 at {WORST} (bfloat16), 2 kernel(s).")
    assert "_rms_norm_kernel (12.3 us): memory 45% of peak, DRAM 44%, SM 12%" in summary
    assert "64 regs/thread" in summary and "top stalls: long_scoreboard 41%, wait 24%" in summary
    assert "copy_kernel (2.0 us): memory ? of peak" in summary


def test_parse_without_a_report_and_with_other_units() -> None:
    assert prof.parse_csv("==PROF== Disconnected\n==WARNING== No kernels were profiled.\n") == []
    header = _csv(
        ["ID", "Kernel Name", "gpu__time_duration.sum", "launch__shared_mem_per_block_static"]
    )
    text = "\n".join([header, _csv(["", "", "usecond", "Kbyte"]), _csv(["0", "k", "3.5", "2"])])
    (k,) = prof.parse_csv(text)
    assert k.duration_us == 3.5 and k.shared_bytes_per_block == 2000 and k.sm_pct is None
    # No units row at all: numbers are taken as ncu's base units.
    (k,) = prof.parse_csv("\n".join([header, _csv(["0", "k", "1500", "8"])]))
    assert k.duration_us == 1.5 and k.shared_bytes_per_block == 8


def test_command_line_and_ncu_lookup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    target = prof.target_argv(OP, Path("/r/c/source.py"), WORST, 7)
    argv = prof.ncu_command("/opt/ncu", target)
    line = prof.command_line(argv)
    assert line.startswith("/opt/ncu --clock-control none --profile-from-start off")
    assert "--csv --page raw --print-units base" in line
    for section in prof.SECTIONS:
        assert f"--section {section}" in line
    assert line.endswith(f"-m kernelgen.bench.profile_target {OP} /r/c/source.py {WORST} 7")
    monkeypatch.delenv(prof.NCU_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(prof.ProfileError, match="ncu not found on PATH: profiling needs Nsight"):
        prof.ncu_executable()
    monkeypatch.setenv(prof.NCU_ENV, str(tmp_path / "nope"))
    with pytest.raises(prof.ProfileError, match="expected an executable ncu"):
        prof.ncu_executable()


def test_a_hanging_ncu_is_killed(tmp_path: Path) -> None:
    with pytest.raises(prof.ProfileError, match="no result after 1 s"):
        prof.run_ncu(["sleep", "30"], env=dict(os.environ), cwd=tmp_path, timeout_s=1.0)


def test_worst_shape_is_the_worst_against_the_best_peer() -> None:
    assert prof.worst_shape(_bench("x", 10.0, BATCH)) == BATCH
    assert prof.worst_shape(None) is None
    no_peers = _bench("x", 10.0, BATCH)
    for t in no_peers.shapes:
        t.eager = None
    no_peers.shapes[2].limit_pct = 3.0
    assert prof.worst_shape(no_peers) == no_peers.shapes[2].shape


# ---- the agent tool ---------------------------------------------------------------------


def test_profile_the_best_at_its_worst_shape_stores_it_and_the_context_quotes_it(
    project: Path, fake_ncu: Path, on_cuda: None
) -> None:
    run = _cuda_run()
    before = agent.get_context(run.id)
    assert before.context.profile is None and "Not profiled." in before.prompt

    result = agent.profile(run.id)
    assert (result.candidate, result.shape, result.dtype) == ("r02-c01", WORST, "bfloat16")
    assert result.gpu == "NVIDIA H200" and len(result.kernels) == 2
    argv = json.loads(fake_ncu.read_text())
    source = store.candidate_path(OP, run.id, "r02-c01")
    assert argv[:4] == ["--clock-control", "none", "--profile-from-start", "off"]
    assert argv[-4:] == [OP, str(source), WORST, "7"]
    assert result.command.endswith(f"{source} {WORST} 7")

    stored = store.profile_path(OP, run.id, "r02-c01", WORST)
    assert stored == source.parent / f"profile-{WORST}.json"
    assert prof.load_result(stored) == result

    after = agent.get_context(run.id)
    assert after.context.profile == result.summary
    assert "## Nsight Compute profile of the current best" in after.prompt
    assert result.summary in after.prompt

    # The seed and another shape on request; neither is the context's (best, worst shape).
    seed = agent.profile(run.id, candidate="seed", shape=DECODE)
    assert seed.candidate == "seed" and json.loads(fake_ncu.read_text())[-3] == str(
        project / "seeds" / f"{OP}.py"
    )
    assert store.profile_path(OP, run.id, "seed", DECODE).is_file()
    assert agent.get_context(run.id).context.profile == result.summary


def test_a_run_timed_under_former_names_is_profiled_at_the_shape_they_name(
    project: Path, fake_ncu: Path, on_cuda: None
) -> None:
    """Its worst shape is recorded as 64x7168, the name deepseek_v3_64x7168 had then: the profile
    finds the shape by it and runs and stores it under the name it has now."""
    run = _cuda_run(former=True)
    (best,) = (c for c in store.load_candidates(OP, run.id) if c.id == "r02-c01")
    assert prof.worst_shape(best.bench) == "64x7168"
    result = agent.profile(run.id)
    assert (result.shape, json.loads(fake_ncu.read_text())[-2]) == (WORST, WORST)
    assert store.profile_path(OP, run.id, "r02-c01", WORST).is_file()
    assert agent.profile(run.id, shape="1x4096").shape == DECODE


def test_profile_bad_arguments_are_one_clear_error(
    project: Path, fake_ncu: Path, on_cuda: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _cuda_run()
    with pytest.raises(UsageError, match="no run '20990101-000000-agent-ffff'"):
        agent.profile("20990101-000000-agent-ffff")
    with pytest.raises(UsageError, match=r"no candidate 'r09-c01'; .*: seed, r02-c01"):
        agent.profile(run.id, candidate="r09-c01")
    with pytest.raises(UsageError, match=r"r01-c01 is rejected \[syntax\]; .*: seed, r02-c01"):
        agent.profile(run.id, candidate="r01-c01")
    with pytest.raises(UsageError, match=r"no bench shape '3x3'; expected one of: qwen3_8b_4096x"):
        agent.profile(run.id, shape="3x3")
    cpu = _cuda_run("cpu", "20260101-120000-agent-beef")
    with pytest.raises(UsageError, match="judged on cpu: profiling needs a CUDA run"):
        agent.profile(cpu.id)
    # ncu failing: the target's own line; ncu profiling nothing: what was expected.
    monkeypatch.setenv("FAKE_NCU_MODE", "fail")
    with pytest.raises(prof.ProfileError, match="code 1: profile_target: RuntimeError: CUDA"):
        agent.profile(run.id)
    monkeypatch.setenv("FAKE_NCU_MODE", "none")
    with pytest.raises(prof.ProfileError, match="profiled no kernel .* No kernels were profiled"):
        agent.profile(run.id)
    assert not store.profile_path(OP, run.id, "r02-c01", WORST).exists()


def test_profile_refuses_a_machine_without_cuda(project: Path, fake_ncu: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run = _cuda_run()
    with pytest.raises(NoDeviceError, match="no CUDA device here"):
        agent.profile(run.id)
    assert not fake_ncu.exists()  # refused before ncu was started


def test_cli_profile_prints_the_table_or_json(project: Path, fake_ncu: Path, on_cuda: None) -> None:
    run = _cuda_run()
    cli = CliRunner()
    shown = cli.invoke(app, ["agent", "profile", run.id], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "_rms_norm_kernel" in shown.output and "long_scoreboard 41%" in shown.output
    as_json = cli.invoke(app, ["agent", "profile", run.id, "--shape", DECODE, "--json"])
    assert as_json.exit_code == 0, as_json.output
    got = json.loads(as_json.output.strip().splitlines()[-1])
    assert got["shape"] == DECODE and got["kernels"][0]["registers_per_thread"] == 64
    bad = cli.invoke(app, ["agent", "profile", run.id, "--candidate", "nope"])
    assert bad.exit_code == 2 and "no candidate 'nope'" in bad.output


def test_mcp_profile_tool(project: Path, fake_ncu: Path, on_cuda: None) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client

    from kernelgen.agent import mcp as mcp_server

    run = _cuda_run()

    async def session() -> tuple:
        async with Client(mcp_server.build()) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            ok = await client.call_tool("profile", {"run_id": run.id})
            bad = await client.call_tool("profile", {"run_id": run.id, "shape": "3x3"})
            return tools, ok, bad

    tools, ok, bad = anyio.run(session)
    assert "profile" in tools
    assert not ok.is_error and ok.structured_content["candidate"] == "r02-c01"
    assert ok.structured_content["kernels"][0]["stalls"][0]["reason"] == "long_scoreboard"
    assert bad.is_error and "no bench shape '3x3'" in bad.content[0].text


# ---- on the GPU -----------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.skipif(
    shutil.which("ncu") is None and not os.environ.get(prof.NCU_ENV), reason="needs ncu"
)
def test_profile_a_seed_for_real(project: Path) -> None:
    """The seed at its smallest bench shape under the real ncu: its Triton kernel is found
    and measured, and nothing from the warm-up calls is in the report."""
    spec = load_spec(OP)
    shape = min(spec.data.bench, key=lambda b: b.dims["rows"] * b.dims["cols"]).name
    command, kernels, gpu = prof.profile_file(OP, project / "seeds" / f"{OP}.py", shape, seed=1)
    assert "--clock-control none" in command
    names = [k.name for k in kernels]
    assert any("rms_norm" in n for n in names), names
    k = next(k for k in kernels if "rms_norm" in k.name)
    assert k.duration_us and k.duration_us > 0
    assert k.memory_pct is not None and k.sm_pct is not None and k.occupancy_pct is not None
    assert k.registers_per_thread and k.block_size and k.grid_size
    assert k.stalls and 0 < sum(s.share_pct for s in k.stalls) <= 100.01
    assert gpu is None or gpu.startswith("NVIDIA")
