"""The adversarial suite of issue [V] item 8: one cheating or wrong candidate per hole class of the
verifier, each of which must be rejected with the category that names the hole, and honest twins
of the styles the cheats imitate, each of which must be accepted.

The candidates live in candidates/holes/ (`<class>_<name>.py`, class = the issue's item number; `x`
for the exit-code attacks) and candidates/honest/. Each cheat's docstring says how it works, what
the verifier at c167456 answered and which category the fixed verifier must give. Many of them are
accepted at c167456: these tests describe the verifier after the rewrite (judge and judged in
separate processes, every call fully checked, a closed whitelist of attribute paths).

CPU runs use the Triton interpreter; the `gpu` variants run the same files on CUDA (skipped without
a device), where interpreter-only tricks fail to compile instead and cross-program races show.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelgen.records import Verdict
from kernelgen.verify import verify_candidate

sys.path.insert(0, str(Path(__file__).parent))
import suite  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = Path(__file__).parent / "candidates"
HOLES = CANDIDATES / "holes"
HONEST = CANDIDATES / "honest"
SEED = 11

slow = pytest.mark.slow  # a single CPU verify of the file took more than 60 s here

# The categories the fixed verifier may give, on CPU.
PROVENANCE = {"provenance", "static"}
STATIC = {"static"}
CALL_CHECKED = {"aliasing", "mutation", "static"}
HIDDEN_STATE = {"static", "stale", "incorrect", "aliasing"}
POISON_SNIFF = {"stale", "incorrect"}
INCORRECT = {"incorrect"}
CAST = {"provenance"}

# (file, operator, categories on CPU, categories on CUDA, marks)
CHEATS: list[tuple[str, str, set[str], set[str], list]] = [
    # 1: the guard is blind inside the launch
    ("1_constexpr_tensor.py", "softmax", PROVENANCE, PROVENANCE | {"compile", "crash"}, []),
    ("1_grid_closure.py", "softmax", PROVENANCE, PROVENANCE, []),
    ("1_pre_run_hook.py", "softmax", PROVENANCE, PROVENANCE, []),
    # 2: allowed modules re-export forbidden ones
    ("2_frame_ground_truth.py", "softmax", STATIC, STATIC, []),
    ("2_patch_checks.py", "softmax", STATIC, STATIC, []),
    ("2_dispatch_off.py", "softmax", STATIC, STATIC, []),
    ("2_thread_compute.py", "softmax", STATIC, STATIC, []),
    ("2_forge_verdict.py", "softmax", STATIC, STATIC, []),
    # 3: only the first call was checked for mutation and aliasing
    ("3_alias_after_first.py", "softmax", CALL_CHECKED, CALL_CHECKED, []),
    ("3_mutate_replay.py", "softmax", {"mutation", "static"}, {"mutation", "static"}, []),
    # 4: hidden state the static rule misses
    ("4_count_default.py", "softmax", HIDDEN_STATE, HIDDEN_STATE, []),
    ("4_lru_cache_entry.py", "softmax", HIDDEN_STATE, HIDDEN_STATE, []),
    ("4_dict_alias_counter.py", "softmax", HIDDEN_STATE, HIDDEN_STATE, []),
    # 5: the verifier's buffers can be told apart
    ("5_skip_written_rows.py", "softmax", POISON_SNIFF, POISON_SNIFF, []),
    # 6: coverage
    ("6_width_mult64.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_width_pow2.py", "softmax", INCORRECT, INCORRECT, [slow]),
    ("6_tail_rows.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_all_neg_inf_zero.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_nan_ignored.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_max_drops_nan.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_posinf_clamped.py", "softmax", INCORRECT, INCORRECT, []),
    ("6_rms_norm_eps.py", "rms_norm", INCORRECT, INCORRECT, []),
    ("6_autotune_one_wrong.py", "softmax", INCORRECT, INCORRECT, [slow]),
    # 7: a dtype cast in the launcher
    ("7_cast_setitem.py", "softmax", CAST, CAST, []),
    ("7_cast_silu_and_mul.py", "silu_and_mul", CAST, CAST, []),
    # x: whatever the candidate does, a verdict (and an exit code of 0, 1 or 2)
    ("x_system_exit.py", "softmax", {"crash"}, {"crash"}, []),
    ("x_os_exit.py", "softmax", {"static", "crash"}, {"static", "crash"}, []),
    ("x_kill_parent.py", "softmax", STATIC, STATIC, []),
    ("x_stdout_forgery.py", "softmax", STATIC, STATIC, []),
    ("x_bad_result.py", "softmax", STATIC, STATIC, []),
]

# Right on CPU by construction (the interpreter runs programs one by one): judged on CUDA only.
GPU_ONLY_CHEATS: list[tuple[str, str, set[str]]] = [
    ("6_race_gpu.py", "softmax", {"incorrect", "stale", "race"}),
]

# (path, operator, marks)
HONEST_TWINS: list[tuple[Path, str, list]] = [
    (HONEST / "softmax_split_row.py", "softmax", [slow]),
    (CANDIDATES / "softmax_online.py", "softmax", [slow]),
    (HONEST / "softmax_autotuned_many.py", "softmax", [slow]),
    (HONEST / "rms_norm_persistent.py", "rms_norm", [slow]),
    (HONEST / "silu_and_mul_2d.py", "silu_and_mul", []),
    (HONEST / "softmax_tma_descriptor.py", "softmax", []),
]


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _cheat_params(device: str) -> list:
    params = [
        pytest.param(name, op, cpu if device == "cpu" else cuda, marks=marks, id=name)
        for name, op, cpu, cuda, marks in CHEATS
    ]
    if device == "cuda":
        params += [pytest.param(name, op, cats, id=name) for name, op, cats in GPU_ONLY_CHEATS]
    return params


# Honest where the GPU computes, wrong in the interpreter's bf16 (its conversions and dots):
# judged on CUDA only. router_gemm_split_w.py was one until the limit case showed its one
# tensor-core accumulator through K = 7168 less accurate than torch's fp32 GEMM on the H200
# (2.53e-5 against 1.38e-6): test_suite_gpu.py expects it rejected; the kernel shipped since adds
# each K block's sum into an fp32 total, and the cold step of scripts/gpu/verifier.sh judges it.
GPU_ONLY_HONEST: list[tuple[Path, str, list]] = []


def _honest_params(device: str = "cpu") -> list:
    twins = HONEST_TWINS + (GPU_ONLY_HONEST if device == "cuda" else [])
    return [pytest.param(path, op, marks=marks, id=path.name) for path, op, marks in twins]


# On CUDA the files of one operator are judged as the candidates of one run are: by one judge
# (truth, warm runners and compile-ahead pool made once), each candidate in runners of its own;
# with KERNELGEN_COLD_VERDICTS=1 each by a judge of its own over an empty cache (suite.py).
judges = suite.judges_fixture()


def _verify(op: str, path: Path, device: str, judges: suite.Judges) -> Verdict:
    return suite.judge(op, path, device, SEED, judges if device == "cuda" else None)


def _rejected(op: str, name: str, expected: set[str], device: str, js: suite.Judges) -> None:
    v = _verify(op, HOLES / name, device, js)
    assert not v.accepted, f"{name} accepted on {device}: the hole is open"
    assert v.category in expected, f"{name}: {v.category}: {v.reason}"
    assert v.reason


def _accepted(op: str, path: Path, device: str, js: suite.Judges) -> None:
    v = _verify(op, path, device, js)
    assert v.accepted, f"{path.name}: {v.category}: {v.reason}"
    assert v.cases_run > 0


@pytest.mark.parametrize(("name", "op", "expected"), _cheat_params("cpu"))
def test_cheat_rejected(name: str, op: str, expected: set[str], judges: suite.Judges) -> None:
    _rejected(op, name, expected, "cpu", judges)


@pytest.mark.parametrize(("path", "op"), _honest_params())
def test_honest_twin_accepted(path: Path, op: str, judges: suite.Judges) -> None:
    _accepted(op, path, "cpu", judges)


@pytest.mark.parametrize(("name", "op", "expected"), _cheat_params("cuda"))
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cheat_rejected_gpu(name: str, op: str, expected: set[str], judges: suite.Judges) -> None:
    _rejected(op, name, expected, "cuda", judges)


@pytest.mark.parametrize(("path", "op"), _honest_params("cuda"))
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_honest_twin_accepted_gpu(path: Path, op: str, judges: suite.Judges) -> None:
    _accepted(op, path, "cuda", judges)


def test_every_hole_file_is_listed() -> None:
    listed = {c[0] for c in CHEATS} | {c[0] for c in GPU_ONLY_CHEATS}
    assert listed == {p.name for p in HOLES.glob("*.py")}
    assert {p for p, _, _ in HONEST_TWINS if p.parent == HONEST} == set(HONEST.glob("*.py"))


# 8: on CPU, bf16 and GPU-only cases do not run; the verdict says so, and it is still a success.


def test_cpu_verdict_of_seed_is_partial() -> None:
    v = verify_candidate("softmax", ROOT / "seeds" / "softmax.py", device="cpu", seed=SEED)
    assert v.accepted, v.reason
    assert v.cases_not_run, "a CPU verdict cannot run the bf16 and GPU-only cases"
    assert getattr(v, "outcome", None) == "accepted-partial"


def _cli_verify(op: str, path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kernelgen", "verify", op, str(path), "--device", "cpu"]
    return subprocess.run(
        [*command, "--json", "--seed", str(SEED)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=1800,
    )


def _one_verdict(result: subprocess.CompletedProcess[str]) -> dict:
    """stdout of `verify --json` is one JSON object and nothing else, whatever the candidate
    wrote: a forged line beside it is as bad as a forged exit code."""
    verdict = json.loads(result.stdout)
    assert isinstance(verdict, dict)
    return verdict


@slow
def test_cli_exit_code_of_partial_verdict_is_zero() -> None:
    result = _cli_verify("softmax", ROOT / "seeds" / "softmax.py")
    assert result.returncode == 0, result.stderr[-2000:]
    verdict = _one_verdict(result)
    assert verdict["accepted"] is True
    assert verdict.get("outcome") == "accepted-partial"


def _cli_params() -> list:
    # The exit-code attacks are quick; the others run the whole grid again, so they are slow.
    return [
        pytest.param(name, op, marks=[] if name.startswith("x_") else [slow], id=name)
        for name, op, _, _, _ in CHEATS
    ]


@pytest.mark.parametrize(("name", "op"), _cli_params())
def test_cli_exit_code_of_cheat_is_one(name: str, op: str) -> None:
    result = _cli_verify(op, HOLES / name)
    assert result.returncode in (0, 1, 2), f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert result.returncode == 1, f"exit {result.returncode} for a cheat"
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    verdict = _one_verdict(result)
    assert verdict["accepted"] is False
