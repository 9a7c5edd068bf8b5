"""The `files` proposer: a folder's *.py in name order, or one .py file; anything else refused
in one line naming what was given."""

from pathlib import Path

import pytest

from kernelgen.errors import UsageError
from kernelgen.propose.files import FilesProposer


def _names(proposer: FilesProposer) -> list[str]:
    return [p.name for p in proposer.propose(None, 10)]  # type: ignore[arg-type]


def test_a_folder_in_name_order_or_one_file(tmp_path: Path) -> None:
    for name in ("b.py", "a.py", "notes.txt"):
        (tmp_path / name).write_text(f"# {name}\n")
    assert _names(FilesProposer(tmp_path)) == ["a.py", "b.py"]
    assert _names(FilesProposer(tmp_path, skip=1)) == ["b.py"]  # a resumed run's
    one = FilesProposer(tmp_path / "b.py")
    assert [p.source for p in one.propose(None, 10)] == ["# b.py\n"]  # type: ignore[arg-type]
    assert one.propose(None, 10) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("given", ["missing", "notes.txt", "empty"])
def test_anything_else_is_refused_naming_it(tmp_path: Path, given: str) -> None:
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "empty").mkdir()
    why = "no \\*.py files there" if given == "empty" else "not a folder nor a .py file"
    with pytest.raises(UsageError, match=f"--from {tmp_path / given}: {why}"):
        FilesProposer(tmp_path / given)
