"""Imports, names and attribute names: what a candidate may import, and what a dotted path read
through its imports may be, by the closed lists of allowlist.py. A module root is never enough:
modules re-export other modules, and `typing.sys._getframe(1).f_back` was how candidates reached
the judge's frames."""

from __future__ import annotations

import ast

from kernelgen.verify import allowlist as allow
from kernelgen.verify.rules.paths import Flag


def is_escape(path: str) -> bool:
    return path.startswith(allow.ESCAPE_PREFIXES) or any(
        path == p or path.startswith(p + ".") for p in allow.ESCAPES
    )


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name not in allow.DUNDER_OK


def is_frame(name: str) -> bool:
    return name.startswith(allow.FRAME_PREFIXES) or name in allow.FRAME_NAMES


def import_flags(node: ast.Import | ast.ImportFrom) -> list[Flag]:
    """An import of an unlisted module, or from a listed one of an unlisted name."""
    if isinstance(node, ast.Import):
        return [
            ("forbidden-import", node, f"import {a.name}")
            for a in node.names
            if a.name not in allow.MODULES
        ]
    module = "." * node.level + (node.module or "")
    if module == "__future__":
        return []
    if module not in allow.MODULES:
        return [("forbidden-import", node, f"from {module} import ...")]
    flags: list[Flag] = []
    for a in node.names:
        path = f"{module}.{a.name}"
        if a.name == "*":
            flags.append(("forbidden-import", node, f"from {module} import *"))
        elif path not in allow.MODULES and path not in allow.PATHS:
            flags.append(("forbidden-import", node, f"from {module} import {a.name}"))
    return flags


def path_flag(node: ast.AST, path: str, *, kernel: bool, decorating: set[int]) -> Flag | None:
    """What a dotted path may not be where it is used: `kernel` says inside a @triton.jit
    function, `decorating` holds the ids of the nodes that stand as decorators."""
    decorators = allow.DECORATORS_KERNEL | allow.DECORATORS_CACHE
    if path in decorators and id(node) not in decorating:
        # `triton.jit(softmax)` makes a kernel of code read as launcher code.
        return ("decorator", node, f"`{path}` used other than as a decorator")
    if path in allow.DYNAMIC:
        return ("forbidden-builtin", node, f"`{path}`")
    if is_escape(path):
        return ("escape-hatch", node, f"`{path}`")
    if path.split(".")[0] == "torch":
        if kernel:
            return ("kernel-torch", node, f"`{path}` in a kernel")
        if path not in allow.PATHS:
            return ("launcher-torch", node, f"`{path}` outside a kernel")
        return None
    if path in allow.MODULES:
        return ("import-alias", node, f"module `{path}` used bare")
    if path not in allow.PATHS:
        return ("unlisted-name", node, f"`{path}`")
    if kernel and not path.startswith(allow.KERNEL_ROOTS):
        return ("kernel-name", node, f"`{path}` in a kernel")
    return None


def attr_name_flag(node: ast.AST, attr: str) -> Flag | None:
    """Dunder and frame attributes, by any route."""
    if is_dunder(attr):
        return ("dunder", node, f"attribute `.{attr}`")
    if is_frame(attr):
        return ("frame", node, f"attribute `.{attr}`")
    return None
