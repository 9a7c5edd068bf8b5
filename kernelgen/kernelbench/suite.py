"""`kernelgen suite kernelbench`: the pipeline over many KernelBench problems, resumably.

The state file, evaluations/kernelbench/<name>.json (a SuiteRecord), lists every problem of the
levels the suite covers, attempted or not, with its status; it is rewritten (atomically) before
and after each step of each problem. A problem is marked running, with the time its attempt
began, before its run starts, so a suite killed at any point finds the run that attempt made and
the loop resumes it on the same GPU (on another, the problem is attempted afresh); what the run
came to, and KernelBench's check of what it accepted, are written when known. A second suite on
the same state file is refused while one runs.
--redo attempts named problems again, accepted ones too (faster candidates added to their
folders; with files, those whose runs judged every file in their folders are left as they are);
the entry as it stood is kept in it (`earlier`, its run named in `replaces`) until the
new attempt settles, and stands whole where the new one accepts nothing.
--rejudge attempts again each accepted problem whose run another GPU made (an H100's verdicts
taken again on the H200; on the CPU, a GPU's): with files, the source that run accepted is judged
again, alone, and what this machine's judge says stands, a rejection too, naming the run it
replaces. Once a problem's run is this GPU's it is not
rejudged again, so a rejudge cut short and repeated, on this machine or on another of its kind,
goes on where it stopped.

With --jobs N, N problems are attempted at once, each in its own thread and processes, on its own
copy of its entry, which it puts back into the record; the record is saved whole under one lock,
so a kill leaves each problem as its last step put it. The jobs share one GPU: the suite names a
lock file (kernelgen/gpulock.py) under which every timed measurement holds the GPU alone and the
judges hold it shared, splits the judges' share of GPU memory for truths and the host's compile
runners among the jobs, and records in each problem's entry how long its processes waited for
the lock. Problems past a job's share of GPU memory take turns (kernelbench/jobs.py).

Problems come from a KernelBench checkout (--from: imported as the suite reaches them) or from
the operators already imported. Those not selected (--problems) are in the record too, as not
attempted, so fast_p counts them.
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kernelgen import gpulock, paths, store
from kernelgen.env import gpu_name
from kernelgen.errors import KernelgenError, UsageError
from kernelgen.kernelbench import attempt, jobs
from kernelgen.kernelbench.results import SuiteProblem, SuiteRecord, SuiteSettings
from kernelgen.kernelbench.scores import gpu_of, load_state, state_dir, state_path
from kernelgen.kernelbench.source import Refused, read
from kernelgen.records import now
from kernelgen.spec import known_ops, load_spec
from kernelgen.spec.origin import IMPORTED_NAME

PROPOSERS = ("llm", "tune", "replay", "files", "agent")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class SuiteOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "suite"
    levels: list[int] = Field(default_factory=lambda: [1, 2])
    problems: list[str] = Field(
        default_factory=list, description="numbers (every chosen level), LEVEL:NUMBER, or ops"
    )
    proposer: str | None = None
    device: Literal["cpu", "cuda"] = "cpu"
    budget_s: float | None = None
    rounds: int = 4
    candidates: int = 2
    repairs: int = 2
    model: str | None = None
    base_url: str | None = None
    source: str | None = None
    checkout: str | None = None
    skip_conv: bool = False
    retry: bool = False
    redo: bool = False
    rejudge: bool = False
    promote: bool = False
    jobs: int = 1
    heavy: int = 1
    tune: bool = True
    first_accepted: bool = False
    bench: bool = True


Events = Callable[[str], None]
Done = Callable[[SuiteProblem], None]


def _check(o: SuiteOptions) -> None:
    if not _NAME.match(o.name):
        raise UsageError(f"--name {o.name!r}: letters, digits, '.', '_' and '-' only")
    if not o.levels or any(lv < 1 for lv in o.levels):
        raise UsageError(f"--level {o.levels}: expected level numbers, 1 and up")
    if o.proposer is not None and o.proposer not in PROPOSERS:
        raise UsageError(f"--proposer {o.proposer}: expected one of {', '.join(PROPOSERS)}")
    if o.proposer == "files" and not o.source:
        raise UsageError("--proposer files needs --source DIR (a folder of <op>/ folders)")
    if o.checkout is not None and not Path(o.checkout).exists():
        raise UsageError(f"--from {o.checkout}: no such file or folder")
    if o.budget_s is not None and o.budget_s <= 0:
        raise UsageError(f"--budget-s {o.budget_s:g}: expected seconds above 0")
    if o.jobs < 1:
        raise UsageError(f"--jobs {o.jobs}: expected 1 or more problems at once")
    if o.heavy < 1:
        raise UsageError(f"--heavy {o.heavy}: expected 1 or more heavy problems at once")
    if o.redo and not o.problems:
        raise UsageError("--redo needs --problems: the problems to attempt again, accepted or not")
    if o.rejudge and o.redo:
        raise UsageError("--rejudge and --redo: one at a time (a redo keeps an earlier acceptance)")


def listed(o: SuiteOptions) -> list[SuiteProblem]:
    """The problems of the chosen levels: the checkout's files, else the imported operators."""
    from kernelgen.kernelbench import problem_files

    found: list[SuiteProblem] = []
    if o.checkout is not None:
        base = Path(o.checkout)
        for path in problem_files([base]):
            try:
                pf = read(path)
            except Refused:  # a file in a level folder that is no problem
                continue
            if pf.level in o.levels:
                rel = path.relative_to(base) if base.is_dir() else Path(path.name)
                found.append(
                    SuiteProblem(
                        level=pf.level, problem=pf.problem, title=pf.title, op=pf.op, file=str(rel)
                    )
                )
        return found
    for op in known_ops():
        m = IMPORTED_NAME.match(op)
        if m and int(m.group(1)) in o.levels:
            level, number, title = int(m.group(1)), int(m.group(2)), m.group(3)
            found.append(SuiteProblem(level=level, problem=number, title=title, op=op))
    return found


def _selected(p: SuiteProblem, wanted: list[str]) -> bool:
    if not wanted:
        return True
    return any(w in (str(p.problem), f"{p.level}:{p.problem}", p.op) for w in wanted)


def _portable(path: str) -> str:
    """A folder as the record keeps it: relative to the project where it is inside (a record
    committed from a lent GPU machine names the same folders here), else absolute."""
    full = Path(path).resolve()
    try:
        return str(full.relative_to(paths.root()))
    except ValueError:
        return str(full)


def _settings(o: SuiteOptions, old: SuiteSettings | None) -> SuiteSettings:
    levels = sorted({*o.levels, *(old.levels if old else [])})
    return SuiteSettings(
        levels=levels,
        proposer=o.proposer,
        device=o.device,
        budget_s=o.budget_s,
        rounds=o.rounds,
        candidates=o.candidates,
        repairs=o.repairs,
        model=o.model,
        base_url=o.base_url,
        source=_portable(o.source) if o.source else None,
        checkout=_portable(o.checkout) if o.checkout else (old and old.checkout),
        skip_conv=o.skip_conv,
        jobs=o.jobs,
        heavy=o.heavy,
        tune=o.tune,
        first_accepted=o.first_accepted,
        bench=o.bench,
        promote=o.promote,
    )


def open_state(o: SuiteOptions) -> SuiteRecord:
    """The suite's record, made or extended with the problems listed now; unknown problems of
    the chosen levels are added, those known keep what they came to."""
    path = state_path(o.name)
    rec = load_state(path) if path.is_file() else None
    settings = _settings(o, rec.settings if rec else None)
    if rec is None:
        rec = SuiteRecord(name=o.name, settings=settings)
    rec.settings = settings
    have = {p.key: p for p in rec.problems}
    new = listed(o)
    if not new and not any(p.level in o.levels for p in rec.problems):
        where = f"under {o.checkout}" if o.checkout else "imported (give --from a checkout)"
        raise UsageError(f"no KernelBench problem of level {o.levels} {where}")
    for p in new:
        if p.key not in have:
            have[p.key] = p
        elif p.file and not have[p.key].file:
            have[p.key].file = p.file
    chosen = [p for p in have.values() if p.level in o.levels and _selected(p, o.problems)]
    if o.problems and not chosen:
        raise UsageError(f"--problems {' '.join(o.problems)}: none of level {o.levels}")
    for p in chosen:
        p.selected = True
    rec.problems = [have[k] for k in sorted(have)]
    return rec


def scratch() -> Path:
    return state_dir() / "scratch"


def save(rec: SuiteRecord) -> None:
    rec.updated = now()
    store.write_atomic(state_path(rec.name), rec.model_dump_json(indent=2))


@contextmanager
def _exclusive(name: str) -> Iterator[None]:
    # In scratch/, which git ignores under evaluations/, as the run logs.
    path = scratch() / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"suite {name!r} is running in another process ({path}): one at a time"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield


def _wanted(p: SuiteProblem, o: SuiteOptions) -> bool:
    return p.selected and p.level in o.levels and _selected(p, o.problems)


def _todo(p: SuiteProblem, o: SuiteOptions, proposer: str, here: str | None) -> bool:
    """Whether to attempt `p` now; `here`: the GPU this suite's runs record (--rejudge,
    --redo)."""
    if not _wanted(p, o):
        return False
    if p.status in ("pending", "running"):
        return True
    if o.rejudge and p.status == "accepted":
        return gpu_of(p) != here
    if o.redo:
        return not _nothing_new(p, o, proposer, here)
    # An agent works between suites: what it did since is taken again.
    again = o.retry or proposer == "agent"
    return again and p.status != "accepted"


def _nothing_new(p: SuiteProblem, o: SuiteOptions, proposer: str, here: str | None) -> bool:
    """A --redo with files where the problem's runs on this GPU have judged every file in its
    folder: the same redo called again (a GPU call cut short, then repeated) attempts only what
    it has not."""
    return proposer == "files" and attempt.judged_every_file(p.op, o.source, o.device, here)


def run_suite(o: SuiteOptions, event: Events, done: Done) -> SuiteRecord:
    """Attempt every selected problem not yet done, --jobs at a time, saving as it goes."""
    _check(o)
    with _exclusive(o.name):
        rec = open_state(o)
        save(rec)
        proposer = attempt.proposer_of(rec.settings)
        here = gpu_name(o.device)
        todo = []
        for p in rec.problems:
            if _todo(p, o, proposer, here):
                todo.append(p.model_copy(deep=True))
            elif o.redo and _wanted(p, o):  # a named problem _todo leaves: nothing new in it
                event(f"{p.op}: its runs judged every file in its folder already: not redone")
        if o.rejudge:
            again = sum(p.status == "accepted" for p in todo)
            on = here or "the CPU"
            event(f"--rejudge: {again} accepted problems whose runs were not made on {on}")
        with _sharing_gpu(rec.name, o.jobs) as waits:
            book = _Book(rec, waits)

            def work(p: SuiteProblem) -> None:
                _one(book, p, proposer, here, event, rejudge=o.rejudge)
                if not book.stopping.is_set():
                    done(p)

            # Read where each job's share of the GPU's memory is set (_sharing_gpu).
            heavy = jobs.heavy_keys(todo, o.device) if o.jobs > 1 else set()
            jobs.each(todo, o.jobs, work, book.stopping, heavy, o.heavy)
        return rec


class _Book:
    """The record the jobs share. Each job works on its own copy of its problem and puts it
    back: the record is saved whole under one lock, from entries each as its job last put it.
    Once the suite is stopping (an interrupt, a job's error) nothing more is put, so a problem
    whose processes were cut short stays running, to be resumed."""

    def __init__(self, rec: SuiteRecord, waits: Path | None):
        self.rec, self.waits = rec, waits
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def put(self, p: SuiteProblem, waits: bool = True) -> None:
        """`waits`: the entry's lock_wait_s from this attempt's log (not for an earlier entry
        restored whole, whose waits were its own attempt's)."""
        if waits and self.waits is not None:
            p.lock_wait_s = gpulock.waited(self.waits, p.op)
        with self._lock:
            if self.stopping.is_set():
                return
            at = next(i for i, q in enumerate(self.rec.problems) if q.key == p.key)
            self.rec.problems[at] = p.model_copy(deep=True)
            save(self.rec)


@contextmanager
def _sharing_gpu(name: str, jobs: int) -> Iterator[Path | None]:
    """The environment of a suite whose jobs share one GPU, for its processes and theirs: the
    lock file (KERNELGEN_GPU_LOCK, kept where it names one already: a host-wide lock), the folder
    its takers log their waits to, and each job's part of the truths' share of GPU memory (as
    scripts/gpu/verifier.sh splits it among shards) and of the host's compile runners. Yields
    the log folder; None and nothing changed for one job without a lock named."""
    if jobs == 1 and gpulock.lock_path() is None:
        yield None
        return
    from kernelgen.verify.sharing import judges_share  # torch: not at the CLI's import

    waits = scratch() / "logs" / name / "gpulock"
    waits.mkdir(parents=True, exist_ok=True)
    env = judges_share(jobs) | {
        gpulock.LOCK_ENV: str(gpulock.lock_path() or scratch() / "gpu.lock"),
        gpulock.LOG_ENV: str(waits),
    }
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield waits
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _stop(book: _Book, p: SuiteProblem, why: str, event: Events) -> None:
    if p.earlier is not None:
        return _earlier_stands(book, p, why, event)
    p.status, p.category, p.reason, p.finished = "not attempted", None, why, now()
    book.put(p)


def _earlier_stands(book: _Book, p: SuiteProblem, why: str, event: Events) -> None:
    """A --redo of an accepted problem that accepted nothing: the earlier entry stands whole,
    its run, KernelBench's figures, when it ran and what it waited."""
    assert p.earlier is not None
    event(f"{p.op}: the new attempt accepted nothing ({why}); the earlier run stands")
    earlier = p.earlier.model_copy(update={"selected": p.selected})
    for name in SuiteProblem.model_fields:
        setattr(p, name, getattr(earlier, name))
    book.put(p, waits=False)


def _one(
    book: _Book,
    p: SuiteProblem,
    proposer: str,
    here: str | None,
    event: Events,
    rejudge: bool = False,
) -> None:
    """Attempt `p` on this GPU (`here`), resuming its run where it has one here. A --redo of an
    accepted problem keeps its entry to stand if the new attempt accepts nothing; a --rejudge
    does not, the judge of this GPU having the last word, and with files it judges the source
    the replaced run accepted."""
    s = book.rec.settings
    resuming = (
        p.status == "running"
        and p.proposer == proposer
        and p.device == s.device
        # An attempt left running on another GPU starts again here: its run's verdicts and
        # this machine's KernelBench timings would be one entry of two machines.
        and (p.run is None or attempt.find_run(p, s.device, here) is not None)
    )
    if rejudge:  # this GPU's verdict stands, where it takes up a redo too
        p.earlier = None
    if not resuming:
        # --redo or --rejudge of an accepted problem: the run it replaces is named; a redo
        # keeps its entry in case the new attempt accepts nothing (a redo cut short and started
        # afresh keeps the entry it kept)
        if p.status == "accepted":
            kept = None if rejudge else p.model_copy(update={"earlier": None}, deep=True)
            p.earlier, p.replaces = kept, p.run
        elif p.status != "running":
            p.earlier = p.replaces = None
        p.status, p.started, p.finished = "running", store.stamp(), None
        p.proposer, p.device, p.run, p.candidate = proposer, s.device, None, None
        p.category = p.reason = p.kb_note = None
        p.kb_correct = p.speedup_vs_eager = p.speedup_vs_compile = p.lock_wait_s = None
        if book.waits is not None:  # the waits of this attempt only
            gpulock.log_file(book.waits, p.op).unlink(missing_ok=True)
        book.put(p)
    event(f"{p.op}: {'resuming' if resuming else 'starting'} ({proposer}, {s.device})")
    # Whether the proposer has anything for it first: an import runs the problem's Model
    # several times on the host (seconds, a large convolution's more), which a problem with
    # nothing to judge need not cost the suite's lease.
    why = attempt.unusable(p, s, proposer)
    if why:
        return _stop(book, p, why, event)
    if not resuming and p.file and s.checkout:
        with _importing:
            why = _import(paths.root() / s.checkout / p.file)
        if why:
            return _stop(book, p, f"import refused: {why}", event)
    why = attempt.cannot_run(p, s)
    if why:
        return _stop(book, p, why, event)
    log = scratch() / "logs" / book.rec.name / f"{p.op}.log"
    if proposer == "agent":
        found = attempt.agent_run(p.op, s.device)
        assert found is not None  # unusable() said there is one
        p.run = found.id
        book.put(p)
        pending = any(r.status == "pending" for r in store.load_candidates(p.op, found.id))
        failed = attempt.run_pipeline(p, s, proposer, found.id, log) if pending else None
    else:
        run = attempt.find_run(p, s.device, here)
        if run is not None and run.state != "running":
            failed = None
        else:
            resume = run.id if run is not None else None
            # A rejudge judges again the very source the replaced run accepted, not the
            # folder's first file: with --first-accepted that would be another candidate (an
            # a_fused.py where the redo had kept a faster b_rows.py), and its figure another's.
            again = None
            if rejudge and proposer == "files" and p.replaces is not None:
                again = attempt.accepted_source(p.op, p.replaces)
            failed = attempt.run_pipeline(p, s, proposer, resume, log, again)
    if book.stopping.is_set():  # its process was interrupted with the suite: resumed later
        return
    run = attempt.find_run(p, s.device, here)
    if run is None:
        return _stop(book, p, f"the run did not start: {failed or 'no run was made'}", event)
    # Put only once KernelBench's check is recorded too: a suite killed before that finds
    # the problem running, and settles it again from its finished run.
    attempt.settle(p, run)
    if p.status != "accepted" and p.earlier is not None:
        return _earlier_stands(book, p, f"its run {run.id}: {p.reason}", event)
    p.earlier = None  # the new run stands; `replaces` names the one it replaced
    if p.status == "accepted" and not book.stopping.is_set():
        event(f"{p.op}: accepted {p.candidate}; KernelBench's check")
        attempt.kernelbench_figures(p, s.device)
    elif failed and p.reason:
        p.reason += f" (the run's process: {failed})"
    p.finished = now()
    book.put(p)


# An import runs the problem's Model under torch's global seed: one at a time.
_importing = threading.Lock()


def _import(path: Path) -> str | None:
    """Import the problem unless its reference holds this very file already (an import runs
    the problem several times: seconds, for every problem of every suite). Why it was refused,
    or None."""
    from kernelgen.kernelbench import import_file
    from kernelgen.kernelbench.runtime import sha256
    from kernelgen.spec import reference_path

    try:
        pf = read(path)
        if reference_path(pf.op).is_file():
            origin = load_spec(pf.op).data.origin
            if origin is not None and origin.sha256 == sha256(pf.source):
                return None
        got = import_file(path)
    except KernelgenError as e:
        return str(e)
    return got.reason if got.status == "refused" else None
