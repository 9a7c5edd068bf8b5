"""The tuning convention of a candidate module, read and rewritten through its AST.

    TUNE_SPACE = {"BLOCK_SIZE": [...], "num_warps": [...]}   # what the tuner may try
    DEFAULT_CONFIG = {...}                                    # used when TUNED is empty
    TUNED = {"4096x4096": {...}, ...}                         # per shape bucket, written here

Bucket keys are the spec's bucket dims rounded up to powers of two, joined by 'x'; the candidate
picks the nearest key at run time.
"""

from __future__ import annotations

import ast
import itertools
import pprint
from typing import Any

from kernelgen import syntax

Config = dict[str, int]


def assignment(tree: ast.Module, name: str) -> ast.Assign | ast.AnnAssign | None:
    """The top-level statement that binds `name` (a bare annotation binds nothing)."""
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.value is None:
            continue
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node  # type: ignore[return-value]
    return None


def _literal(source: str, name: str) -> Any:
    node = assignment(syntax.parse(source), name)
    if node is None or node.value is None:
        return None
    try:
        return ast.literal_eval(node.value)
    except ValueError:
        return None


def space(source: str) -> dict[str, list[int]] | None:
    """TUNE_SPACE when the module declares a usable one (a dict of non-empty lists)."""
    value = _literal(source, "TUNE_SPACE")
    if not isinstance(value, dict) or not value:
        return None
    if not all(isinstance(v, list) and v for v in value.values()):
        return None
    return value


def default_config(source: str) -> Config | None:
    value = _literal(source, "DEFAULT_CONFIG")
    return value if isinstance(value, dict) else None


def configs(tune_space: dict[str, list[int]]) -> list[Config]:
    keys = list(tune_space)
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*tune_space.values())
    ]


def with_tuned(source: str, table: dict[str, Config]) -> str:
    """The source with its TUNED assignment replaced by `table` (the rest byte for byte)."""
    node = assignment(syntax.parse(source), "TUNED")
    if node is None:
        raise ValueError("the module has no TUNED assignment to rewrite")
    lines = source.splitlines(keepends=True)
    start, end = node.lineno - 1, node.end_lineno or node.lineno
    body = pprint.pformat(table, width=96, sort_dicts=True)
    text = f"TUNED: dict[str, dict[str, int]] = {body}\n"
    return "".join(lines[:start]) + text + "".join(lines[end:])
