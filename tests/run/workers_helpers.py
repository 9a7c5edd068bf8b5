"""What the worker-pool tests share: a throwaway project whose silu_and_mul has two small cases
(the interpreter judges one in seconds), a folder of candidates, and a run's verdicts."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kernelgen.run.optimize import OptimizeOptions

ROOT = Path(__file__).resolve().parents[2]
OP = "silu_and_mul"
SMALL_SPEC = """SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "2*d"]}],
    "dtypes": ["float32"],
    "dists": ["normal", "wide"],
    "bucket": ["rows", "d"],
    "sizes": [
        {"name": "one_row", "dims": {"rows": 1, "d": 781}, "interpreter": True},
        {"name": "odd", "dims": {"rows": 5, "d": 183}, "interpreter": True},
    ],
    "bench": [{"name": "64x1024", "dims": {"rows": 64, "d": 1024}}],
}
"""
MATH = "y = a / (1.0 + tl.exp(-a)) * b"


def make_project(folder: Path) -> Path:
    for sub in ("references", "seeds"):
        shutil.copytree(ROOT / sub, folder / sub)
    (folder / "pyproject.toml").write_text("[tool.kernelgen]\n")
    ref = folder / "references" / f"{OP}.py"
    text = ref.read_text()
    ref.write_text(text[: text.index("SPEC = {")] + SMALL_SPEC)
    return folder


def make_candidates(folder: Path) -> Path:
    """Two accepted, one wrong, one torch fallback (static), one repeat of the first."""
    seed = (ROOT / "seeds" / f"{OP}.py").read_text()
    assert MATH in seed
    out = folder / "candidates"
    out.mkdir()
    (out / "a_good.py").write_text(seed)
    (out / "b_wrong.py").write_text(seed.replace(MATH, MATH + " + 0.5"))
    (out / "c_cheat.py").write_text(
        seed.replace(
            "    return y.view(*x.shape[:-1], d)",
            "    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]",
        )
    )
    (out / "d_good2.py").write_text(seed.replace(MATH, "y = (a / (1.0 + tl.exp(-a))) * b"))
    (out / "e_again.py").write_text(seed)
    return out


def verdicts(project: Path, run_id: str) -> dict[str, tuple]:
    """Each candidate's verdict as the records hold it, timings and workers aside."""
    found = {}
    for path in (project / "evaluations" / OP / run_id / "candidates").glob("*/record.json"):
        r = json.loads(path.read_text())
        v = r["verdict"] or {}
        cases = tuple((c["name"], c["status"]) for c in v.get("cases", []))
        found[r["id"]] = (
            r["status"],
            r["category"],
            r["parent"],
            r["sha256"],
            v.get("outcome"),
            v.get("duplicate_of") is not None,
            cases,
        )
    return found


def options(folder: Path, **more: object) -> OptimizeOptions:
    """A files run of one round that takes every candidate of `folder`."""
    return OptimizeOptions(
        proposer="files",
        source=str(folder),
        rounds=1,
        candidates=5,
        repairs=0,
        device="cpu",
        **more,
    )


class Watch:
    """An observer that remembers the run."""

    def __init__(self) -> None:
        self.run = None

    def event(self, message: str) -> None:
        pass

    def candidate(self, record: object, run: object) -> None:
        self.run = run


def record(project: Path, run_id: str, cid: str) -> dict:
    path = project / "evaluations" / OP / run_id / "candidates" / cid / "record.json"
    return json.loads(path.read_text())


class Killer(threading.Thread):
    """Kills the worker judging `target` once it has been at it for `after_s`, and notes the
    candidate's record as it stood right after the kill."""

    def __init__(
        self,
        pool_of: Callable[[], object],
        target: str,
        kill: Callable[[object], None],
        after_s: float = 2.0,
        timeout_s: float = 240.0,
    ):
        super().__init__(daemon=True)
        self.pool_of, self.target, self.kill, self.after_s = pool_of, target, kill, after_s
        self.timeout_s = timeout_s
        self.killed: str | None = None
        self.record_after: dict | None = None
        self.run_dir: Callable[[], Path | None] = lambda: None

    def run(self) -> None:
        end = time.monotonic() + self.timeout_s
        while time.monotonic() < end:
            pool = self.pool_of()
            for name, (job, seconds) in pool.busy().items():  # type: ignore[attr-defined]
                if job.kind == "judge" and job.candidate == self.target and seconds > self.after_s:
                    self.kill(pool.worker(name))  # type: ignore[attr-defined]
                    self.killed = name
                    folder = self.run_dir()
                    if folder is not None:
                        rec = folder / "candidates" / self.target / "record.json"
                        self.record_after = json.loads(rec.read_text())
                    return
            time.sleep(0.1)


def kill_process(worker: object) -> None:
    os.kill(worker.pid, signal.SIGKILL)  # type: ignore[attr-defined]


def optimize_killing_one(
    project: Path, opts: OptimizeOptions, pool: object, kill: Callable[[object], None]
) -> tuple[object, Killer]:
    """An optimize run over `pool` during which the worker judging r01-c01 is killed: the run's
    summary and the killer. Checks what every such run must show: the kill happened while the
    candidate was pending, that worker is the only death, and its candidate was put back."""
    from kernelgen.run.optimize import optimize_op

    watch = Watch()
    killer = Killer(lambda: pool, "r01-c01", kill)
    killer.run_dir = lambda: (
        project / "evaluations" / OP / watch.run.id if watch.run is not None else None
    )
    killer.start()
    try:
        summary = optimize_op(OP, opts, watch, pool=pool)
    finally:
        pool.close()  # type: ignore[attr-defined]
    killer.join(1)
    assert killer.killed is not None, "never caught r01-c01 while a worker judged it"
    assert killer.record_after is not None and killer.record_after["status"] == "pending"
    assert pool.deaths == [killer.killed] and pool.requeued == ["r01-c01"]  # type: ignore[attr-defined]
    return summary, killer
