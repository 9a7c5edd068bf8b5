"""A tmp project holding the runs a report must handle: a CUDA run with a best, a run where every
candidate was rejected, a CPU run without timings, and a run still in progress."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from kernelgen import paths, store
from kernelgen.records import (
    BenchRecord,
    Budget,
    CandidateRecord,
    CaseResult,
    Ceilings,
    CompileFacts,
    Environment,
    PeerTime,
    RunRecord,
    RunSettings,
    ShapeTiming,
    Usage,
    Verdict,
)

REPO = Path(__file__).resolve().parents[2]

GPU = Environment(
    device="cuda",
    gpu="NVIDIA H200",
    driver="580.95.05",
    cuda="13.0",
    torch="2.11.0+cu130",
    triton="3.6.0",
    python="3.12.3",
    host="gpu-01",
    interpreter=False,
)
CPU = Environment(
    device="cpu",
    torch="2.11.0",
    triton="3.6.0",
    python="3.12.3",
    host="laptop",
    interpreter=True,
)
CEIL = Ceilings(
    gpu="NVIDIA H200",
    copy_gbps=4270.0,
    bf16_tflops=712.0,
    launch_us=3.1,
    measured="2026-11-30T10:00:00+00:00",
    torch="2.11.0+cu130",
    triton="3.6.0",
)

# shape: (rows, cols, eager us, compile us) -- eager/compile from BASELINES.md where measured.
SHAPES = {
    "4096x4096": (4096, 4096, 57.4, 51.4),
    "32768x1024": (32768, 1024, 59.6, 37.7),
    "1024x32768": (1024, 32768, 70.5, 75.3),
    "256x151936": (256, 151936, 94.3, 150.3),
    "1x32000": (1, 32000, 8.1, 11.0),
    "16x151936": (16, 151936, 25.0, 30.2),
}
SEED_US = [20.4, 39.9, 66.7, 845.7, 6.0, 61.0]
R1C1_US = [20.1, 38.5, 60.0, 300.0, 5.8, 40.0]
BEST_US = [19.8, 37.5, 48.0, 78.0, 5.1, 14.0]

CUDA_RUN = "20261130-100000-llm-a1b2"
REJECTED_RUN = "20261130-110000-tune-c3d4"
CPU_RUN = "20261130-090000-files-e5f6"
RUNNING_RUN = "20261130-120000-llm-0a0b"

R1C1_SRC_OLD = 'DEFAULT_CONFIG = {"num_warps": 4}'
R1C1_SRC_NEW = 'DEFAULT_CONFIG = {"num_warps": 8}'
# The best streams long rows through the kernel in chunks (online max and sum) instead of holding
# the whole row in registers.
BEST_KERNEL = """@triton.jit
def _softmax_kernel(
    y_ptr,  # *T, [rows, n_cols], contiguous
    x_ptr,  # *T, [rows, n_cols], any strides
    n_cols,  # row length
    stride_xm,  # elements between rows of x
    stride_xn,  # elements between columns of x
    stride_ym,  # elements between rows of y
    BLOCK_SIZE: tl.constexpr,  # columns per chunk
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    m = tl.full([BLOCK_SIZE], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + (start + cols) * stride_xn, mask=mask,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * stride_xm + (start + cols) * stride_xn, mask=mask,
                    other=-float("inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_ptr + row * stride_ym + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
"""


def _timing(name: str, me: float, seed: float | None, peers: bool = True) -> ShapeTiming:
    rows, cols, eager, comp = SHAPES[name]
    nbytes, flops = 2 * rows * cols * 2, 5 * rows * cols
    floor = nbytes / (CEIL.copy_gbps * 1e3)
    return ShapeTiming(
        shape=name,
        dtype="bfloat16",
        bytes=nbytes,
        flops=flops,
        candidate=PeerTime(median_us=me, spread=0.02),
        eager=PeerTime(median_us=eager, spread=0.01) if peers else None,
        compile=PeerTime(median_us=comp, spread=0.01) if peers else None,
        seed=PeerTime(median_us=seed, spread=0.02) if seed is not None else None,
        speedup_eager=eager / me if peers else None,
        speedup_compile=comp / me if peers else None,
        speedup_seed=seed / me if seed is not None else None,
        gbps=nbytes / me / 1e3,
        tflops=flops / me / 1e6,
        limit_pct=100 * floor / me,
        floor_us=floor,
        bound="launch" if rows * cols < 1_000_000 else "memory",
    )


def bench(
    label: str, times: list[float], with_seed: bool = True, op: str = "softmax", sha: str = "0" * 64
) -> BenchRecord:
    shapes = [
        _timing(n, t, s if with_seed else None)
        for n, t, s in zip(SHAPES, times, SEED_US, strict=True)
    ]
    return BenchRecord(
        op=op,
        candidate=f"{label}.py",
        sha256=sha,
        label=label,
        shapes=shapes,
        ceilings=CEIL,
        environment=GPU,
        created="2026-11-30T10:20:00+00:00",
    )


def _verdict(cand: str, accepted: bool, env: Environment, category=None, reason=None, cases=()):
    return Verdict(
        op="softmax",
        candidate=cand,
        sha256="1" * 64,
        accepted=accepted,
        category=category,
        reason=reason,
        device=env.device,
        seed=7,
        cases=list(cases),
        seconds=4.2,
        kernels=["_softmax_kernel"] if accepted else [],
        environment=env,
    )


def _cand(id, rnd, parent, status, *, env=GPU, proposer="llm", model="gpt-test", **kw):
    verdict = _verdict(
        f"{id}.py",
        status == "accepted",
        env,
        kw.get("category"),
        kw.get("reason"),
        kw.pop("cases", ()),
    )
    if status == "pending":
        verdict = None
    return CandidateRecord(
        id=id,
        round=rnd,
        parent=parent,
        proposer=proposer,
        model=model,
        status=status,
        verdict=verdict,
        created=f"2026-11-30T10:{rnd:02d}:{int(id[-1]):02d}+00:00",
        **kw,
    )


def _run(run_id, op, env, state, *, proposer="llm", model="gpt-test", **kw) -> RunRecord:
    return RunRecord(
        id=run_id,
        op=op,
        environment=env,
        state=state,
        settings=RunSettings(
            op=op,
            proposer=proposer,
            model=model,
            base_url="http://127.0.0.1:8000/v1" if proposer == "llm" else None,
            device=env.device,
            budget=Budget(rounds=2, candidates=2),
            seed=7,
        ),
        created="2026-11-30T10:00:00+00:00",
        **kw,
    )


def build_project(root: Path) -> None:
    for folder in ("references", "seeds"):
        (root / folder).mkdir(parents=True)
        for op in ("softmax", "rms_norm", "silu_and_mul"):
            shutil.copy(REPO / folder / f"{op}.py", root / folder / f"{op}.py")
    seed = (root / "seeds" / "softmax.py").read_text()
    seed_sha = hashlib.sha256(seed.encode()).hexdigest()
    r1c1 = seed.replace(R1C1_SRC_OLD, R1C1_SRC_NEW)
    start = r1c1.index("@triton.jit")
    end = r1c1.index("@functools.lru_cache")
    best = r1c1[:start] + BEST_KERNEL + "\n\n" + r1c1[end:]
    best = best.replace(
        "BLOCK_SIZE=triton.next_power_of_2(n_cols)",
        "BLOCK_SIZE=min(triton.next_power_of_2(n_cols), 4096)",
    )

    # A finished CUDA run: two rounds, the best streams long rows.
    cuda = _run(
        CUDA_RUN,
        "softmax",
        GPU,
        "finished",
        stopped="budget: 2 of 2 rounds done",
        rounds_done=2,
        elapsed_s=754.0,
        best="r2-c1",
        seed_bench=bench("seed", SEED_US, False, sha=seed_sha),
        usage=Usage(calls=6, prompt_tokens=10_000, completion_tokens=2_345, cost_usd=0.042),
        promoted=True,
    )
    store.save_run(cuda)
    cases = [
        CaseResult(
            name="odd/bfloat16/normal",
            status="failed",
            max_abs_err=0.31,
            rel_err=0.12,
            torch_rel_err=0.004,
            note="mismatch at row 3",
        ),
        CaseResult(name="one/float32/normal", status="passed", max_abs_err=0.0, rel_err=0.0),
    ]
    cands = [
        (
            _cand(
                "r1-c0",
                1,
                "seed",
                "rejected",
                category="incorrect",
                cases=cases,
                reason="odd/bfloat16/normal: max abs err 0.31 > atol 1e-5 + rtol 1.6e-2",
            ),
            seed.replace("x - tl.max(x, axis=0)", "x"),
        ),
        (
            _cand(
                "r1-c1",
                1,
                "seed",
                "accepted",
                bench=bench("r1-c1", R1C1_US),
                speedup=1.43,
                became_best=True,
                sha256="2" * 64,
            ),
            r1c1,
        ),
        (
            _cand(
                "r2-c0",
                2,
                "r1-c1",
                "rejected",
                category="compile",
                reason="OutOfResources: shared memory, required 262144, hardware limit 232448",
            ),
            r1c1.replace("tl.arange(0, BLOCK_SIZE)", "tl.arange(0, 2 * BLOCK_SIZE)"),
        ),
        (
            _cand(
                "r2-c1",
                2,
                "r1-c1",
                "accepted",
                bench=bench("r2-c1", BEST_US),
                speedup=1.62,
                became_best=True,
                sha256="3" * 64,
                compile=[
                    CompileFacts(
                        kernel="_softmax_kernel",
                        registers=40,
                        spills=0,
                        shared_bytes=16,
                        num_warps=8,
                        num_stages=1,
                    )
                ],
            ),
            best,
        ),
    ]
    for rec, src in cands:
        store.save_candidate("softmax", CUDA_RUN, rec, src)

    # A later run on the same op where every candidate was rejected.
    rejected = _run(
        REJECTED_RUN,
        "softmax",
        GPU,
        "finished",
        proposer="tune",
        model=None,
        stopped="stagnation: 2 rounds without a gain",
        rounds_done=2,
        seed_bench=bench("seed", SEED_US, False, sha=seed_sha),
        elapsed_s=95.0,
    )
    store.save_run(rejected)
    for i, (cat, why) in enumerate(
        [
            ("compile", "OutOfResources: registers, num_warps=1 with BLOCK_SIZE=262144"),
            ("timeout", "ran past the 60 s limit"),
        ]
    ):
        rec = _cand(
            f"r{i + 1}-c0",
            i + 1,
            "seed",
            "rejected",
            proposer="tune",
            model=None,
            category=cat,
            reason=why,
        )
        store.save_candidate(
            "softmax", REJECTED_RUN, rec, seed.replace('num_warps": 4', 'num_warps": 1')
        )

    # A CPU run: verified, never timed.
    cpu = _run(
        CPU_RUN,
        "silu_and_mul",
        CPU,
        "finished",
        proposer="files",
        model=None,
        stopped="no more candidates in the folder",
        rounds_done=1,
        elapsed_s=31.0,
    )
    store.save_run(cpu)
    sm = (root / "seeds" / "silu_and_mul.py").read_text()
    store.save_candidate(
        "silu_and_mul",
        CPU_RUN,
        _cand("r1-c0", 1, "seed", "accepted", env=CPU, proposer="files", model=None),
        sm.replace("def silu_and_mul", "# vectorised\ndef silu_and_mul", 1),
    )
    store.save_candidate(
        "silu_and_mul",
        CPU_RUN,
        _cand(
            "r1-c1",
            1,
            None,
            "rejected",
            env=CPU,
            proposer="files",
            model=None,
            category="no_code",
            reason="the file held no Python code",
        ),
    )

    # A run still going: round 1 done with a best, round 2 half judged.
    running = _run(
        RUNNING_RUN,
        "rms_norm",
        GPU,
        "running",
        rounds_done=1,
        best="r1-c0",
        elapsed_s=300.0,
        seed_bench=bench("seed", SEED_US, False, op="rms_norm"),
        usage=Usage(calls=2, prompt_tokens=4000, completion_tokens=900),
    )
    store.save_run(running)
    rn = (root / "seeds" / "rms_norm.py").read_text()
    store.save_candidate(
        "rms_norm",
        RUNNING_RUN,
        _cand(
            "r1-c0",
            1,
            "seed",
            "accepted",
            bench=bench("r1-c0", R1C1_US, op="rms_norm"),
            became_best=True,
            speedup=1.2,
        ),
        rn + "\n# tuned: num_warps=8\n",
    )
    store.save_candidate("rms_norm", RUNNING_RUN, _cand("r2-c0", 2, "r1-c0", "pending"))

    lib = root / "generated" / "kernelgen_ops"
    lib.mkdir(parents=True)
    (lib / "softmax.py").write_text(best)
    (lib / "MANIFEST.json").write_text(
        json.dumps(
            {
                "softmax": {
                    "run_id": CUDA_RUN,
                    "candidate_id": "r2-c1",
                    "proposer": "llm",
                    "device": "NVIDIA H200",
                    "speedups": {"eager": 2.0},
                },
            }
        )
    )


@dataclass
class Project:
    root: Path
    cuda_run: str = CUDA_RUN
    rejected_run: str = REJECTED_RUN
    cpu_run: str = CPU_RUN
    running_run: str = RUNNING_RUN
    best_us: tuple[float, ...] = tuple(BEST_US)
    eager_us: tuple[float, ...] = tuple(s[2] for s in SHAPES.values())
    compile_us: tuple[float, ...] = tuple(s[3] for s in SHAPES.values())

    def run_dir(self, op: str, run_id: str) -> Path:
        return self.root / "evaluations" / op / run_id


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(root))
    paths._find_root.cache_clear()
    build_project(root)
    yield Project(root)
    paths._find_root.cache_clear()


@pytest.fixture
def wide_dispatch(project: Project) -> dict[str, int]:
    """softmax's dispatch table at twelve shapes, as a library tuned over many shapes has it: six
    rows timed on the device, six launch-bound ones where a direct call, a routed one and one
    in a CUDA graph take the kernel at different shapes. Gives how many shapes each takes."""
    table: dict[str, dict] = {}
    for shape in ("4096x4096", "8192x4096", "16384x4096", "64x151936", "256x151936", "1024x151936"):
        table[shape] = {"shape": shape, "kernel": True, "kernel_us": 10.0, "torch_us": 20.0}
    launch = {"host_included": True}
    # (kernel, kernel us, torch us, kernel's device us, torch's device us), read by
    # kernelgen_ops._runtime: 1x151936 wins even routed, 2x32000 and 16x32000 only called
    # directly, 1x32000 and 4x32000 only by device time, 8x32000 nowhere.
    for shape, (kernel, k_us, t_us, k_dev, t_dev) in {
        "1x151936": (True, 15.0, 40.5, None, 40.5),
        "2x32000": (True, 22.0, 40.0, None, 40.0),
        "16x32000": (True, 22.0, 40.0, None, 40.0),
        "1x32000": (True, 9.7, 12.9, 5.5, 12.9),
        "4x32000": (False, 14.0, 12.0, 8.0, 12.0),
        "8x32000": (False, 14.0, 12.0, None, None),
    }.items():
        row = launch | {"shape": shape, "kernel": kernel, "kernel_us": k_us, "torch_us": t_us}
        if k_dev is not None:
            row["kernel_device_us"] = k_dev
        if t_dev is not None:
            row["torch_device_us"] = t_dev
        table[shape] = row
    configs = project.root / "generated" / "kernelgen_ops" / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    (configs / "softmax.json").write_text(
        json.dumps({"dispatch": {"NVIDIA H200|triton-3.6.0": table}})
    )
    return {"shapes": 12, "direct": 9, "routed": 7, "graphs": 11}
