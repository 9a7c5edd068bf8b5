"""One operator's library module: the promoted source under its header, its config tables
loaded from configs/<op>.json, and a last line that makes its kernels launch lean."""

from __future__ import annotations

import ast
from typing import Any

from kernelgen import tuning
from kernelgen.package.header import render_header
from kernelgen.package.manifest import BestPeer, PromoteError, Provenance
from kernelgen.package.sources import literal_dict, parse


def _names(tree: ast.Module) -> set[str]:
    """Every identifier the module binds or reads."""
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.arg):
            names.add(n.arg)
    return names


# The module's last line: its launched kernels go through _launch.LeanKernel, which calls a
# specialization's compiled kernel directly once Triton's own path has launched it (host time per
# call is what decides decode shapes). The launcher's source is unchanged; the kernels are the
# same objects underneath.
LEAN_LAUNCHES = (
    "\n\n# Added by `kernelgen promote`: lean launches (kernelgen_ops/_launch.py).\n"
    "_runtime.lean_launches(globals())\n"
)


def rewrite_module(
    op: str,
    source: str,
    provenance: Provenance,
    dispatch: dict[str, dict[str, Any]] | None = None,
    best: BestPeer | None = None,
    public: str | None = None,
) -> str:
    """The library module: header, then the source with its config tables loaded at run time.
    `public`: the name the library calls it by, where not kernelgen_ops.<op>."""
    where = provenance.source
    tree = parse(source, where)
    if "_runtime" in _names(tree):
        raise PromoteError(f"{where}: uses the name _runtime, which the library module needs")
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    edits: list[tuple[int, int, str]] = []  # (first line, last line, text), 1-based inclusive
    loads = {
        "TUNED": f'TUNED = _runtime.tuned("{op}")  # per device: configs/{op}.json\n',
        "DEFAULT_CONFIG": f'DEFAULT_CONFIG = _runtime.default_config("{op}")  # configs/{op}.json'
        + "\n",
    }
    for name, text in loads.items():
        node = tuning.assignment(tree, name)
        if node is None or literal_dict(node, name, where) is None:
            continue
        assert node.end_lineno is not None
        shared = [
            n
            for n in tree.body
            if n is not node
            and n.lineno <= node.end_lineno
            and (n.end_lineno or n.lineno) >= node.lineno
        ]
        if shared:
            raise PromoteError(f"{where}: line {node.lineno}: put {name} on lines of its own")
        edits.append((node.lineno, node.end_lineno, text))
    # `_runtime` after the imports that come before the first config load (or after the
    # docstring); both the loads and the last line need it.
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    first_edit = min((e[0] for e in edits), default=len(lines) + 1)
    before = [n for n in imports if (n.end_lineno or n.lineno) < first_edit]
    if before:
        at = max(n.end_lineno or n.lineno for n in before) + 1
    else:
        doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
        at = (doc.end_lineno or 0) + 1 if doc else 1
    edits.append((at, at - 1, "\nfrom . import _runtime\n"))  # an insertion: no line replaced
    for first, last, text in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[first - 1 : last] = [text]
    return render_header(provenance, dispatch, best, public) + "".join(lines) + LEAN_LAUNCHES
