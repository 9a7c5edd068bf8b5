"""One problem of a suite: can it be attempted, and with what; the pipeline's run on it; what the
run came to; KernelBench's criteria on what it accepted.

A run is `kernelgen optimize OP` in a process of its own (as a user would start it), so a problem
that brings the judge's process down, or outgrows its memory, costs that problem alone, and a
killed suite leaves a run the loop itself resumes (`--resume`). The run is found afterwards in
the store: the operator's run of that proposer made since the attempt began. An agent's run is
not started here: the agent opens and feeds it (`kernelgen agent start OP`, `submit`), and the
suite takes what it came to.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

from kernelgen import paths, store
from kernelgen.config import load_settings
from kernelgen.errors import KernelgenError
from kernelgen.kernelbench.results import KbCheck, SuiteProblem, SuiteSettings
from kernelgen.records import CandidateRecord, RunRecord
from kernelgen.spec import has_seed, load_spec

# The hard limit of one run's process past its own time limit: the loop checks its budget
# between steps, and a step (a verdict, a bench) can take minutes.
GRACE_S = 600.0


def proposer_of(settings: SuiteSettings) -> str:
    """The proposer the suite runs: the one asked for, else llm where configured, else tune
    (as `kernelgen optimize` chooses)."""
    if settings.proposer:
        return settings.proposer
    llm = load_settings(model=settings.model, base_url=settings.base_url)
    return "llm" if llm.llm_configured else "tune"


def _runs(op: str, proposer: str, device: str) -> list[RunRecord]:
    out = []
    for run_id in store.list_runs(op):
        try:
            run = store.load_run(op, run_id)
        except KernelgenError:  # a broken record is no run to take
            continue
        if run.settings.proposer == proposer and run.settings.device == device:
            out.append(run)
    return out


def agent_run(op: str, device: str) -> RunRecord | None:
    """The agent's run to take: the latest with a best, else the latest."""
    runs = _runs(op, "agent", device)
    with_best = [r for r in runs if r.best is not None]
    return (with_best or runs or [None])[-1]


def unusable(p: SuiteProblem, settings: SuiteSettings, proposer: str) -> str | None:
    """Why the proposer cannot attempt this problem, or None."""
    op, device = p.op, settings.device
    if proposer == "llm":
        if not load_settings(model=settings.model, base_url=settings.base_url).llm_configured:
            return (
                "no proposer: --proposer llm needs a model and an endpoint (--model and "
                "--base-url, or KERNELGEN_MODEL / OPENAI_BASE_URL)"
            )
    elif proposer == "tune":
        if not has_seed(op):
            return (
                f"no proposer: the tuner searches a seed's meta-parameters, and {op} has no "
                "seed (imported problems start from torch eager)"
            )
    elif proposer == "files":
        # Named as given (relative to the repo root): the record is committed and read elsewhere.
        given = Path(settings.source or ".") / op
        if not settings.source or not any((paths.root() / given).glob("*.py")):
            return f"no proposer: no candidates for it (no *.py under {given.as_posix()}/)"
    elif proposer == "replay":
        if not _runs(op, "llm", device):
            return f"no proposer: no llm run of {op} on {device} to replay"
    elif proposer == "agent":
        if agent_run(op, device) is None:
            return (
                f"no agent run of {op} on {device}: `kernelgen agent start {op} --device "
                f"{device}`, then submit candidates"
            )
    return None


def judged_every_file(op: str, source: str | None, device: str, gpu: str | None) -> bool:
    """Whether the problem's `files` runs on this device and this GPU (`gpu`, as runs record
    it: None on the CPU) have judged every candidate file now under SOURCE/OP/, each known by
    the sha256 of its text as the proposer reads it: a --redo would find nothing new (a redo
    that accepted nothing judged them too). Another GPU's runs do not count: a redo on the H200
    judges again what an H100 judged."""
    from kernelgen.verify import sha256  # torch: not at the CLI's import

    files = sorted((paths.root() / (source or ".") / op).glob("*.py"))
    runs = [r for r in _runs(op, "files", device) if r.environment.gpu == gpu]
    judged = {rec.sha256 for run in runs for rec in store.load_candidates(op, run.id)}
    return bool(files) and all(sha256(f.read_text(errors="replace")) in judged for f in files)


def cannot_run(p: SuiteProblem, settings: SuiteSettings) -> str | None:
    """Why the pipeline cannot take this problem on the suite's device, or None."""
    try:
        spec = load_spec(p.op)
    except KernelgenError as e:
        return f"its reference does not load: {e}"
    origin = spec.data.origin
    if settings.skip_conv and origin is not None and origin.convolution:
        return "runs a convolution (--skip-conv)"
    if settings.device == "cpu" and not any(c.interpreter for c in spec.cases):
        why = "; ".join(origin.notes[-1:]) if origin is not None and origin.notes else ""
        return "GPU-only: no size the CPU interpreter can run" + (f" ({why})" if why else "")
    return None


def _command(
    p: SuiteProblem,
    settings: SuiteSettings,
    proposer: str,
    resume: str | None,
    again: Path | None = None,
):
    cmd = [sys.executable, "-m", "kernelgen", "optimize", p.op, "--device", settings.device]
    if not settings.promote:
        cmd += ["--no-promote"]
    if not settings.tune:
        cmd += ["--no-tune"]
    if settings.first_accepted:
        cmd += ["--first-accepted"]
    if not settings.bench:
        cmd += ["--no-bench"]
    if resume is not None:
        return [*cmd, "--resume", resume, "--json"]
    cmd += ["--proposer", proposer, "--rounds", str(settings.rounds)]
    cmd += ["--candidates", str(settings.candidates), "--repairs", str(settings.repairs)]
    if settings.budget_s is not None:
        cmd += ["--time-limit", f"{settings.budget_s:g}"]
    if proposer == "files":
        cmd += ["--from", str(again or paths.root() / (settings.source or "") / p.op)]
    if proposer == "replay":
        cmd += ["--from", _runs(p.op, "llm", settings.device)[-1].id]
    if settings.model:
        cmd += ["--model", settings.model]
    if settings.base_url:
        cmd += ["--base-url", settings.base_url]
    return [*cmd, "--json"]


def run_pipeline(
    p: SuiteProblem,
    settings: SuiteSettings,
    proposer: str,
    resume: str | None,
    log: Path,
    again: Path | None = None,
) -> str | None:
    """`kernelgen optimize` on the problem in a process of its own, its output in `log`; the
    last line of its errors where it failed, else None. `again`: with files, the one source
    to judge (a rejudge's) in place of the problem's folder."""
    from kernelgen.verify.sandbox import _child_setup

    limit = None if settings.budget_s is None else 2 * settings.budget_s + GRACE_S
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        command = _command(p, settings, proposer, resume, again)
        out.write(f"$ {' '.join(command[1:])}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            # Dies with the suite (kill -9 included): a resumed suite must not meet it running.
            preexec_fn=partial(_child_setup, os.getpid(), None),
        )
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return f"the run's process ran past {limit:.0f} s and was stopped"
    if code == 0:
        return None
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    return (errors or lines or [f"exit code {code}"])[-1].removeprefix("error:").strip()


def find_run(p: SuiteProblem, device: str, gpu: str | None) -> RunRecord | None:
    """The run this attempt made on this GPU (`gpu`, as runs record it: None on the CPU): named
    already, or the problem's first run of its proposer made since the attempt began (run ids
    start with the UTC time, to the second), other than the run a redo or rejudge replaces
    (made within that second, it is not this attempt's). Another GPU's run is none: an attempt
    left running there is taken up afresh here, not finished with this machine's figures."""
    if p.run is not None:
        try:
            run = store.load_run(p.op, p.run)
        except KernelgenError:
            return None
        return run if run.environment.gpu == gpu else None
    if p.started is None or p.proposer is None:
        return None
    made = [
        r
        for r in _runs(p.op, p.proposer, device)
        if r.id[:15] >= p.started and r.id != p.replaces and r.environment.gpu == gpu
    ]
    return made[0] if made else None


def accepted(run: RunRecord, records: list[CandidateRecord]) -> str | None:
    """The candidate a run accepted: its best, else its first accepted (a run not benched)."""
    return run.best or next((r.id for r in records if r.status == "accepted"), None)


def accepted_source(op: str, run_id: str) -> Path | None:
    """The source, as judged, of the candidate run `run_id` accepted; None where there is none."""
    try:
        run = store.load_run(op, run_id)
    except KernelgenError:
        return None
    cand = accepted(run, store.load_candidates(op, run_id))
    return store.candidate_path(op, run_id, cand) if cand is not None else None


def settle(p: SuiteProblem, run: RunRecord) -> None:
    """The problem's status from what its run came to."""
    records = store.load_candidates(run.op, run.id)
    p.run, p.device = run.id, run.settings.device
    judged = [r for r in records if r.status == "rejected"]
    best = accepted(run, records)
    if best is not None:
        p.status, p.candidate = "accepted", best
        p.category, p.reason = None, None
    elif judged:
        last = judged[-1]
        p.status, p.category = "rejected", last.category or "rejected"
        p.reason = f"{len(judged)} judged, none accepted; the last: {last.reason or '?'}"
    else:
        p.status, p.category = "not attempted", None
        p.reason = f"no candidate was judged: {run.stopped or 'the run stopped first'}"


def kernelbench_figures(p: SuiteProblem, device: str) -> None:
    """KernelBench's criteria on the accepted candidate: its stored record where one was made
    on this device for this candidate and its workers ran to the end, else checked now (a
    worker that died may have died with an interrupted suite: a problem settled again is one
    whose attempt was cut short)."""
    from kernelgen.kernelbench.criteria import check_candidate, load_check

    assert p.run is not None and p.candidate is not None
    try:
        check = load_check(p.op, p.run, p.candidate)
        if check is None or check.device != device or _cut_short(check):
            check = check_candidate(p.op, p.run, p.candidate, device)
    except KernelgenError as e:
        p.kb_correct, p.kb_note = None, f"KernelBench's check failed to run: {e}"
        return
    p.kb_correct = check.correct
    p.speedup_vs_eager = check.speedup_vs_eager
    p.speedup_vs_compile = check.speedup_vs_compile
    notes = [check.error, check.correctness_not_run, check.timing_not_run]
    if check.timing is not None and check.timing.errors:
        notes += [f"{k}: {v}" for k, v in check.timing.errors.items()]
    p.kb_note = "; ".join(n for n in notes if n) or None


def _cut_short(check: KbCheck) -> bool:
    """A stored check whose worker died (the trials') or gave no timing where one was due."""
    untimed = check.device == "cuda" and bool(check.correct) and check.timing is None
    return check.error is not None or untimed
