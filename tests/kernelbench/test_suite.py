"""`kernelgen suite kernelbench`: every problem of the levels in the record, attempted with the
proposer asked for where it can be, resumable after a kill, and KernelBench's check on what is
accepted. The problems are kb_project's (conftest.py): a tiny softmax and a square matmul."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelgen import store
from kernelgen.cli import app
from kernelgen.kernelbench.results import SuiteProblem, SuiteRecord
from kernelgen.kernelbench.scores import load_state, state_path
from kernelgen.kernelbench.suite import SuiteOptions, open_state, run_suite, save
from kernelgen.propose.base import Proposal
from kernelgen.propose.files import FilesProposer
from kernelgen.records import Budget
from kernelgen.run import loop
from kernelgen.spec import reference_path

HERE = Path(__file__).parent
GOOD = (HERE / "candidates" / "softmax_rows.py").read_text()
SOFTMAX, MATMUL = "kb1_1_softmax", "kb1_2_square_matmul"


def _options(root: Path, **kw: object) -> SuiteOptions:
    base = {
        "levels": [1],
        "checkout": str(root.parent / "kb"),
        "device": "cpu",
        "proposer": "files",
        "source": str(root / "proposals"),
        "budget_s": 300.0,
    }
    return SuiteOptions(**{**base, **kw})  # type: ignore[arg-type]


def _proposals(root: Path) -> Path:
    folder = root / "proposals" / SOFTMAX
    folder.mkdir(parents=True)
    (folder / "a_good.py").write_text(GOOD)
    return folder


def _quiet(_: object) -> None:
    pass


def _by_op(rec: SuiteRecord) -> dict:
    return {p.op: p for p in rec.problems}


def test_a_suite_runs_the_pipeline_and_kernelbench_s_check(kb_project: Path) -> None:
    _proposals(kb_project)
    args = ["suite", "kernelbench", "--level", "1", "--from", str(kb_project.parent / "kb")]
    args += ["--proposer", "files", "--source", "proposals", "--device", "cpu", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    last = json.loads(result.output.strip().splitlines()[-1])
    rows = {p["op"]: p for p in last["problems"]}
    soft, mat = rows[SOFTMAX], rows[MATMUL]
    assert soft["status"] == "accepted" and soft["kb_correct"] is True and soft["device"] == "cpu"
    assert soft["speedup_vs_eager"] is None  # nothing is timed on CPU
    check = json.loads(
        (
            store.candidate_dir(SOFTMAX, soft["run"], soft["candidate"]) / "kernelbench.json"
        ).read_text()
    )
    assert check["correct"] is True and len(check["trials"]) == 5
    assert mat["status"] == "not attempted" and mat["run"] is None
    assert mat["reason"].endswith(f"no *.py under proposals/{MATMUL}/)")  # as given: relative
    assert not reference_path(MATMUL).exists()  # nothing to judge: not even imported
    assert last["summary"]["eager"]["fast_0"] == 0.5 and last["summary"]["eager"]["fast_1"] == 0
    # Run again: nothing is attempted twice.
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert store.list_runs(SOFTMAX) == [soft["run"]]


def test_a_killed_suite_resumes_the_run_it_left(kb_project: Path) -> None:
    """The suite was killed while the softmax's first candidate was being judged: its state file
    says running, its run holds the candidate pending. Run again, the same run finishes it."""
    folder = _proposals(kb_project)
    options = _options(kb_project)
    rec = open_state(options)  # as the killed suite made it
    from kernelgen.kernelbench.suite import _import

    assert _import(kb_project.parent / "kb" / "level1" / "1_Softmax.py") is None
    started = store.stamp()
    runner = loop.start(
        SOFTMAX,
        FilesProposer(folder),
        device="cpu",
        budget=Budget(rounds=1, candidates=1, repairs=0),
        source=str(folder),
    )
    runner.new_record("r01-c01", 1, "seed", Proposal(source=GOOD, name="a_good.py"))
    runner.close()
    soft = _by_op(rec)[SOFTMAX]
    soft.status, soft.started, soft.proposer, soft.device = "running", started, "files", "cpu"
    save(rec)
    assert [c.status for c in store.load_candidates(SOFTMAX, runner.run.id)] == ["pending"]

    done = run_suite(options, _quiet, _quiet)
    soft = _by_op(done)[SOFTMAX]
    assert soft.status == "accepted" and soft.run == runner.run.id
    assert store.list_runs(SOFTMAX) == [runner.run.id]  # resumed, not started again
    (cand,) = store.load_candidates(SOFTMAX, runner.run.id)
    assert cand.status == "accepted" and soft.candidate == cand.id and soft.kb_correct is True
    assert load_state(state_path("suite")).problems == done.problems  # all of it written


def test_redo_replaces_an_accepted_run_and_keeps_it_where_the_new_accepts_nothing(
    kb_project: Path,
) -> None:
    """--redo attempts a named accepted problem again (its folder has a new file): the new run's
    best is the record's, naming the run it replaced. A redo that accepts nothing (the folder
    now holds only a softmax that forgets to normalise) leaves the earlier run standing, with
    its KernelBench figures as recorded."""
    from kernelgen.errors import UsageError

    folder = _proposals(kb_project)
    first = _by_op(run_suite(_options(kb_project), _quiet, _quiet))[SOFTMAX]
    assert first.status == "accepted" and first.replaces is None
    with pytest.raises(UsageError, match="--redo needs --problems"):
        run_suite(_options(kb_project, redo=True), _quiet, _quiet)

    (folder / "b_again.py").write_text(GOOD.replace("(the plain", "(again: the plain"))
    redo = _options(kb_project, redo=True, problems=["1"], candidates=2, rounds=1)
    second = _by_op(run_suite(redo, _quiet, _quiet))[SOFTMAX]
    assert second.status == "accepted" and second.run != first.run
    assert second.replaces == first.run and second.kb_correct is True
    assert second.earlier is None  # kept only while the new attempt is under way
    assert len(store.list_runs(SOFTMAX)) == 2
    assert _by_op(run_suite(_options(kb_project), _quiet, _quiet))[SOFTMAX] == second  # settled
    # The same redo again (a GPU call cut short, then repeated): every file is judged already.
    events: list[str] = []
    assert _by_op(run_suite(redo, events.append, _quiet))[SOFTMAX] == second
    assert len(store.list_runs(SOFTMAX)) == 2
    assert any("judged every file in its folder already: not redone" in e for e in events)
    # Files judged on another GPU are not judged here: a redo on the H200 takes them again.
    for run_id in store.list_runs(SOFTMAX):
        _made_on(SOFTMAX, run_id, "NVIDIA H100 80GB HBM3")
    elsewhere = _by_op(run_suite(redo, _quiet, _quiet))[SOFTMAX]
    assert elsewhere.status == "accepted" and elsewhere.replaces == second.run
    assert len(store.list_runs(SOFTMAX)) == 3
    second = elsewhere

    for f in folder.glob("*.py"):
        f.unlink()
    (folder / "c_unnormalised.py").write_text(GOOD.replace("num / tl.sum(num, axis=0)", "num"))
    events.clear()
    third = _by_op(run_suite(redo, events.append, _quiet))[SOFTMAX]
    assert len(store.list_runs(SOFTMAX)) == 4  # the new attempt was made, and accepted nothing
    # The earlier entry stands whole: its run, its figures, when it ran and what it waited.
    assert third == second.model_copy(update={"selected": third.selected})
    assert third.earlier is None and third.replaces == second.replaces
    assert any("the earlier run stands" in e for e in events)
    assert _by_op(run_suite(redo, _quiet, _quiet))[SOFTMAX] == third  # its file judged: not again
    assert len(store.list_runs(SOFTMAX)) == 4

    # A redo cut short and started afresh (by another proposer: not resumed) keeps the entry
    # it kept, which stands where the fresh attempt accepts nothing.
    _redo_cut_short(third, third)
    assert _by_op(run_suite(redo, _quiet, _quiet))[SOFTMAX] == third


def _redo_cut_short(entry: SuiteProblem, kept: SuiteProblem) -> None:
    """The record as a redo of `entry` left it when cut short, holding `kept` to stand, to be
    taken up afresh (its proposer another: not resumed)."""
    rec = load_state(state_path("suite"))
    at = next(i for i, q in enumerate(rec.problems) if q.op == entry.op)
    rec.problems[at] = entry.model_copy(
        update={"status": "running", "proposer": "tune", "run": None, "candidate": None,
                "earlier": kept, "replaces": kept.run}
    )  # fmt: skip
    save(rec)


def _made_on(op: str, run_id: str, gpu: str | None) -> None:
    run = store.load_run(op, run_id)
    store.save_run(
        run.model_copy(update={"environment": run.environment.model_copy(update={"gpu": gpu})})
    )


def test_rejudge_takes_again_what_another_gpu_accepted_and_its_verdict_stands(
    kb_project: Path,
) -> None:
    """--rejudge attempts an accepted problem again where its run was made on another GPU (here:
    an H100's run, judged again on this machine), once: the new run is this machine's, and it
    judges the very source the other accepted, not the folder's files. Where the new judge
    rejects, the rejection stands; no earlier acceptance is kept for it."""
    from kernelgen.errors import UsageError

    folder = _proposals(kb_project)
    first = _by_op(run_suite(_options(kb_project), _quiet, _quiet))[SOFTMAX]
    assert first.status == "accepted"
    with pytest.raises(UsageError, match="--rejudge and --redo"):
        run_suite(_options(kb_project, rejudge=True, redo=True, problems=["1"]), _quiet, _quiet)
    rejudge = _options(kb_project, rejudge=True)
    events: list[str] = []
    assert _by_op(run_suite(rejudge, events.append, _quiet))[SOFTMAX] == first  # this machine's
    assert "--rejudge: 0 accepted problems whose runs were not made on the CPU" in events
    assert store.list_runs(SOFTMAX) == [first.run]

    # A file added since, first in name order, is not what the other GPU accepted: not judged.
    (folder / "0_added_since.py").write_text(GOOD.replace("num / tl.sum(num, axis=0)", "num"))
    _made_on(SOFTMAX, first.run, "NVIDIA H100 80GB HBM3")
    second = _by_op(run_suite(rejudge, _quiet, _quiet))[SOFTMAX]
    assert second.status == "accepted" and second.run != first.run
    assert second.replaces == first.run and second.earlier is None and second.kb_correct is True
    (judged,) = store.load_candidates(SOFTMAX, second.run)
    assert judged.status == "accepted"
    assert store.candidate_source(SOFTMAX, second.run, judged.id) == GOOD
    assert _by_op(run_suite(rejudge, _quiet, _quiet))[SOFTMAX] == second  # once
    assert len(store.list_runs(SOFTMAX)) == 2

    # Where this machine's judge rejects what the other GPU's accepted, the rejection stands:
    # here, the source as the other GPU's run kept it is one this judge rejects.
    _made_on(SOFTMAX, second.run, "NVIDIA H100 80GB HBM3")
    kept = store.candidate_path(SOFTMAX, second.run, second.candidate)
    kept.write_text(GOOD.replace("num / tl.sum(num, axis=0)", "num"))
    third = _by_op(run_suite(rejudge, _quiet, _quiet))[SOFTMAX]
    assert third.status == "rejected" and third.category == "incorrect"
    assert third.replaces == second.run and third.earlier is None and third.kb_correct is None
    assert _by_op(run_suite(rejudge, _quiet, _quiet))[SOFTMAX] == third  # only accepted ones
    assert len(store.list_runs(SOFTMAX)) == 3

    # A redo cut short, taken up by a rejudge: the entry the redo kept does not stand either.
    _redo_cut_short(third, second)
    fourth = _by_op(run_suite(rejudge, _quiet, _quiet))[SOFTMAX]
    assert fourth.status == "rejected" and fourth.earlier is None
    assert fourth.replaces == second.run and len(store.list_runs(SOFTMAX)) == 4


def test_an_attempt_left_running_on_another_gpu_is_taken_up_afresh(kb_project: Path) -> None:
    """A suite cut short on one GPU and taken up on another does not finish the first GPU's
    run with this machine's check and timings: it makes its own run, and that run stands."""
    _proposals(kb_project)
    first = _by_op(run_suite(_options(kb_project), _quiet, _quiet))[SOFTMAX]
    assert first.status == "accepted"
    # As an H200's rejudge left it when its call ended: its run named, KernelBench's check not
    # yet recorded.
    _made_on(SOFTMAX, first.run, "NVIDIA H200")
    rec = load_state(state_path("suite"))
    at = next(i for i, q in enumerate(rec.problems) if q.op == SOFTMAX)
    rec.problems[at] = first.model_copy(
        update={"status": "running", "kb_correct": None, "speedup_vs_eager": None}
    )
    save(rec)
    again = _by_op(run_suite(_options(kb_project), _quiet, _quiet))[SOFTMAX]
    assert again.status == "accepted" and again.run != first.run
    assert store.load_run(SOFTMAX, again.run).environment.gpu is None  # this machine's
    assert len(store.list_runs(SOFTMAX)) == 2


def test_no_usable_proposer_is_not_attempted_with_why(
    kb_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("KERNELGEN_MODEL", "KERNELGEN_BASE_URL", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    rec = run_suite(_options(kb_project, proposer="tune", problems=["1"]), _quiet, _quiet)
    soft = _by_op(rec)[SOFTMAX]
    assert soft.status == "not attempted" and soft.run is None
    assert "the tuner searches a seed's meta-parameters" in (soft.reason or "")
    assert f"{SOFTMAX} has no seed" in (soft.reason or "")
    # Not selected, and listed all the same: fast_p counts it.
    assert _by_op(rec)[MATMUL].status == "pending" and not _by_op(rec)[MATMUL].selected

    rec = run_suite(_options(kb_project, proposer="llm", retry=True), _quiet, _quiet)
    for p in rec.problems:
        assert p.status == "not attempted" and "needs a model and an endpoint" in (p.reason or "")

    rec = run_suite(_options(kb_project, proposer="agent", problems=["1:2"]), _quiet, _quiet)
    matmul = _by_op(rec)[MATMUL]
    assert matmul.status == "not attempted"
    assert f"no agent run of {MATMUL} on cpu" in (matmul.reason or "")


def test_a_second_suite_on_the_same_state_is_refused(kb_project: Path) -> None:
    import fcntl

    from kernelgen.errors import UsageError
    from kernelgen.kernelbench.suite import scratch

    scratch().mkdir(parents=True)
    with open(scratch() / "suite.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(UsageError, match="is running in another process"):
            run_suite(_options(kb_project), _quiet, _quiet)


def test_a_suite_measures_and_does_not_ship_unless_asked() -> None:
    """Each problem's run is `kernelgen optimize --no-promote`, resumed ones too: a suite over
    KernelBench must not fill kernelgen_ops with its problems. --promote lets them through."""
    from kernelgen.kernelbench.attempt import _command
    from kernelgen.kernelbench.results import SuiteProblem, SuiteSettings

    p = SuiteProblem(level=1, problem=1, title="Softmax", op=SOFTMAX)
    kept = SuiteSettings(levels=[1], device="cuda", rounds=1, candidates=1, repairs=0)
    shipped = kept.model_copy(update={"promote": True})
    assert "--no-promote" in _command(p, kept, "files", None)
    assert "--no-promote" in _command(p, kept, "files", "20261205-000000-files-0000")
    assert "--no-promote" not in _command(p, shipped, "files", None)
    # --no-tune passes through: accepted candidates kept as written.
    assert "--no-tune" not in _command(p, kept, "files", None)
    assert "--no-tune" in _command(p, kept.model_copy(update={"tune": False}), "files", None)
    # So does --first-accepted: the fallbacks judged only where the first is rejected.
    first = kept.model_copy(update={"first_accepted": True})
    assert "--first-accepted" not in _command(p, kept, "files", None)
    assert "--first-accepted" in _command(p, first, "files", None)
    untimed = kept.model_copy(update={"bench": False})
    assert "--no-bench" not in _command(p, kept, "files", None)
    assert "--no-bench" in _command(p, untimed, "files", None)


# ---- several problems at once (--jobs) ----------------------------------------------------------


def _problems(n: int) -> list:
    from kernelgen.kernelbench.results import SuiteProblem

    return [SuiteProblem(level=1, problem=i, title="x", op=f"kb1_{i}_x") for i in range(1, n + 1)]


@pytest.mark.parametrize("at_once", [1, 2])
def test_heavy_problems_take_turns_while_light_ones_run_beside(at_once: int) -> None:
    """Problems past a job's share of GPU memory are worked on `at_once` at a time (--heavy):
    three jobs over four heavy and four light problems never hold more, and the light ones run
    meanwhile. The heavy ones are started first: they are the suite's longest chain."""
    import threading
    import time

    from kernelgen.kernelbench import jobs

    todo = _problems(8)
    heavy = {p.key for p in todo if p.problem % 2 == 0}
    now_heavy, most, started = [0], [0], []
    guard = threading.Lock()

    def work(p) -> None:  # noqa: ANN001 - a SuiteProblem
        with guard:
            started.append(p.problem)
            now_heavy[0] += p.key in heavy
            most[0] = max(most[0], now_heavy[0])
        time.sleep(0.05)
        with guard:
            now_heavy[0] -= p.key in heavy

    jobs.each(todo, 3, work, threading.Event(), heavy, at_once)
    assert sorted(started) == list(range(1, 9))
    assert most[0] == at_once
    assert started[:at_once] == [2, 4][:at_once]  # heavy ones first, as many as allowed


def test_a_job_with_only_heavy_problems_left_waits_and_a_stop_ends_the_wait() -> None:
    import threading

    from kernelgen.kernelbench import jobs

    todo = _problems(2)
    stopping = threading.Event()
    queue = jobs.Queue(todo, {p.key for p in todo}, stopping)
    first = queue.take()
    assert first is not None and first.problem == 1
    got: list = []
    waiting = threading.Thread(target=lambda: got.append(queue.take()))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive()  # problem 2 is heavy too: it waits for problem 1
    queue.done(first)
    waiting.join(2)
    assert [p.problem for p in got] == [2]
    stopping.set()
    assert jobs.Queue(_problems(1), set(), stopping).take() is None


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_a_problem_rejected_oom_beside_others_is_tried_once_more_alone(n_jobs: int) -> None:
    """A judge out of GPU memory while other jobs held some is not the candidate's verdict: the
    problem is attempted again after every other one, with nothing beside it, and only once.
    One that had the GPU to itself (one job, or the last problem) keeps its verdict."""
    import threading
    import time

    from kernelgen.kernelbench import jobs

    running, beside, order = [0], {}, []
    guard = threading.Lock()

    def work(p) -> None:  # noqa: ANN001 - a SuiteProblem
        with guard:
            running[0] += 1
            order.append(p.problem)
            beside.setdefault(p.problem, []).append(running[0] - 1)
        time.sleep(0.05)
        with guard:
            running[0] -= 1
        p.status, p.category = ("rejected", "oom") if p.problem in (2, 5) else ("accepted", None)

    jobs.each(_problems(6), n_jobs, work, threading.Event(), set())
    if n_jobs == 1:
        assert order == [1, 2, 3, 4, 5, 6]
        return
    assert sorted(order) == [1, 2, 2, 3, 4, 5, 5, 6] and set(order[-2:]) == {2, 5}
    assert beside[2][-1] == 0 and beside[5][-1] == 0  # the second attempts ran alone
    order.clear()
    jobs.each(_problems(2)[1:], n_jobs, work, threading.Event(), set())
    assert order == [2]  # it had the GPU to itself: its verdict stands


def test_a_failing_job_stops_the_others_from_taking_more() -> None:
    import threading
    import time

    from kernelgen.kernelbench import jobs

    stopping, done = threading.Event(), []

    def work(p) -> None:  # noqa: ANN001 - a SuiteProblem
        if p.problem == 1:
            raise RuntimeError("boom")
        time.sleep(0.01)
        done.append(p.problem)

    with pytest.raises(RuntimeError, match="boom"):
        jobs.each(_problems(20), 2, work, stopping, set())
    assert stopping.is_set() and len(done) < 19


def test_a_problem_not_imported_yet_weighs_nothing(
    kb_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernelgen.kernelbench import import_paths, jobs
    from kernelgen.kernelbench.results import SuiteProblem

    assert jobs.weight(SOFTMAX) == 0
    (result,) = import_paths([kb_project.parent / "kb" / "level1" / "1_Softmax.py"])
    assert result.status == "imported" and result.op == SOFTMAX
    assert jobs.weight(SOFTMAX) >= 8 * 2 * 8 * 100 * 4  # 8 x 100 fp32, in and out
    # On the CPU no problem is heavy: the interpreter's cases are small.
    softmax = SuiteProblem(level=1, problem=1, title="Softmax", op=SOFTMAX)
    assert jobs.heavy_keys([softmax], "cpu") == set()
    # Past a job's share of a GPU's memory it is.
    monkeypatch.setattr("kernelgen.verify.truth.device_budget", lambda device: 1000)
    assert jobs.heavy_keys([softmax, *_problems(1)], "cuda") == {softmax.key}


SOFTMAX2 = "kb2_1_softmax"


def _two_levels(root: Path) -> None:
    """The tiny softmax as a level-2 problem too, and the good candidate for both softmaxes."""
    kb = root.parent / "kb"
    (kb / "level2").mkdir()
    (kb / "level2" / "1_Softmax.py").write_text((kb / "level1" / "1_Softmax.py").read_text())
    _proposals(root)
    folder = root / "proposals" / SOFTMAX2
    folder.mkdir(parents=True)
    (folder / "a_good.py").write_text(GOOD.replace(SOFTMAX, SOFTMAX2))


def _suite_args(root: Path, *more: str) -> list[str]:
    args = ["suite", "kernelbench", "--level", "1", "2", "--from", str(root.parent / "kb")]
    return [*args, "--proposer", "files", "--source", "proposals", "--device", "cpu", *more]


def test_level_takes_several_values_as_the_issue_writes_them() -> None:
    from kernelgen.cli.kbsuite import spread

    assert spread(["--level", "1", "2", "--problems", "19", "1:23", "--json"]) == [
        "--level", "1", "--level", "2", "--problems", "19", "--problems", "1:23", "--json",
    ]  # fmt: skip
    assert spread(["--level=1", "2", "--from", "kb", "--jobs", "2"]) == [
        "--level=1", "--level", "2", "--from", "kb", "--jobs", "2",
    ]  # fmt: skip
    assert spread(["--level", "1,2", "--name", "x"]) == ["--level", "1,2", "--name", "x"]


def test_jobs_attempt_problems_at_once_under_the_gpu_lock(
    kb_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 2: both softmaxes' runs are under way at once (each waits at a barrier for the
    other), with the suite's lock named for their processes and the truths' share split in two;
    one times while the other's judge waits, and each problem's entry has its own wait. The
    environment is as it was afterwards."""
    import os
    import threading
    import time

    from kernelgen import gpulock
    from kernelgen.gpulock import COMPILERS_ENV, TRUTH_SHARE_ENV
    from kernelgen.kernelbench import attempt
    from kernelgen.kernelbench.suite import scratch
    from kernelgen.verify.ahead import workers

    _two_levels(kb_project)
    for name in (gpulock.LOCK_ENV, TRUTH_SHARE_ENV, COMPILERS_ENV):
        monkeypatch.delenv(name, raising=False)
    together = threading.Barrier(2, timeout=60)
    seen: dict[str, dict[str, str | None]] = {}

    def run_pipeline(p, settings, proposer, resume, log, again=None):  # noqa: ANN001, ANN202
        names = (gpulock.LOCK_ENV, gpulock.LOG_ENV, TRUTH_SHARE_ENV, COMPILERS_ENV)
        seen[p.op] = {k: os.environ.get(k) for k in names}
        seen[p.op]["judge's compile runners"] = str(workers())  # as its judge would start
        if p.op == SOFTMAX:
            with gpulock.exclusive("a timing", p.op):
                together.wait()  # the other job's run is under way too, or this breaks
                time.sleep(0.5)
        else:
            together.wait()
            with gpulock.shared("a judge", p.op):
                pass
        return "stopped by the test"

    monkeypatch.setattr(attempt, "run_pipeline", run_pipeline)
    result = CliRunner().invoke(app, _suite_args(kb_project, "--jobs", "2", "--json"))
    assert result.exit_code == 0, result.output
    assert set(seen) == {SOFTMAX, SOFTMAX2}
    for env in seen.values():
        assert env[gpulock.LOCK_ENV] == str(scratch() / "gpu.lock")
        assert env[TRUTH_SHARE_ENV] == "0.1750"  # 0.35 over two jobs
        assert env[COMPILERS_ENV] == env["judge's compile runners"] == str(max(1, workers() // 2))
    assert os.environ.get(gpulock.LOCK_ENV) is None  # restored
    assert os.environ.get(COMPILERS_ENV) is None
    rec = load_state(state_path("suite"))
    assert rec.settings.jobs == 2 and rec.settings.levels == [1, 2]
    rows = _by_op(rec)
    for op in (SOFTMAX, SOFTMAX2):
        assert rows[op].status == "not attempted"
        assert "stopped by the test" in (rows[op].reason or "")
    assert (rows[SOFTMAX].lock_wait_s or 0.0) < 0.25 <= (rows[SOFTMAX2].lock_wait_s or 0.0)
    assert rows[MATMUL].status == "not attempted" and rows[MATMUL].lock_wait_s is None


@pytest.mark.slow
def test_a_suite_of_two_jobs_killed_mid_job_resumes_both(kb_project: Path) -> None:
    """`--jobs 2` in a process of its own, killed (-9) once both softmaxes' runs are under way:
    both are running in the record, and the next suite resumes each run and accepts both."""
    import os
    import signal
    import subprocess
    import sys
    import time

    _two_levels(kb_project)
    args = _suite_args(kb_project, "--jobs", "2")
    env = {**os.environ, "KERNELGEN_ROOT": str(kb_project)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernelgen", *args],
        cwd=kb_project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    path = state_path("suite")
    end = time.monotonic() + 300
    try:
        while True:
            assert proc.poll() is None, "the suite ended before it was killed"
            assert time.monotonic() < end, "both runs never got under way"
            rec = load_state(path) if path.is_file() else None
            running = rec and all(_by_op(rec)[op].status == "running" for op in (SOFTMAX, SOFTMAX2))
            if running and store.list_runs(SOFTMAX) and store.list_runs(SOFTMAX2):
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    time.sleep(1.0)  # its runs' processes die with it (PR_SET_PDEATHSIG)
    killed = load_state(path)
    assert all(_by_op(killed)[op].status == "running" for op in (SOFTMAX, SOFTMAX2))
    runs = {op: store.list_runs(op) for op in (SOFTMAX, SOFTMAX2)}
    assert all(store.load_run(op, ids[0]).state == "running" for op, ids in runs.items())

    done = run_suite(_options(kb_project, levels=[1, 2], jobs=2), _quiet, _quiet)
    for op in (SOFTMAX, SOFTMAX2):
        p = _by_op(done)[op]
        assert p.status == "accepted" and p.kb_correct is True, p
        assert store.list_runs(op) == runs[op] == [p.run]  # resumed, not started again
    assert load_state(path).problems == done.problems
