"""Nsight Compute's view of one candidate at one benchmark shape: why a kernel is as fast as it is.

A timing says how far a kernel is from its limit; ncu says why: how much of the memory system
and of the SMs it keeps busy, how many warps stay resident, and what the warps wait on. The
candidate runs in a fresh process (`kernelgen.bench.profile_target`) under

    ncu --clock-control none --profile-from-start off --csv --page raw --print-units base
        --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats
        python -m kernelgen.bench.profile_target OP FILE SHAPE SEED

The target compiles and warms the candidate outside the profiled range and calls it once inside
cudaProfilerStart/Stop, so only that call's kernels are measured. The clocks stay as the driver
runs them (`--clock-control none`), the way do_bench saw them. Sections rather than a list of
metric names: their metrics exist on every GPU ncu supports, where a name ncu does not know
aborts the whole profile. The parser takes what it finds and leaves the rest None.
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.errors import KernelgenError, StoreError
from kernelgen.records import BenchRecord, now

NCU_ENV = "KERNELGEN_NCU"
DEFAULT_TIMEOUT_S = 600.0
TOP_STALLS = 5
SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats")
# Stall metrics, most useful family first: cycles per issued instruction spent in each state
# (WarpStateStats), then the PC-sampling counts (SourceCounters) and average latencies. Shares
# within one family are comparable; across families they are not, so one family is used.
_STALL_FAMILIES = (
    re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+)$"),
    re.compile(r"^smsp__average_warp_latency_issue_stalled_(\w+?)(?:\.ratio|\.pct)?$"),
)
# 'selected' is the warp issuing, not waiting: it is no stall.
_NOT_A_STALL = {"selected"}
_TIME_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
_TIME_US |= {"second": 1e6, "s": 1e6}
_BYTES = {"byte": 1, "kbyte": 1000, "mbyte": 1000**2, "kib": 1024, "mib": 1024**2}


class ProfileError(KernelgenError):
    """Nsight Compute is missing, failed, or profiled nothing."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Stall(_Record):
    reason: str = Field(description="ncu's name for the warp state, e.g. long_scoreboard")
    share_pct: float = Field(description="% of the stalled warp cycles spent in this state")


class KernelProfile(_Record):
    """One kernel launch as Nsight Compute measured it (None: the metric was not reported)."""

    name: str
    duration_us: float | None = None
    memory_pct: float | None = Field(None, description="memory throughput, % of peak")
    dram_pct: float | None = Field(None, description="DRAM throughput, % of peak")
    sm_pct: float | None = Field(None, description="compute (SM) throughput, % of peak")
    occupancy_pct: float | None = Field(None, description="achieved occupancy, % of max warps")
    theoretical_occupancy_pct: float | None = None
    registers_per_thread: int | None = None
    shared_bytes_per_block: int | None = Field(None, description="static + dynamic")
    block_size: int | None = Field(None, description="threads per block")
    grid_size: int | None = Field(None, description="blocks")
    stalls: list[Stall] = Field(default_factory=list, description="the top warp stall reasons")


class ProfileResult(_Record):
    op: str
    run_id: str
    candidate: str = Field(description="candidate id, or 'seed'")
    shape: str
    dtype: str
    device: Literal["cuda"] = "cuda"
    gpu: str | None = None
    command: str = Field(description="the ncu command line as run")
    kernels: list[KernelProfile]
    summary: str = Field(description="one paragraph, as the prompt quotes it")
    created: str = Field(default_factory=now)


def load_result(path: Path) -> ProfileResult:
    try:
        return ProfileResult.model_validate_json(path.read_text())
    except (OSError, ValueError) as e:
        raise StoreError(f"{path}: not a readable profile ({type(e).__name__})") from None


# ---- the command ------------------------------------------------------------------------------


def ncu_executable() -> str:
    """ncu from KERNELGEN_NCU, else from PATH."""
    configured = os.environ.get(NCU_ENV)
    if configured:
        if not (Path(configured).is_file() and os.access(configured, os.X_OK)):
            raise ProfileError(f"{NCU_ENV}={configured}: expected an executable ncu")
        return configured
    found = shutil.which("ncu")
    if found is None:
        raise ProfileError(
            "ncu not found on PATH: profiling needs Nsight Compute on the CUDA machine "
            f"(or set {NCU_ENV} to its path)"
        )
    return found


def target_argv(op: str, source: Path, shape: str, seed: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kernelgen.bench.profile_target",
        op,
        str(source),
        shape,
        str(seed),
    ]


def ncu_command(ncu: str, target: list[str]) -> list[str]:
    sections = [arg for name in SECTIONS for arg in ("--section", name)]
    return [
        ncu,
        "--clock-control",
        "none",
        "--profile-from-start",
        "off",
        "--target-processes",
        "all",
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        *sections,
        *target,
    ]


def run_ncu(argv: list[str], *, env: dict[str, str], cwd: Path, timeout_s: float) -> str:
    """ncu's report (stdout, or stderr where this ncu prints it there); a failure or a timeout
    is one ProfileError line."""
    # Its own session, so a timeout takes down ncu and the target it started alike.
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ProfileError(f"ncu: no result after {timeout_s:.0f} s (killed)") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode != 0:
        raise ProfileError(f"ncu exited with code {proc.returncode}: {_why(stdout, stderr)}")
    if _header_at(stdout.splitlines()) is None and _header_at(stderr.splitlines()) is not None:
        stdout = stderr  # an ncu that prints its report on stderr
    return stdout


def _why(stdout: str, stderr: str) -> str:
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("==ERROR==")]
    # The target's own last line names the candidate's failure; ncu's ==ERROR== names its own.
    target = [ln for ln in lines if ln.startswith("profile_target:")]
    return (target or errors or lines or ["no output"])[-1]


def command_line(argv: list[str]) -> str:
    return shlex.join(argv)


# ---- the CSV ----------------------------------------------------------------------------------


def _header_at(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.startswith('"ID"') and '"Kernel Name"' in line:
            return i
    return None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    text = text.strip().replace(",", "")  # ncu groups thousands in some versions
    if not text or text.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _product(text: str | None) -> int | None:
    """'(256, 1, 1)' -> 256: the Block Size / Grid Size columns."""
    if not text:
        return None
    dims = re.findall(r"\d+", text)
    if not dims:
        return None
    n = 1
    for d in dims:
        n *= int(d)
    return n


class _Row:
    def __init__(self, values: dict[str, str], units: dict[str, str]):
        self.values, self.units = values, units

    def num(self, name: str) -> float | None:
        return _number(self.values.get(name))

    def us(self, name: str) -> float | None:
        value = self.num(name)
        scale = _TIME_US.get(self.units.get(name, "nsecond").strip().lower())
        return None if value is None or scale is None else value * scale

    def byte_count(self, name: str) -> int | None:
        value = self.num(name)
        scale = _BYTES.get(self.units.get(name, "byte").strip().lower())
        return None if value is None or scale is None else int(round(value * scale))

    def count(self, name: str) -> int | None:
        value = self.num(name)
        return None if value is None else int(round(value))


def parse_csv(text: str) -> list[KernelProfile]:
    """Kernels of `ncu --csv --page raw` output, in launch order. Lines before the header
    (==PROF== messages, the program's own output) are skipped; a units row may follow it."""
    lines = text.splitlines()
    start = _header_at(lines)
    if start is None:
        return []
    body = [ln for ln in lines[start:] if ln.startswith('"')]
    rows = list(csv.reader(body))
    header, rows = rows[0], rows[1:]
    units: dict[str, str] = {}
    if rows and not (rows[0] and rows[0][0].strip().isdigit()):
        units = dict(zip(header, rows[0], strict=False))
        rows = rows[1:]
    return [_kernel(_Row(dict(zip(header, r, strict=False)), units)) for r in rows if r]


def gpu_name(text: str) -> str | None:
    lines = text.splitlines()
    start = _header_at(lines)
    if start is None:
        return None
    rows = list(csv.reader(ln for ln in lines[start:] if ln.startswith('"')))
    for r in rows[1:]:
        row = dict(zip(rows[0], r, strict=False))
        if row.get("ID", "").strip().isdigit():
            name = (row.get("device__attribute_display_name") or row.get("Device") or "").strip()
            return name or None
    return None


def _kernel(row: _Row) -> KernelProfile:
    static = row.byte_count("launch__shared_mem_per_block_static")
    dynamic = row.byte_count("launch__shared_mem_per_block_dynamic")
    shared = None if static is None and dynamic is None else (static or 0) + (dynamic or 0)
    return KernelProfile(
        name=row.values.get("Kernel Name", "?").strip() or "?",
        duration_us=row.us("gpu__time_duration.sum"),
        memory_pct=row.num("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_pct=row.num("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        sm_pct=row.num("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        occupancy_pct=row.num("sm__warps_active.avg.pct_of_peak_sustained_active"),
        theoretical_occupancy_pct=row.num("sm__maximum_warps_per_active_cycle_pct"),
        registers_per_thread=row.count("launch__registers_per_thread"),
        shared_bytes_per_block=shared,
        block_size=row.count("launch__block_size") or _product(row.values.get("Block Size")),
        grid_size=row.count("launch__grid_size") or _product(row.values.get("Grid Size")),
        stalls=_stalls(row),
    )


def _stalls(row: _Row) -> list[Stall]:
    for family in _STALL_FAMILIES:
        found: dict[str, float] = {}
        for name in row.values:
            m = family.match(name)
            value = row.num(name) if m else None
            if m and value is not None and m[1] not in _NOT_A_STALL:
                found[m[1]] = found.get(m[1], 0.0) + value
        total = sum(found.values())
        if total > 0:
            ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_STALLS]
            return [Stall(reason=r, share_pct=100.0 * v / total) for r, v in ranked]
    return []


# ---- the summary ------------------------------------------------------------------------------


def worst_shape(bench: BenchRecord | None) -> str | None:
    """The shape where the candidate does worst against the faster of torch eager and
    torch.compile; without peers, the one furthest below its limit."""
    if bench is None or not bench.shapes:
        return None
    ratios = []
    for t in bench.shapes:
        peers = [p.median_us for p in (t.eager, t.compile) if p is not None]
        if peers:
            ratios.append((min(peers) / t.candidate.median_us, t.shape))
    if ratios:
        return min(ratios)[1]
    return min(bench.shapes, key=lambda t: t.limit_pct).shape


def _pct(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}%"


def describe(k: KernelProfile) -> str:
    parts = [
        f"memory {_pct(k.memory_pct)} of peak",
        f"DRAM {_pct(k.dram_pct)}",
        f"SM {_pct(k.sm_pct)}",
        f"occupancy {_pct(k.occupancy_pct)}"
        + (
            f" (theoretical {_pct(k.theoretical_occupancy_pct)})"
            if k.theoretical_occupancy_pct is not None
            else ""
        ),
    ]
    if k.registers_per_thread is not None:
        parts.append(f"{k.registers_per_thread} regs/thread")
    if k.shared_bytes_per_block is not None:
        parts.append(f"{k.shared_bytes_per_block} B shared/block")
    if k.block_size is not None and k.grid_size is not None:
        parts.append(f"{k.grid_size} blocks of {k.block_size} threads")
    text = ", ".join(parts)
    if k.stalls:
        text += "; top stalls: " + ", ".join(f"{s.reason} {s.share_pct:.0f}%" for s in k.stalls)
    time = "" if k.duration_us is None else f" ({k.duration_us:.1f} us)"
    return f"{k.name}{time}: {text}"


def profile_file(
    op: str, source: Path, shape: str, *, seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[str, list[KernelProfile], str | None]:
    """Profile one call of the module at `source` on bench shape `shape`: the command line as
    run, the kernels it launched, and the GPU's name when ncu reports it."""
    from kernelgen import paths
    from kernelgen.verify.sandbox import sandbox_env

    argv = ncu_command(ncu_executable(), target_argv(op, source, shape, seed))
    text = run_ncu(argv, env=sandbox_env("cuda"), cwd=paths.root(), timeout_s=timeout_s)
    kernels = parse_csv(text)
    if not kernels:
        raise ProfileError(
            f"ncu profiled no kernel of {source} at {shape}: {_why(text, '')} "
            "(expected the candidate to launch a Triton kernel between cudaProfilerStart/Stop)"
        )
    return command_line(argv), kernels, gpu_name(text)


def summarize(candidate: str, shape: str, dtype: str, kernels: list[KernelProfile]) -> str:
    head = f"Nsight Compute, {candidate} at {shape} ({dtype}), {len(kernels)} kernel(s). "
    return head + " ".join(describe(k) + "." for k in kernels)
