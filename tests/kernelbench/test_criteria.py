"""KernelBench's own criteria on a stored candidate: 5 random trials of the problem's get_inputs()
at its own size, atol = rtol = 1e-2 against the Model's forward, in a sandboxed process; on the
CPU only where the interpreter runs that size, and never timed there."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen import store
from kernelgen.errors import UsageError
from kernelgen.kernelbench import import_paths
from kernelgen.kernelbench.criteria import check_candidate, load_check, record_path
from kernelgen.kernelbench.results import TOLERANCE, TRIALS

HERE = Path(__file__).parent
SOFTMAX = (HERE / "problems" / "level1" / "1_Softmax.py").read_text()
GOOD_SOFTMAX = (HERE / "candidates" / "softmax_rows.py").read_text()
OP = "kb1_1_softmax"
# Off by 0.02 everywhere: twice KernelBench's atol, at values near 0.01.
OFF = GOOD_SOFTMAX.replace("num / tl.sum(num, axis=0)", "num / tl.sum(num, axis=0) + 0.02")
# Off by 0.5% of each value: far past kernelgen's fp32 tolerance, well inside KernelBench's.
SLIGHTLY_OFF = GOOD_SOFTMAX.replace(
    "num / tl.sum(num, axis=0)", "num / tl.sum(num, axis=0) * 1.005"
)


def _stored(source: str, cand: str) -> None:
    folder = store.candidate_dir(OP, "r1", cand)
    folder.mkdir(parents=True)
    (folder / "source.py").write_text(source)


@pytest.fixture()
def tiny(kb_project: Path) -> Path:
    (result,) = import_paths([kb_project.parent / "kb" / "level1" / "1_Softmax.py"])
    assert result.status == "imported"
    return kb_project


def test_a_right_candidate_passes_all_five_trials_on_cpu(tiny: Path) -> None:
    _stored(GOOD_SOFTMAX, "good")
    check = check_candidate(OP, "r1", "good", "cpu")
    assert check.correct is True and check.error is None
    assert len(check.trials) == TRIALS and all(t.passed for t in check.trials)
    assert len({t.seed for t in check.trials}) == TRIALS  # five draws, not one five times
    assert max(t.max_abs_diff or 0 for t in check.trials) < 1e-6
    assert check.timing is None and "not run on CPU" in (check.timing_not_run or "")
    assert check.tolerance == TOLERANCE == 1e-2
    assert load_check(OP, "r1", "good") == check  # stored beside the candidate
    assert record_path(OP, "r1", "good").parent == store.candidate_dir(OP, "r1", "good")


def test_a_wrong_candidate_fails_at_atol_rtol_1e_2(tiny: Path) -> None:
    _stored(OFF, "off")
    check = check_candidate(OP, "r1", "off", "cpu")
    assert check.correct is False
    assert len(check.trials) == TRIALS and not any(t.passed for t in check.trials)
    assert all(0.019 < (t.max_abs_diff or 0) < 0.021 for t in check.trials)


def test_kernelbench_passes_what_is_off_by_half_a_percent(tiny: Path) -> None:
    """Why kernelgen judges by its own tolerances: this one KernelBench's check lets through."""
    _stored(SLIGHTLY_OFF, "slight")
    check = check_candidate(OP, "r1", "slight", "cpu")
    assert check.correct is True
    assert all(1e-5 < (t.max_abs_diff or 0) < 1e-3 for t in check.trials)


def test_a_candidate_that_raises_ends_the_trials(tiny: Path) -> None:
    _stored(GOOD_SOFTMAX.replace("rows, cols = x.shape", "rows, cols, _ = x.shape"), "raises")
    check = check_candidate(OP, "r1", "raises", "cpu")
    assert check.correct is False
    assert len(check.trials) == 1 and "ValueError" in (check.trials[0].error or "")


def test_past_the_interpreter_it_is_not_run_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test softmax at its own 64 x 3000: KernelBench's sizes are not the interpreter's."""
    root = tmp_path / "project"
    (root / "references").mkdir(parents=True)
    level = tmp_path / "level1"
    level.mkdir()
    (level / "1_Softmax.py").write_text(SOFTMAX)
    monkeypatch.setenv("KERNELGEN_ROOT", str(root))
    import_paths([level / "1_Softmax.py"])
    _stored(GOOD_SOFTMAX, "good")
    check = check_candidate(OP, "r1", "good", "cpu")
    assert check.correct is None and check.trials == []
    assert "not run on CPU" in (check.correctness_not_run or "")
    assert "batch_size=64, features=3000" in (check.correctness_not_run or "")


def test_a_missing_candidate_or_device_is_a_usage_error(tiny: Path) -> None:
    with pytest.raises(UsageError, match="no such candidate"):
        check_candidate(OP, "r1", "missing", "cpu")
    with pytest.raises(UsageError, match="expected cpu or cuda"):
        check_candidate(OP, "r1", "good", "tpu")


def test_trials_at_a_size_no_judge_could_keep_hold_the_hosts_limit_lock(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On CUDA, a problem whose truth at its own size is past a judge's share of the GPU has its
    trials as one judge of the host at a time (gpulock.limit_case); one within it does not."""
    from kernelgen.kernelbench import kbworker
    from kernelgen.kernelbench.results import KbRequest
    from kernelgen.verify import truth

    req = KbRequest(op=OP, root=str(tiny), candidate="unused.py", device="cuda")
    assert not kbworker._large(req.model_copy(update={"device": "cpu"}))  # no budget: no GPU
    monkeypatch.setattr(truth, "device_budget", lambda device: 1 << 40)
    assert not kbworker._large(req)
    monkeypatch.setattr(truth, "device_budget", lambda device: 1 << 10)  # 8 x 100 fp32 is past
    assert kbworker._large(req)


def test_timing_takes_the_contenders_in_rounds_and_a_failure_leaves_the_others() -> None:
    """KernelBench's timing here: one trial of each contender in turn, round after round, the
    first rounds dropped, so a drift of the GPU across the timing weighs on all alike; the first
    warmup call (the compile) outside the lock, the rest and the rounds inside; a contender that
    raises keeps its error and leaves the others' trials whole."""
    from contextlib import contextmanager

    from kernelgen.kernelbench.kbworker import Contender, in_rounds

    log: list[str] = []
    locked = [False]

    @contextmanager
    def exclusive():  # noqa: ANN202
        locked[0] = True
        yield
        locked[0] = False

    def call(name: str, fail_at: int | None = None):  # noqa: ANN202
        calls = [0]

        def fn() -> None:
            calls[0] += 1
            if calls[0] == fail_at:
                raise RuntimeError("out of memory")
            log.append(f"{name}{'*' if locked[0] else ''}")

        return fn

    def warm(fn, args, n) -> None:  # noqa: ANN001
        for _ in range(n):
            fn(*args)

    clock = [0.0]

    def trial(fn, args) -> float:  # noqa: ANN001
        fn(*args)
        clock[0] += 1.0  # a drifting GPU: each trial one ms slower than the last
        return clock[0]

    contenders = [
        Contender("candidate", call("c"), [], 2),
        Contender("eager", call("e"), [], 3),
        Contender("compile", call("k", fail_at=5), [], 3),  # fails in its second round
    ]
    times, errors = in_rounds(contenders, 3, 1, warm, trial, exclusive)
    assert log[:3] == ["c", "e", "k"]  # the compile calls, before the lock
    assert log[3:6] == ["c*", "e*", "e*"] and log[6] == "k*"  # the rest of the warmups
    rounds = log[8:]
    assert rounds[:4] == ["c*", "e*", "k*", "c*"]  # one each in turn; k fails in round 2
    assert rounds[4:] == ["e*", "c*", "e*", "c*", "e*"]
    assert errors == {"compile": "RuntimeError: out of memory"}
    # Round 1 dropped (ms 1-3); then k's failed trial took no time.
    assert times == {"candidate": [4.0, 6.0, 8.0], "eager": [5.0, 7.0, 9.0]}
