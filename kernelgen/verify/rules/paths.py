"""Reading a candidate's AST: what an expression names through the module's imports, what a node
binds, and a short quote of a node for a violation's text."""

from __future__ import annotations

import ast

# A violation as found: the rule's name, the node it was found at, and what was found there.
Flag = tuple[str, ast.AST, str]


def resolve(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The dotted path of `name.attr.attr` rooted at an imported name, else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def decorator_path(node: ast.expr, aliases: dict[str, str]) -> str | None:
    return resolve(node.func if isinstance(node, ast.Call) else node, aliases)


def root(node: ast.expr) -> str | None:
    """The name at the bottom of `a.b[c].d`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def params(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def bound(root: ast.AST) -> set[str]:
    """Every name that `root` binds anywhere: parameters, targets, defs, imports, patterns."""
    names: set[str] = set()
    for n in ast.walk(root):
        if isinstance(n, ast.arg):
            names.add(n.arg)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, (ast.MatchAs, ast.MatchStar, ast.ExceptHandler)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
    return names


def own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of functions nested in it."""
    out, todo = [], list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        out.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(n))
    return out


def short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
