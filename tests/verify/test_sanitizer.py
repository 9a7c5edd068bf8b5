"""compute-sanitizer before promotion, with a stand-in sanitizer on CPU: a clean run lists both
tools, a memcheck find is `memcheck`, a racecheck find is `race`, each naming what it saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen.verify import Evaluator

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).parent / "fakes" / "compute-sanitizer"


@pytest.fixture(autouse=True)
def _fake_sanitizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KERNELGEN_COMPUTE_SANITIZER", str(FAKE))


@pytest.mark.parametrize(
    ("finds", "category", "words"),
    [("none", None, None), ("memcheck", "memcheck", "Invalid"), ("racecheck", "race", "Race")],
)
def test_sanitizer_verdicts(
    monkeypatch: pytest.MonkeyPatch, finds: str, category: str | None, words: str | None
) -> None:
    monkeypatch.setenv("FAKE_FINDS", finds)
    with Evaluator("silu_and_mul", "cpu", seed=4, warm=0) as ev:
        # Two small cases keep it quick; the stand-in runs the real runner underneath.
        ev.cases = lambda: [c for c in ev.spec.cases if c.interpreter][:2]  # type: ignore[method-assign]
        failure, tools = ev.sanitize_only(ROOT / "seeds" / "silu_and_mul.py")
    if category is None:
        assert failure is None and tools == ["memcheck", "racecheck"]
    else:
        assert failure is not None and failure.category == category
        assert words in failure.reason and tools == []
