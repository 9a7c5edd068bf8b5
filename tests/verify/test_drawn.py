"""The judge draws cases from SPEC.domain on top of the fixed ones ([V2] item 1): kernels right
only at the listed widths, only on layouts whose leading dims are dense, or only while no large
value comes after the first block, each rejected on a drawn case that the reason names, with the
seed that draws it again; each honest twin accepted.

The cheap tests judge the drawn cases alone (the fixed ones are every other test's), with the
seeds below, whose CPU grids hold what the cheats break on; the slow ones show each cheat passes
the fixed grid alone and each twin the whole one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kernelgen.spec import Case, load_module, load_spec
from kernelgen.spec.draw import drawn_cases
from kernelgen.verify import verify_candidate
from kernelgen.verify.judge import Evaluator
from kernelgen.verify.limits import limit_cases

ROOT = Path(__file__).resolve().parents[2]
DRAWN = Path(__file__).parent / "candidates" / "drawn"
# softmax, CPU: drawn2 is a 12289-wide row (past the listed 5003 and its block of 8192, and not
# a listed width) of `spike` values.
SOFTMAX_SEED = 10
# rms_norm, CPU: drawn2 is a leading view, x [3, 12, 17] of a [3, 16, 17] tensor.
RMS_NORM_SEED = 2

slow = pytest.mark.slow


def _listed(case: Case) -> bool:
    widths = {c.dims["cols"] for c in load_spec("softmax").cases}
    return case.dims["cols"] in widths


def _leading_unfolded(case: Case) -> bool:
    """x's rows are not one stride apart: the dims above the last do not fold into one."""
    (shape,) = case.size.shapes.values() or [[case.dims["rows"], case.dims["cols"]]]
    return len(shape) >= 3 and case.size.layout.kind in ("leading", "transposed", "expanded")


# (cheat, operator, seed, what the failing drawn case must be)
CHEATS: list[tuple[str, str, int, Callable[[Case], bool]]] = [
    ("softmax_block_listed.py", "softmax", SOFTMAX_SEED, lambda c: c.dims["cols"] > 8192),
    (
        "softmax_listed_widths.py",
        "softmax",
        SOFTMAX_SEED,
        lambda c: c.dims["cols"] > 1024 and not _listed(c),
    ),
    ("softmax_first_block_max.py", "softmax", SOFTMAX_SEED, lambda c: c.dist == "spike"),
    ("rms_norm_flat_rows.py", "rms_norm", RMS_NORM_SEED, _leading_unfolded),
]
TWINS: list[tuple[str, str, int]] = [
    ("softmax_block_fit.py", "softmax", SOFTMAX_SEED),
    ("softmax_row_max.py", "softmax", SOFTMAX_SEED),
    ("rms_norm_row_strides.py", "rms_norm", RMS_NORM_SEED),
]

_JUDGES: dict[tuple[str, int], Evaluator] = {}


@pytest.fixture(autouse=True)
def _in_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module", autouse=True)
def _close_judges() -> Iterator[None]:
    yield
    for ev in _JUDGES.values():
        ev.close()
    _JUDGES.clear()


def _drawn_judge(op: str, seed: int) -> Evaluator:
    """One judge per (operator, seed), as a run has, narrowed to its drawn cases."""
    if (op, seed) not in _JUDGES:
        ev = Evaluator(op, "cpu", seed=seed)
        ev.grid = [c for c in ev.grid if c.drawn]
        _JUDGES[op, seed] = ev
    return _JUDGES[op, seed]


def test_the_widths_cheat_remembers_every_fixed_width() -> None:
    """softmax_listed_widths.py passes every fixed case, the GPU-only and limit ones too, so that
    on CUDA as on CPU a drawn case is what rejects it: its list keeps up with the spec's."""
    spec = load_spec("softmax")
    widths = {c.dims["cols"] for c in [*spec.cases, *limit_cases(spec)]}
    cheat = load_module(DRAWN / "softmax_listed_widths.py", "softmax_listed_widths")
    assert widths <= cheat.LISTED, f"widths the cheat forgets: {sorted(widths - cheat.LISTED)}"


def test_the_seeds_draw_what_the_cheats_break_on() -> None:
    for name, op, seed, breaks in CHEATS:
        drawn = drawn_cases(load_spec(op), seed, "cpu")
        assert any(breaks(c) for c in drawn), f"seed {seed} draws no case {name} breaks on"


@pytest.mark.parametrize(("name", "op", "seed", "breaks"), CHEATS, ids=[c[0] for c in CHEATS])
def test_cheat_rejected_on_a_named_drawn_case(
    name: str, op: str, seed: int, breaks: Callable[[Case], bool]
) -> None:
    ev = _drawn_judge(op, seed)
    v = verify_candidate(op, DRAWN / name, device="cpu", evaluator=ev)
    assert not v.accepted, f"{name} accepted on the drawn cases of seed {seed}"
    assert v.category == "incorrect", f"{v.category}: {v.reason}"
    assert v.reason is not None and v.reason.startswith("case drawn"), v.reason
    failed = next(c for c in ev.grid if v.reason.startswith(f"case {c.name} "))
    assert breaks(failed), f"{name} failed on {failed.name}, not a case it breaks on"
    assert f"(drawn from seed {seed})" in v.reason


@pytest.mark.parametrize(("name", "op", "seed"), TWINS, ids=[t[0] for t in TWINS])
def test_honest_twin_accepted_on_the_drawn_cases(name: str, op: str, seed: int) -> None:
    v = verify_candidate(op, DRAWN / name, device="cpu", evaluator=_drawn_judge(op, seed))
    assert v.accepted, f"{name}: {v.category}: {v.reason}"
    assert v.cases_run == len(_drawn_judge(op, seed).grid)


def test_a_fresh_judge_with_the_seed_draws_the_failure_again() -> None:
    """As `kernelgen verify --seed S` twice: two fresh judges. (A judge that has judged other
    candidates has drawn their calls' fills from its generator since: the same case fails,
    its poison may differ.)"""
    name, op, seed, _ = CHEATS[0]
    reasons = []
    for _ in range(2):
        with Evaluator(op, "cpu", seed=seed, keep_warm=False) as fresh:
            fresh.grid = [c for c in fresh.grid if c.drawn]
            assert fresh.grid == _drawn_judge(op, seed).grid
            reasons.append(verify_candidate(op, DRAWN / name, device="cpu", evaluator=fresh).reason)
    assert reasons[0] is not None and reasons[0].startswith("case drawn")
    assert reasons[1] == reasons[0]


def test_every_drawn_candidate_is_listed() -> None:
    listed = {c[0] for c in CHEATS} | {t[0] for t in TWINS}
    assert listed == {p.name for p in DRAWN.glob("*.py")}


# The fixed grid alone (no draws: the judge before SPEC.domain) accepts every cheat above, and
# the whole grid, fixed and drawn, accepts every twin. Each runs the operator's whole CPU grid.


@slow
@pytest.mark.parametrize(("name", "op", "seed", "breaks"), CHEATS, ids=[c[0] for c in CHEATS])
def test_cheat_passes_the_fixed_grid_alone(
    name: str, op: str, seed: int, breaks: Callable[[Case], bool]
) -> None:
    with Evaluator(op, "cpu", seed=seed, draws=0, keep_warm=False) as ev:
        v = verify_candidate(op, DRAWN / name, device="cpu", evaluator=ev)
    assert v.accepted, f"{name}: {v.category}: {v.reason}"


@slow
@pytest.mark.parametrize(("name", "op", "seed"), TWINS, ids=[t[0] for t in TWINS])
def test_honest_twin_accepted_on_the_whole_grid(name: str, op: str, seed: int) -> None:
    v = verify_candidate(op, DRAWN / name, device="cpu", seed=seed)
    assert v.accepted, f"{name}: {v.category}: {v.reason}"


@slow
def test_cli_verify_with_the_seed_names_the_drawn_case() -> None:
    name, op, seed, _ = CHEATS[0]
    command = [sys.executable, "-m", "kernelgen", "verify", op, str(DRAWN / name)]
    result = subprocess.run(
        [*command, "--device", "cpu", "--gpu-target", "none", "--seed", str(seed), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    verdict = json.loads(result.stdout)
    assert verdict["reason"].startswith("case drawn"), verdict["reason"]
    assert f"(drawn from seed {seed})" in verdict["reason"]
