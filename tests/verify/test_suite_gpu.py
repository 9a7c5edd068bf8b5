"""The adversarial suite on CUDA, outside the hole classes of test_holes.py: what the judge draws
(candidates/drawn), the autotune sweep (autotune), the error ratio of operators with their own
compare (compare), what the interpreter emulates (interpreter), one program on both devices
(static), the fills (fills), the attacks on the judge's process (adversarial), and the honest
candidates of candidates/. Each cheat is rejected for its reason and each twin accepted by the
full CUDA verdict, fixed and drawn cases and every config, the verdict that gates promotion.

Run on the H200 by scripts/gpu/verifier.sh (its suite step), cold with KERNELGEN_COLD_VERDICTS=1
(tests/verify/suite.py), which is how [V2]'s 60-second bound is measured.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import suite  # noqa: E402

CANDIDATES = Path(__file__).parent / "candidates"
SEED = 1  # scripts/gpu/verifier.sh's cold step judges the shipped kernels with it too
ACCEPTED = "accepted"

# (folder/file, operator, ACCEPTED or the categories a rejection may have, text its reason holds:
# one of several where a tuple)
EXPECTED: list[tuple[str, str, str | set[str], str | tuple[str, ...]]] = [
    # Drawn cases: every seed's 12 CUDA draws hold cases each cheat breaks on (test_drawn.py).
    # The CUDA grid's fixed rows are wider than the CPU's: a block sized to the CPU's widest
    # fails at its first GPU-only width, and 64 rows of 151936 `wide` values may put one past
    # the first block's max by more than exp() takes.
    ("drawn/softmax_block_listed.py", "softmax", {"incorrect"}, ("case drawn", "case huge_row/")),
    ("drawn/softmax_listed_widths.py", "softmax", {"incorrect"}, "case drawn"),
    ("drawn/softmax_first_block_max.py", "softmax", {"incorrect"}, ("case drawn", "/wide: ")),
    ("drawn/rms_norm_flat_rows.py", "rms_norm", {"incorrect"}, "case drawn"),
    ("drawn/softmax_block_fit.py", "softmax", ACCEPTED, ""),
    ("drawn/softmax_row_max.py", "softmax", ACCEPTED, ""),
    ("drawn/rms_norm_row_strides.py", "rms_norm", ACCEPTED, ""),
    # Every config judged alone, however many launches a call makes and however it is wrapped.
    ("autotune/two_launches_bad.py", "softmax", {"incorrect"}, "_softmax_pass config 3 of 4"),
    ("autotune/heuristics_bad.py", "softmax", {"incorrect"}, "_softmax_kernel.fn config 4 of 5"),
    ("autotune/two_launches.py", "softmax", ACCEPTED, ""),
    ("autotune/heuristics.py", "softmax", ACCEPTED, ""),
    # The error ratio against torch runs for an operator with its own compare.
    ("compare/act_quant_toward_zero.py", "act_quant", {"incorrect"}, "nearest e4m3"),
    ("compare/act_quant_reciprocal.py", "act_quant", ACCEPTED, ""),
    # What the interpreter emulates is what the GPU computes: a TF32 router_gemm is wrong here
    # as on CPU; libdevice runs on every case.
    ("interpreter/router_gemm_tf32.py", "router_gemm", {"incorrect"}, ""),
    ("interpreter/router_gemm_ieee.py", "router_gemm", ACCEPTED, ""),
    ("interpreter/router_gemm_tf32x3.py", "router_gemm", ACCEPTED, ""),
    ("interpreter/silu_and_mul_libdevice.py", "silu_and_mul", ACCEPTED, ""),
    ("interpreter/silu_and_mul_libdevice_exp2.py", "silu_and_mul", {"incorrect"}, ""),
    ("interpreter/silu_and_mul_libdevice_div_rz.py", "silu_and_mul", ACCEPTED, ""),
    # A launcher may not branch on the device it runs on.
    ("static/softmax_gpu_shortcut.py", "softmax", {"static"}, "device-branch"),
    ("static/softmax_one_program.py", "softmax", ACCEPTED, ""),
    # Fills drawn per run, the small pool flooded too.
    ("fills/silu_and_mul_known_fills.py", "silu_and_mul", {"incorrect", "stale"}, ""),
    ("fills/silu_and_mul_reads_output.py", "silu_and_mul", ACCEPTED, ""),
    # The judge's process stands whatever the candidate's does.
    ("adversarial/oob_write.py", "softmax", {"crash", "incorrect"}, ""),
    ("adversarial/hang.py", "softmax", {"timeout"}, ""),
    ("adversarial/huge_alloc.py", "softmax", {"oom", "crash"}, ""),
    ("adversarial/cached_output.py", "softmax", {"aliasing", "stale", "static"}, ""),
    ("adversarial/input_mutation.py", "softmax", {"mutation"}, ""),
    ("adversarial/partial_write.py", "softmax", {"incorrect"}, ""),
    ("adversarial/exit_early.py", "softmax", {"crash"}, ""),
    # Honest candidates of the styles agents write.
    ("decode_attn_split.py", "decode_attn", ACCEPTED, ""),
    # Right, and too slow to answer a real batch: every program recomputes its token's whole
    # intermediate, so DeepSeek-V3's 65600 tokens (the limit case) take hours, not the case's
    # deadline of seconds. A kernel no server could call is timed out, not waited for.
    ("fused_moe_fused.py", "fused_moe", {"timeout"}, "limit/experts_past_2g"),
    ("rms_norm_contiguous.py", "rms_norm", ACCEPTED, ""),
    ("router_gemm_gemv.py", "router_gemm", ACCEPTED, ""),
    # One tensor-core accumulator through all of K: on the H200 18x less accurate than torch's
    # fp32 GEMM at the limit case (logs/h200-20261205-router-gemm-block-sums-cold-suite), past
    # the tolerance there, or within it and past the error ratio (precision, on the H100).
    ("router_gemm_split_w.py", "router_gemm", {"incorrect", "precision"}, "limit/tokens"),
    ("silu_and_mul_flat.py", "silu_and_mul", ACCEPTED, ""),
    ("softmax_autotuned_persistent.py", "softmax", ACCEPTED, ""),
    ("softmax_online.py", "softmax", ACCEPTED, ""),
    ("topk_rounds.py", "topk", ACCEPTED, ""),
]

judges = suite.judges_fixture()


def test_every_candidate_is_listed_once() -> None:
    """A candidate added to one of these folders is judged on CUDA too."""
    folders = ["drawn", "autotune", "compare", "interpreter", "static", "fills", "adversarial"]
    on_disk = {p.name for p in CANDIDATES.glob("*.py")}
    on_disk |= {f"{d}/{p.name}" for d in folders for p in (CANDIDATES / d).glob("*.py")}
    listed = [e[0] for e in EXPECTED]
    assert sorted(listed) == sorted(on_disk)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(("name", "op", "expected", "says"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_judged_on_cuda(
    name: str,
    op: str,
    expected: str | set[str],
    says: str | tuple[str, ...],
    judges: suite.Judges,
) -> None:
    # The hang's own deadline, not the default's: the verdict is the same, minutes sooner.
    kw = {"timeout_s": 30.0} if name.endswith("hang.py") else {}
    v = suite.judge(op, CANDIDATES / name, "cuda", SEED, judges, **kw)
    if expected == ACCEPTED:
        assert v.accepted, f"{name}: {v.category}: {v.reason}"
        assert v.cases_run > 0
    else:
        assert not v.accepted, f"{name} accepted on CUDA"
        assert v.category in expected, f"{name}: {v.category}: {v.reason}"
        options = (says,) if isinstance(says, str) else says
        assert any(o in (v.reason or "") for o in options), v.reason
