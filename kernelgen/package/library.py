"""Building the new library beside the old one and swapping them: an interruption at any point
leaves the old library or the new one in place, never a mix (a swap cut between its two renames
is undone by the next promotion)."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from kernelgen.package.manifest import PromoteError
from kernelgen.package.sources import parse

# Carried over unchanged by every promotion; kept in git.
HAND_WRITTEN = (
    "_runtime.py",
    "_launch.py",
    "_plans.py",
    "_calls.py",
    "_contracts.py",
    "_routing.py",
)
_IMPORT_CHECK_TIMEOUT_S = 300
# What `import kernelgen_ops` must never pull in: the library needs torch and triton only.
PIPELINE_MODULES = ("kernelgen", "openai", "pydantic", "typer", "rich")


def check_hand_written(library: Path, op: str, contract: bool = True) -> None:
    """The hand-written files are there, and _contracts.py knows the operator (`contract`: an
    imported problem has none; package/imported.py)."""
    missing = [name for name in HAND_WRITTEN if not (library / name).is_file()]
    if missing:
        raise PromoteError(f"{library}: missing {', '.join(missing)} (hand-written, kept in git)")
    if not contract:
        return
    tree = parse((library / "_contracts.py").read_text(), str(library / "_contracts.py"))
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    needed = (f"check_{op}", f"fake_{op}", f"dims_{op}", f"torch_{op}")
    lacking = [f for f in needed if f not in defined]
    if lacking:
        raise PromoteError(
            f"{library / '_contracts.py'}: no {' or '.join(lacking)}: write what {op} accepts, "
            "its fake output, its bucket dims and torch's own op before promoting it"
        )


def validate(folder: Path) -> None:
    """Every file parses; the package imports in a fresh process without pipeline modules."""
    for path in sorted(folder.rglob("*.py")):
        try:
            compile(path.read_text(), str(path), "exec")
        except SyntaxError as e:
            raise PromoteError(f"{path.name}: line {e.lineno}: {e.msg}") from None
    for path in sorted(folder.rglob("*.json")):
        try:
            json.loads(path.read_text())
        except ValueError as e:
            raise PromoteError(f"{path.name}: {e}") from None


_IMPORT_CHECK = """
import importlib.util, sys
root = sys.argv[1]
spec = importlib.util.spec_from_file_location(
    "kernelgen_ops", root + "/__init__.py", submodule_search_locations=[root])
mod = importlib.util.module_from_spec(spec)
sys.modules["kernelgen_ops"] = mod
spec.loader.exec_module(mod)
missing = [op for op in mod.available() if not callable(getattr(mod, op, None))]
if missing:
    sys.exit(f"operators in MANIFEST.json but not exposed: {missing}")
if mod._runtime.manifest().get("kernelbench"):
    import kernelgen_ops.kernelbench as kb
    missing = [op for op in kb.available() if not callable(getattr(kb, op, None))]
    if missing:
        sys.exit(f"imported problems in MANIFEST.json but not exposed: {missing}")
leaked = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[2:]))
if leaked:
    sys.exit(f"importing the library imports {leaked}")
"""


def import_check(folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_CHECK, str(folder), *PIPELINE_MODULES],
            capture_output=True,
            text=True,
            timeout=_IMPORT_CHECK_TIMEOUT_S,
            env=env,
            cwd=folder.parent,
        )
    except subprocess.TimeoutExpired:
        raise PromoteError(
            f"importing the new library took over {_IMPORT_CHECK_TIMEOUT_S}s"
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise PromoteError(f"the new library does not import: {last}")


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One promotion at a time per generated/ folder (a lock on the folder itself)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no concurrent promotions expected there
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def recover(library: Path) -> None:
    """Finish or undo what an interrupted promotion left beside `library`."""
    parent, name = library.parent, library.name
    for stale in parent.glob(f".{name}.new-*"):
        shutil.rmtree(stale, ignore_errors=True)
    olds = sorted(parent.glob(f".{name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not library.exists():
        # Cut between the swap's two renames: the old library is complete; put it back.
        os.rename(olds.pop(), library)
    for old in olds:
        shutil.rmtree(old, ignore_errors=True)


def new_folder(library: Path) -> Path:
    """Where the next library is built, beside `library` (recover() clears what is left)."""
    return library.with_name(f".{library.name}.new-{secrets.token_hex(4)}")


def swap(new: Path, library: Path) -> None:
    old = library.with_name(f".{library.name}.old-{secrets.token_hex(4)}")
    os.rename(library, old)
    try:
        os.rename(new, library)
    except BaseException:
        os.rename(old, library)
        raise
    shutil.rmtree(old, ignore_errors=True)
