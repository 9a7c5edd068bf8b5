"""How the adversarial suite's tests judge a candidate: through one judge per operator while the
file's tests run (as a run judges its candidates), or cold, and with each verdict logged.

- KERNELGEN_VERDICT_LOG=FILE appends every verdict as it comes (file, operator, outcome, category,
  reason, wall seconds): a suite cut short by its time limit on the H200 still says why each of
  its tests failed, and how long each verdict took.
- KERNELGEN_COLD_VERDICTS=1 judges each candidate as a new user's first `kernelgen verify` does: a
  fresh judge over an empty Triton cache (and compile-ahead index). A new candidate of an agent
  or an LLM is always cold; issue [V2] asks for 60 s or less on the H200.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelgen.records import Verdict
from kernelgen.verify import Evaluator, verify_candidate

COLD = os.environ.get("KERNELGEN_COLD_VERDICTS") == "1"


class Judges:
    """One judge per (operator, device, seed), one operator's at a time: a CUDA judge holds its
    cases' inputs on the GPU, warm runners and a dozen compile runners, and with four suites
    side by side on the H200 a judge per operator each ran out of memory (2026-12-03)."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, str, int], Evaluator] = {}

    def get(self, op: str, device: str, seed: int) -> Evaluator:
        key = (op, device, seed)
        if key not in self._open:
            self.close()
            self._open[key] = Evaluator(op, device, seed=seed)
        return self._open[key]

    def close(self) -> None:
        for ev in self._open.values():
            ev.close()
        self._open.clear()


def judges_fixture():
    """A module-scoped fixture of Judges, closed when the module's tests are done."""

    @pytest.fixture(scope="module")
    def judges():
        js = Judges()
        yield js
        js.close()

    return judges


def judge(
    op: str, path: Path, device: str, seed: int, judges: Judges | None = None, **kw
) -> Verdict:
    """The verdict on one candidate: by the shared judge of `judges` (warm), or cold."""
    start = time.monotonic()
    if COLD:
        with tempfile.TemporaryDirectory(prefix="kernelgen-cold-") as cache, _cache(cache):
            v = verify_candidate(op, path, device=device, seed=seed, **kw)
    elif judges is not None:
        v = verify_candidate(op, path, device=device, evaluator=judges.get(op, device, seed), **kw)
    else:
        v = verify_candidate(op, path, device=device, seed=seed, **kw)
    _log(op, path, device, v, time.monotonic() - start)
    return v


@contextlib.contextmanager
def _cache(folder: str) -> Iterator[None]:
    """Triton's cache (the runners' and the judge's own) in `folder` for the block."""
    names = ("KERNELGEN_TRITON_CACHE", "TRITON_CACHE_DIR")
    before = {n: os.environ.get(n) for n in names}
    os.environ.update(dict.fromkeys(names, folder))
    try:
        yield
    finally:
        for n, value in before.items():
            if value is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = value


def _log(op: str, path: Path, device: str, v: Verdict, wall: float) -> None:
    log = os.environ.get("KERNELGEN_VERDICT_LOG")
    if not log:
        return
    line = {"file": path.name, "op": op, "device": device, "outcome": v.outcome,
            "category": v.category, "reason": v.reason, "cold": COLD,
            "wall_s": round(wall, 1),
            "phases": v.phases.model_dump() if v.phases else None}  # fmt: skip
    with open(log, "a") as f:
        f.write(json.dumps(line) + "\n")
