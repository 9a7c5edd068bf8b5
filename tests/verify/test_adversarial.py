"""Candidates that break or cheat past the static rules: the verifier rejects each with the right
category and never crashes or hangs itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelgen.verify import verify_candidate

ROOT = Path(__file__).resolve().parents[2]
ADVERSARIAL = Path(__file__).parent / "candidates" / "adversarial"

CASES = {
    "oob_write.py": {"crash", "incorrect"},  # heap corruption under the interpreter
    "hang.py": {"timeout"},
    "huge_alloc.py": {"oom", "crash"},
    "cached_output.py": {"aliasing", "stale", "static"},  # module state under another name
    "input_mutation.py": {"mutation"},
    "partial_write.py": {"incorrect"},
    "exit_early.py": {"crash"},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_with_category(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    v = verify_candidate("softmax", ADVERSARIAL / name, device="cpu", seed=7, timeout_s=30)
    assert not v.accepted
    assert v.category in CASES[name], f"{v.category}: {v.reason}"
