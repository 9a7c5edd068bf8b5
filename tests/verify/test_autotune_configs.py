"""Autotuned candidates are judged config by config: every autotuned kernel is found under any
chain of heuristics and autotune wrappers, each call pins the config every launch of a kernel
runs (never the timing path), each config runs alone on every case, and a compile-ahead launch
compiles every config. The judged tests restrict softmax to two small CPU cases."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
import triton
import triton.language as tl

from kernelgen.verify import configs, interpreter, sweep
from kernelgen.verify.protocol import Space

ROOT = Path(__file__).resolve().parents[2]
AUTOTUNE = Path(__file__).parent / "candidates" / "autotune"


@triton.jit
def _kernel(x_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    pass


def _space(*blocks: int, warps: int = 4) -> list[triton.Config]:
    return [triton.Config({"BLOCK": b, "MODE": 0}, num_warps=warps) for b in blocks]


def _module(**kernels: Any) -> types.ModuleType:
    module = types.ModuleType("candidate")
    vars(module).update(kernels, triton=triton)
    return module


def _heuristics(fn: Any) -> Any:
    return triton.heuristics({"MODE": lambda args: 0})(fn)


def _autotune(fn: Any, space: list[triton.Config], **kw: Any) -> Any:
    return triton.autotune(configs=space, key=["n"], **kw)(fn)


# ---- finding the autotuners ------------------------------------------------------------------


def test_autotuners_are_found_under_any_wrapper_chain() -> None:
    inner = _autotune(_kernel, _space(16, 32))
    module = _module(
        plain=_autotune(_kernel, _space(16, 32)),
        wrapped=_heuristics(_autotune(_kernel, _space(16, 32, 64))),  # heuristics outside
        over=_autotune(_heuristics(_kernel), _space(16, 32)),  # autotune of a heuristics kernel
        deep=_heuristics(_heuristics(_autotune(_heuristics(_kernel), _space(8, 16)))),
        inner=inner,
        alias=inner,  # one kernel under two names is swept once
        single=_autotune(_kernel, _space(16)),  # nothing to sweep
        jit=_kernel,
    )
    spaces = {s.kernel: len(s.configs) for s in configs.register(module)}
    assert spaces == {"plain": 2, "wrapped.fn": 3, "over": 2, "deep.fn.fn": 2, "inner": 2}


def test_configs_alike_in_the_interpreter_are_named() -> None:
    """Warps and stages are dropped by the interpreter; a heuristic inside the autotuner sees
    them, so there each config is its own."""
    space = [
        triton.Config({"BLOCK": 16, "MODE": 0}, num_warps=2),
        triton.Config({"BLOCK": 16, "MODE": 0}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK": 32, "MODE": 0}, num_warps=2),
        triton.Config({"BLOCK": 16, "MODE": 1}, num_warps=2),
    ]
    (plain,) = configs.register(_module(k=_autotune(_kernel, space)))
    assert plain.interpreted_as == [0, 0, 2, 3]
    assert plain.configs[1] == "BLOCK=16, MODE=0, num_warps=4, num_stages=2"
    (over,) = configs.register(_module(k=_autotune(_heuristics(_kernel), space)))
    assert over.interpreted_as == [0, 1, 2, 3]


# ---- the pinned launch -----------------------------------------------------------------------


def _recording(ran: list[list[int]]) -> Any:
    """Stands in for Autotuner.run: records the BLOCK of each config it was left to run."""

    def run(self: Any, *args: Any, **kwargs: Any) -> int:
        ran.append([c.kwargs["BLOCK"] for c in self.configs])
        return self.configs[0].kwargs["BLOCK"]

    return run


def test_every_launch_runs_the_pinned_config() -> None:
    tuner = _autotune(_kernel, _space(16, 32, 64))
    configs.register(_module(k=tuner))
    ran: list[list[int]] = []
    run = configs.sweep(_recording(ran), compile_all=False)
    assert [run(tuner, None, 100) for _ in range(3)] == [16, 16, 16]  # unpinned: the first
    with configs.pinned({"k": 2}):
        assert [run(tuner, None, 100) for _ in range(3)] == [64, 64, 64]
    assert run(tuner, None, 100) == 16  # the pin lasts one call
    assert all(len(r) == 1 for r in ran)  # never the do_bench path of several configs
    assert [c.kwargs["BLOCK"] for c in tuner.configs] == [16, 32, 64]  # restored


def test_compile_ahead_compiles_every_config() -> None:
    tuner = _autotune(_kernel, _space(16, 32, 64))
    ran: list[list[int]] = []
    configs.sweep(_recording(ran), compile_all=True)(tuner, None, 100)
    assert ran == [[16], [32], [64]]


def test_a_pruned_pin_runs_the_first_config_kept() -> None:
    def prune(space: list[triton.Config], nargs: dict, **kw: Any) -> list[triton.Config]:
        return [c for c in space if c.kwargs["BLOCK"] <= nargs["n"]]

    tuner = _autotune(_kernel, _space(64, 16, 32), prune_configs_by={"early_config_prune": prune})
    configs.register(_module(k=tuner))
    run = configs.sweep(_recording([]), compile_all=False)
    with configs.pinned({"k": 2}):
        assert run(tuner, None, 40) == 32
    with configs.pinned({"k": 0}):  # BLOCK=64 is pruned for n=40: never run there
        assert run(tuner, None, 40) == 16


def test_what_cannot_be_swept_is_refused() -> None:
    def invent(space: list[triton.Config], nargs: dict, **kw: Any) -> list[triton.Config]:
        return [triton.Config({"BLOCK": 4096, "MODE": 1})]

    inventing = _autotune(_kernel, _space(16, 32), prune_configs_by={"early_config_prune": invent})
    configs.register(_module(k=inventing))
    run = configs.sweep(_recording([]), compile_all=False)
    with pytest.raises(configs.ContractError, match="does not declare"):
        run(inventing, None, 100)
    hidden = _autotune(_kernel, _space(16, 32))  # not among the module's names
    with pytest.raises(configs.ContractError, match="not a module-level kernel"):
        run(hidden, None, 100)
    with pytest.raises(ValueError, match="has none such"), configs.pinned({"k": 2}):
        pass


def test_single_config_untouched() -> None:
    tuner = _autotune(_kernel, _space(16))
    assert configs.sweep(_recording([]), compile_all=False)(tuner, None, 1) == 16


# ---- the judge's plan ------------------------------------------------------------------------


def test_each_config_of_each_kernel_is_pinned_alone() -> None:
    """A case's four calls run a base config of each kernel, the next in turn from case to
    case; one call more runs each other config of one kernel, the others at their base."""
    a = Space(kernel="a", configs=["x", "y", "z"], interpreted_as=[0, 0, 2])
    b = Space(kernel="b.fn", configs=["p", "q"], interpreted_as=[0, 1])
    assert sweep.case_pins([a, b], "cuda", 0) == (
        {"a": 0, "b.fn": 0},
        [{"a": 1, "b.fn": 0}, {"a": 2, "b.fn": 0}, {"a": 0, "b.fn": 1}],
    )
    assert sweep.case_pins([a, b], "cuda", 4) == (
        {"a": 1, "b.fn": 0},
        [{"a": 0, "b.fn": 0}, {"a": 2, "b.fn": 0}, {"a": 1, "b.fn": 1}],
    )
    # On CPU a's y is x (they differ only in warps): one program, run once.
    assert sweep.case_pins([a, b], "cpu", 1) == (
        {"a": 2, "b.fn": 1},
        [{"a": 0, "b.fn": 1}, {"a": 2, "b.fn": 0}],
    )
    assert sweep.case_pins([], "cpu", 3) == ({}, [])
    assert sweep.note([a, b], {"a": 2}) == "a config 3 of 3 (z); b.fn config 1 of 2 (p)"
    assert sweep.note([], {}) == ""
    assert sweep.over_budget([a, b]) is None
    big = Space(kernel="k", configs=["c"] * 33, interpreted_as=list(range(33)))
    too_many = sweep.over_budget([big])
    assert too_many is not None and too_many.category == "contract"


def test_stand_in_device_is_the_h200() -> None:
    assert interpreter.H200.multi_processor_count == 132
    assert interpreter.H200.major == 9


# ---- judged --------------------------------------------------------------------------------


@pytest.fixture
def two_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    """Softmax on two CPU cases: 50 columns (where every config here is right) and 5003 (where
    the bad ones are wrong)."""
    from kernelgen.verify.judge import Evaluator

    keep = {"rank3/float32/normal", "long_row/float32/normal"}
    monkeypatch.setattr(
        Evaluator, "cases", lambda self: [c for c in self.spec.cases if c.name in keep]
    )
    monkeypatch.chdir(ROOT)


@pytest.mark.parametrize(
    ("name", "named"),
    [
        # Harmless on a call's first launch, wrong on its second.
        ("two_launches_bad.py", "_softmax_pass config 3 of 4 (BLOCK=256, ONE_CHUNK=1"),
        # heuristics(autotune(heuristics(jit))).
        ("heuristics_bad.py", "_softmax_kernel.fn config 4 of 5 (BLOCK=1024, UNROLL=4"),
    ],
)
def test_a_wrong_config_is_rejected_by_name(two_cases: None, name: str, named: str) -> None:
    from kernelgen.verify import verify_candidate

    v = verify_candidate("softmax", AUTOTUNE / name, device="cpu", seed=3)
    assert not v.accepted
    assert v.category == "incorrect", v.reason
    assert "long_row/float32/normal" in (v.reason or "") and named in (v.reason or ""), v.reason


@pytest.mark.parametrize("name", ["two_launches.py", "heuristics.py"])
def test_honest_twins_are_accepted(two_cases: None, name: str) -> None:
    from kernelgen.verify import verify_candidate

    v = verify_candidate("softmax", AUTOTUNE / name, device="cpu", seed=3)
    assert v.accepted, v.reason
