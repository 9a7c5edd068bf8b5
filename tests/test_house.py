"""The repository holds the product, not the traces of how it was made: no file or path numbers
the sittings it was written in, no drafts folder beside the runs (a candidate belongs to its run
under evaluations/), and no one-off GPU call scripts among the measuring ones (scripts/gpu/ says
what each measures). An agent's session and an MCP session are product words and stay, without a
number."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_S = "session"  # spelled apart so the examples below do not match this file's own text

# A numbered sitting ("<s> 11", "<s>18", "<s>s 14 and 15"), one named by its order ("the third
# <s>") or by where it stands ("this <s>", "an earlier <s>"), and a sitting's calls or GPU time.
_ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|[0-9]+(?:st|nd|rd|th)"
LEFTOVER = re.compile(
    rf"\b{_S}s?[ _-]?[0-9]+"
    rf"|\b(?:{_ORDINALS}) {_S}\b"
    rf"|\b(?:this|earlier|previous) {_S}s?\b"
    rf"|\b{_S}'s (?:call|H200)",
    re.IGNORECASE,
)


def leftovers(text: str) -> list[str]:
    return [m.group(0) for m in LEFTOVER.finditer(text)]


def tracked() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout
    return [p for p in out.decode().split("\0") if p]


def _text(path: Path) -> str | None:
    """The file's text; None for a binary file (or one a concurrent move has taken away)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@pytest.mark.parametrize(
    "text",
    [
        f"H200 calls of {_S} 11 (2026-12-03)",
        f"evaluations/logs/h200-20261204-{_S}18/",
        f"({_S}s 14 and 15: F.rms_norm under use())",
        f"calls of the third {_S} of 2026-12-01",
        f"plus this {_S}'s script changes",
        f"what earlier {_S}s of a resumed run spent",
        f"the {_S}'s H200 time ran out",
        f"{_S.capitalize()} 18's H200 call ran this script",
    ],
)
def test_a_numbered_or_placed_sitting_is_found(text: str) -> None:
    assert leftovers(text)


@pytest.mark.parametrize(
    "text",
    [
        f"A long-lived agent {_S} keeps each run's judge between calls",
        f"An agent that speaks MCP gets the same {_S} as tools",
        f"an MCP {_S} over stdio",
        f"============================= test {_S} starts ====",
        f'@pytest.fixture(scope="{_S}")',
        f"from kernelgen.verify.{_S} import Pool",
        f'"model": "kernelgen-{_S} (written by hand, as an agent)"',
        f"The child runs in its own {_S}, out of reach of a kill",
    ],
)
def test_the_product_word_is_left_alone(text: str) -> None:
    assert leftovers(text) == []


def test_no_tracked_path_or_text_speaks_of_how_it_was_made() -> None:
    found = []
    for rel in tracked():
        found += [f"{rel}: path has {hit!r}" for hit in leftovers(rel)]
        text = _text(ROOT / rel)
        if text is None:
            continue
        for hit in leftovers(text):
            line = text[: text.lower().find(hit.lower())].count("\n") + 1
            found.append(f"{rel}:{line}: {hit!r}")
    assert not found, "say a date and what was measured instead:\n" + "\n".join(found)


def test_no_drafts_folder() -> None:
    assert not (ROOT / "drafts").exists(), "drafts/: a candidate belongs to its run (evaluations/)"
    assert not [p for p in tracked() if p.startswith("drafts/")]


def test_no_one_off_gpu_call_scripts() -> None:
    calls = [p for p in tracked() if p.startswith("scripts/") and "h200_call_" in Path(p).name]
    calls += [p.name for p in (ROOT / "scripts").rglob("h200_call_*")]
    assert not calls, f"{calls}: a GPU entry point is named for what it measures (scripts/gpu/)"
