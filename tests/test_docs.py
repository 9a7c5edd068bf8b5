"""README.md and docs/: README stays short and gives CI's exact command; every relative link (and
its #anchor) resolves; the project speaks of itself, not of how it was made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def _prose(text: str) -> str:
    """The page without code blocks and code spans, where `[i](x)` is code, not a link."""
    return _CODE.sub("", _FENCE.sub("", text))


def links(page: Path) -> list[str]:
    return _LINK.findall(_prose(page.read_text()))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text())
    return {slug(h) for h in _HEADING.findall(text)} | set(_ANCHOR.findall(text))


def test_readme_is_at_most_200_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_gives_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == "bash scripts/setup.sh --dev && .venv/bin/python -m pytest -q -n 2"
    assert ci in README.read_text().splitlines()


def test_readme_links_every_page_of_docs() -> None:
    linked = {(README.parent / t.split("#")[0]).resolve() for t in links(README)}
    assert {p.resolve() for p in DOCS} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading or anchor {anchor!r} in {dest.name}")
    assert broken == [], f"{page.relative_to(ROOT)}: broken links: {broken}"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text(
        "[ok](there.md#a-heading) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n"
        "[missing](nowhere.md) [bad anchor](there.md#nope)\n"
    )
    assert links(page) == ["there.md#a-heading", "nowhere.md", "there.md#nope"]
    assert anchors(tmp_path / "there.md") == {"a-heading"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_speaks_of_how_the_project_was_made(page: Path) -> None:
    found = re.findall(r"\bsessions? \d+", page.read_text(), re.I)
    assert found == [], f"{page.relative_to(ROOT)}: {found}"


def test_operators_guide_names_the_fields_a_newcomer_missed() -> None:
    text = (ROOT / "docs" / "operators.md").read_text()
    for field in ("kind", "draw", "offset", "layout_varies", "interpreter", "reduction", "bucket"):
        assert re.search(rf"`\{{?\"?{field}\b", text), f"docs/operators.md does not name {field}"
    assert '"kind": "scalar"' in text
