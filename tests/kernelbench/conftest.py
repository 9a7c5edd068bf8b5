"""A project of its own per test, holding KernelBench problems in its format written here: the
softmax of problems/ at its size (64 x 3000: past the interpreter, GPU-only for KernelBench's
check on CPU), and a tiny one (8 x 100) whose own size the interpreter runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def tiny_softmax() -> str:
    """The test softmax at 8 x 100."""
    text = (HERE / "problems" / "level1" / "1_Softmax.py").read_text()
    return text.replace("batch_size = 64", "batch_size = 8").replace(
        "features = 3000", "features = 100"
    )


@pytest.fixture()
def kb_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty project (references/, seeds/) with a checkout folder `kb/level1/` holding the
    tiny softmax as problem 1 and the test's square matmul (no candidates: never attempted) as
    problem 2."""
    root = tmp_path / "project"
    (root / "references").mkdir(parents=True)
    (root / "seeds").mkdir()
    level = tmp_path / "kb" / "level1"
    level.mkdir(parents=True)
    (level / "1_Softmax.py").write_text(tiny_softmax())
    matmul = (HERE / "problems" / "level1" / "2_Square_matmul.py").read_text()
    (level / "2_Square_matmul.py").write_text(matmul)
    monkeypatch.setenv("KERNELGEN_ROOT", str(root))
    monkeypatch.chdir(root)
    yield root
