"""scripts/peer_grids.py without a GPU: the peers' grids as data (each names its test and commit
and has a check for every dtype it runs), their cases built into kernelgen_ops' calls that the
references take, the peers' checks on answers made to pass and to fail, and the harness run for
real on a small subset through Triton's interpreter: a deliberately wrong kernel reported failed
where it ran and passed where torch's op took the call, a page size the library refuses recorded
as refused with its message, a case over the element limit as skipped, and a run resumed and
summarized."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.append(str(SCRIPTS))

from grids import Check, all_grids  # noqa: E402
from grids import check as grid_check  # noqa: E402
from grids import inputs as grid_inputs  # noqa: E402
from grids.record import CaseRecord, GridsSummary  # noqa: E402

from kernelgen.spec import load_spec  # noqa: E402

OUTPUTS = {"act_quant": 2}  # the ops of more than one output


def _wide(args: list) -> list:
    return [a.double() if torch.is_tensor(a) and a.is_floating_point() else a for a in args]


def test_every_grid_names_its_test_and_checks_each_dtype() -> None:
    grids = all_grids()
    assert {g.peer for g in grids} == {"flaggems", "liger", "quack", "flashinfer", "sglang"}
    for g in grids:
        assert re.fullmatch(r"[0-9a-f]{40}", g.source.commit), g.name
        assert g.name.startswith(f"{g.peer}.{g.op}."), g.name
        assert g.op in grid_inputs.BUILDERS, g.name
        keys = [c.key() for c in g.cases]
        assert len(set(keys)) == len(keys), f"{g.name}: a case twice"
        for dtype in {c.dtype for c in g.cases}:
            assert len(g.checks[dtype]) == OUTPUTS.get(g.op, 1), f"{g.name} {dtype}"


@pytest.mark.parametrize("grid", all_grids(), ids=lambda g: g.name)
def test_the_first_case_of_each_grid_is_a_call_the_reference_takes(grid) -> None:
    spec = load_spec(grid.op)
    calls = grid_inputs.build(grid.op, grid.cases[0], 1, "cpu", None)
    for call in calls:
        # The reference takes the call's arguments, upcast as the harness upcasts them.
        out = spec.reference(*_wide(call.args))
        assert all(torch.is_tensor(o) for o in (out if isinstance(out, tuple) else (out,)))
        if spec.data.reduction is not None:
            assert spec.data.reduction in call.dims, grid.name


def test_decode_pages_the_library_does_not_take_are_also_laid_out_in_its_own() -> None:
    grid = next(g for g in all_grids() if g.name.startswith("flaggems.decode_attn"))
    first, repaged = grid_inputs.build("decode_attn", grid.cases[0], 3, "cpu", None)
    assert first.args[1].shape[1] == 32 and repaged.args[1].shape[1] == 64
    spec = load_spec("decode_attn")
    # The same requests: the same answer from either layout.
    torch.testing.assert_close(
        spec.reference(*_wide(first.args)), spec.reference(*_wide(repaged.args))
    )


def test_the_peers_checks() -> None:
    ref = torch.tensor([1.0, float("nan"), float("-inf"), 0.5], dtype=torch.float64)
    near = torch.tensor([1.0005, float("nan"), float("-inf"), 0.5])
    assert grid_check.peer([Check(atol=1e-3, rtol=0, equal_nan=True)], near, ref) is None
    assert "(the peer's check takes no NaN)" in grid_check.peer([Check(atol=1e-3)], near, ref)
    off = grid_check.peer([Check(atol=1e-4, equal_nan=True)], near, ref)
    assert off.startswith("1.0005 at [0], reference 1") and "1 of 4 entries off" in off

    codes = torch.arange(0, 120, dtype=torch.uint8)
    q_ref = codes.view(torch.float8_e4m3fn)
    one = codes.clone()
    one[5] += 1
    two = codes.clone()
    two[5] += 2
    rule = Check(kind="fp8_codes", limit=0.005, small_limit=0.04, small_numel=4096)
    # 1 of 120 codes a step off: 0.8%, under 4% at 4096 entries or fewer.
    assert grid_check.peer([rule], one.view(torch.float8_e4m3fn), q_ref) is None
    assert "1 e4m3 codes off by 2" in grid_check.peer([rule], two.view(torch.float8_e4m3fn), q_ref)
    big = rule.model_copy(update={"small_numel": 100})
    assert "the peer allows under 0.5%" in grid_check.peer(
        [big], one.view(torch.float8_e4m3fn), q_ref
    )

    idx = torch.tensor([[3, 1, 2]])
    assert grid_check.peer([Check(kind="same_set")], idx, torch.tensor([[1, 2, 3]])) is None
    assert "row 0 picks" in grid_check.peer(
        [Check(kind="same_set")], idx, torch.tensor([[1, 2, 4]])
    )
    mean = Check(kind="relmean", limit=1e-3)
    assert (
        grid_check.peer([mean], torch.ones(8) * 1.0005, torch.ones(8, dtype=torch.float64)) is None
    )
    assert "limit 0.001" in grid_check.peer([mean], torch.ones(8) * 1.01, torch.ones(8).double())


def _records(path: Path) -> list[CaseRecord]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [CaseRecord.model_validate(x) for x in lines if x["kind"] == "case"]


def _harness(*args: str, patch: str = "") -> subprocess.CompletedProcess:
    """scripts/peer_grids.py in a process of its own (TRITON_INTERPRET is read when triton is
    imported), with `patch` run after kernelgen_ops is imported."""
    code = (
        "import os, sys\n"
        "os.environ['TRITON_INTERPRET'] = '1'\n"
        f"sys.path.insert(0, {str(SCRIPTS)!r})\n"
        "import kernelgen_ops, torch\n"
        f"{patch}\n"
        "import peer_grids\n"
        f"sys.exit(peer_grids.main({list(args)!r}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KERNELGEN_OPS_DISPATCH"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


# The shipped softmax's launcher, its answer then spoilt at one entry: the kernel still runs
# (the harness sees it take the call) and is wrong.
WRONG = """
import importlib
module = importlib.import_module("kernelgen_ops.softmax")
real = module.softmax
def wrong(x):
    out = real(x)
    out.view(-1)[0] += 0.25
    return out
module.softmax = wrong
"""


def test_a_wrong_kernel_fails_where_it_ran(tmp_path) -> None:
    out = tmp_path / "grids.jsonl"
    args = ("run", str(out), "--device", "cpu", "--grids", "liger.softmax", "--max-cases", "2")
    _harness(*args, patch=WRONG)
    records = _records(out)
    assert len(records) == 2 * 4  # two fp32 cases, direct and routed, measured and forced
    for r in records:
        if r.path == "kernel":
            assert r.status == "failed", r
            assert r.peer_error and "entries off" in r.peer_error
            assert r.kernelgen_error and r.kernelgen_error.startswith("incorrect:")
        else:  # torch's op took the routed call: no evidence of a win on the CPU
            assert (r.mode, r.dispatch, r.status) == ("routed", "measured", "passed"), r
    assert {(r.mode, r.dispatch) for r in records if r.path == "kernel"} == {
        ("direct", "measured"),
        ("direct", "kernel"),
        ("routed", "kernel"),
    }
    # The shipped kernel on the same cases: every call passes.
    good = tmp_path / "good.jsonl"
    _harness("run", str(good), *args[2:])
    assert {r.status for r in _records(good)} == {"passed"}


def test_a_refused_page_size_a_skipped_case_a_resumed_run_and_its_summary(tmp_path) -> None:
    out = tmp_path / "grids.jsonl"
    # FlashInfer's first case (1-token pages, 12 x 54 tokens, D 128) fits 700000 elements; its
    # second (D 256) does not.
    args = ("run", str(out), "--device", "cpu", "--grids", "flashinfer", "--max-cases", "2")
    _harness(*args, "--max-elements", "700000")
    records = _records(out)
    skipped = [r for r in records if r.status == "skipped"]
    assert len(skipped) == 1 and "over the run's 700000" in skipped[0].message
    assert skipped[0].mode is None and "d=256" in skipped[0].case
    refused = [r for r in records if r.status == "refused"]
    assert {(r.mode, r.dispatch) for r in refused} == {("direct", "measured"), ("direct", "kernel")}
    for r in refused:
        assert r.path is None and r.peer_error is None and r.kernelgen_error is None
        assert r.message.startswith(
            "ValueError: kernelgen_ops.decode_attn: k_cache (648, 1, 4, 128)"
        )
        assert "supported page sizes: 64" in r.message
        assert r.layout.startswith("1-token pages, K and V interleaved")
    repaged = [r for r in records if r.layout.startswith("repaged")]
    assert {r.status for r in repaged} == {"passed"} and len(repaged) == 2
    first = refused[0]
    assert first.grid == "flashinfer.decode_attn.test_batch_decode_with_paged_kv_cache"
    assert first.source == (
        "flashinfer-ai/flashinfer tests/attention/test_batch_decode_kernels.py::"
        "test_batch_decode_with_paged_kv_cache @ fb28d7242b"
    )
    assert (first.peer, first.op, first.dtype, first.shape) == (
        "flashinfer",
        "decode_attn",
        "float16",
        None,
    )
    assert "batch=12" in first.case and "page=1" in first.case and "kv_len=54" in first.case

    # Run again on the same file: nothing is done twice.
    _harness(*args, "--max-elements", "700000")
    assert len(_records(out)) == len(records)

    summary = tmp_path / "summary.json"
    _harness("summary", str(out), str(summary))
    s = GridsSummary.model_validate_json(summary.read_text())
    assert s.totals == {"passed": 2, "refused": 2, "skipped": 1}
    assert s.environment.device == "cpu" and s.environment.interpreter
    (grid,) = s.grids
    assert grid.cases == 2
    assert grid.calls == {
        "direct/measured": {"refused": 1, "passed": 1},
        "direct/kernel": {"refused": 1, "passed": 1},
        "skipped": {"skipped": 1},
    }
    assert sorted(r.status for r in s.not_passed) == ["refused", "refused", "skipped"]
