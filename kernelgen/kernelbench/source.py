"""A KernelBench problem file as text: where it sits (level, number, title), the operator it
becomes, and the module-level size constants its shapes can be scaled by."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelgen.errors import SpecError
from kernelgen.kernelbench.runtime import assigned, sha256

_FILE = re.compile(r"^(\d+)_(\w+)\.py$")
_LEVEL = re.compile(r"^level(\d+)$")


class Refused(SpecError):
    """A problem the import cannot take; the message names the file and what it cannot take."""

    def __init__(self, path: Path | str, what: str):
        super().__init__(f"{path}: cannot import: {what}")
        self.path = str(path)
        self.what = what


@dataclass(frozen=True)
class ProblemFile:
    path: Path
    source: str
    level: int
    problem: int
    title: str

    @property
    def op(self) -> str:
        return f"kb{self.level}_{self.problem}_{snake(self.title)}"

    @property
    def sha256(self) -> str:
        return sha256(self.source)


def snake(title: str) -> str:
    """`Gemm_Multiply_LeakyReLU` -> `gemm_multiply_leakyrelu`: lower case, one underscore
    between words, none at the ends (KernelBench's titles mix cases and doubled underscores)."""
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]", "_", title.lower())).strip("_")


def read(path: Path) -> ProblemFile:
    """The problem at `path`, named by its file (`23_Softmax.py`) and folder (`level1`)."""
    m = _FILE.match(path.name)
    if m is None:
        raise Refused(path, "not a problem file: expected a name like 23_Softmax.py")
    level = _LEVEL.match(path.parent.name)
    if level is None:
        raise Refused(path, "cannot tell its level: expected it in a folder named levelN")
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise Refused(path, f"unreadable: {e}") from None
    return ProblemFile(
        path=path,
        source=source,
        level=int(level.group(1)),
        problem=int(m.group(1)),
        title=m.group(2),
    )


def _literal(node: ast.expr) -> bool:
    """A value written with numbers alone (`8192 * 2`, `(128, 256)`): it is free to change. One
    that names another constant (`(num_classes,)`) follows that constant instead."""
    return all(
        isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.operator, ast.unaryop))
        or isinstance(n, ast.expr_context)
        for n in ast.walk(node)
    )


def _literals(node: ast.stmt) -> dict[str, ast.expr]:
    """Each name a module-level statement assigns, with the expression it gets, where that is
    plain: `a = 1`, `h = w = 128`, `d, h, w = 16, 64, 64`."""
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return {node.target.id: node.value} if isinstance(node.target, ast.Name) else {}
    if not isinstance(node, ast.Assign):
        return {}
    out: dict[str, ast.expr] = {}
    for target in node.targets:
        if isinstance(target, ast.Name):
            out[target.id] = node.value
        elif (
            isinstance(target, ast.Tuple)
            and isinstance(node.value, ast.Tuple)
            and len(target.elts) == len(node.value.elts)
        ):
            for t, v in zip(target.elts, node.value.elts, strict=True):
                if isinstance(t, ast.Name):
                    out[t.id] = v
    return out


def constants(source: str, namespace: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    """The size constants: module-level ints, and ints of tuples, written as literals and
    assigned once. dim -> (the module-level name, the index in its tuple); a tuple's element `i`
    is the dim `name_i`."""
    tree = ast.parse(source)
    counts: dict[str, int] = {}
    for node in tree.body:
        for name in assigned(node):
            counts[name] = counts.get(name, 0) + 1
    found: dict[str, tuple[str, int | None]] = {}
    for node in tree.body:
        for name, expr in _literals(node).items():
            if counts.get(name) != 1 or not _literal(expr):
                continue
            value = namespace.get(name)
            if _is_int(value):
                found[name] = (name, None)
            elif isinstance(value, tuple) and value and all(_is_int(v) for v in value):
                for i in range(len(value)):
                    found[f"{name}_{i}"] = (name, i)
    return found


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def dims_of(namespace: dict[str, Any], found: dict[str, tuple[str, int | None]]) -> dict:
    """The constants' values in a namespace, as a size's dims."""
    out = {}
    for dim, (name, index) in found.items():
        value = namespace[name]
        out[dim] = int(value if index is None else value[index])
    return out


def bare_draws(source: str) -> dict[int, bool]:
    """Which of get_inputs()'s returned inputs are a plain `torch.rand(...)` / `torch.randn(...)`
    (directly, or through a local assigned once): i.i.d. values any distribution may replace.
    Anything else (a randint, a triu, a softmax of a draw) carries an invariant of the problem's."""
    tree = ast.parse(source)
    fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None
    )
    if fn is None:
        return {}
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, (ast.List, ast.Tuple)):
        return {}
    writes: dict[str, list[ast.AST]] = {}
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
            targets = n.targets if isinstance(n, ast.Assign) else [getattr(n, "target", None)]
            for t in targets:
                for leaf in ast.walk(t) if t is not None else []:
                    if isinstance(leaf, ast.Name):
                        writes.setdefault(leaf.id, []).append(n)
    out = {}
    for i, elt in enumerate(returns[0].value.elts):
        expr: ast.AST = elt
        if isinstance(elt, ast.Name):
            assigned = writes.get(elt.id, [])
            ok = len(assigned) == 1 and isinstance(assigned[0], ast.Assign)
            expr = assigned[0].value if ok else elt  # type: ignore[union-attr]
        out[i] = _is_draw(expr)
    return out


def _is_draw(expr: ast.AST) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    f = expr.func
    return (
        isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.value.id == "torch"
        and f.attr in ("rand", "randn")
        and all(k.arg in ("dtype", "device") for k in expr.keywords)
    )
