"""What promotion reads of a source: the reference's public signature, a candidate's entry point
and its literal config tables."""

from __future__ import annotations

import ast

from kernelgen import paths, syntax, tuning
from kernelgen.package.manifest import Param, PromoteError


def parse(source: str, where: str) -> ast.Module:
    try:
        return syntax.parse(source)
    except SyntaxError as e:
        raise PromoteError(f"{where}: line {e.lineno}: {e.msg}") from None


def _entry(tree: ast.Module, op: str, where: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == op:
            return node
    raise PromoteError(f"{where}: no top-level function {op}()")


def reference_api(op: str) -> tuple[list[Param], str, str]:
    """The public signature (params, return annotation) and summary from references/<op>.py."""
    path = paths.references_dir() / f"{op}.py"
    if not path.is_file():
        raise PromoteError(f"{path}: missing; the library exposes the reference's signature")
    tree = parse(path.read_text(), str(path))
    fn = _entry(tree, op, str(path))
    a = fn.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg:
        raise PromoteError(f"{path}: {op}() must take plain positional-or-keyword parameters")
    defaults: list[ast.expr | None] = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
    params = []
    for arg, default in zip(a.args, defaults, strict=True):
        if arg.annotation is None:
            raise PromoteError(f"{path}: parameter {arg.arg!r} of {op}() needs a type annotation")
        params.append(
            Param(
                name=arg.arg,
                annotation=ast.unparse(arg.annotation),
                default=None if default is None else ast.unparse(default),
            )
        )
    if fn.returns is None:
        raise PromoteError(f"{path}: {op}() needs a return annotation")
    return params, ast.unparse(fn.returns), _summary(tree, op)


def reference_summary(op: str) -> str:
    """The reference's docstring, its first paragraph on one line: what a listing says of the
    operator, with or without the annotations promotion needs (an imported KernelBench problem's
    reference has none)."""
    path = paths.references_dir() / f"{op}.py"
    return _summary(parse(path.read_text(), str(path)), op)


def _summary(tree: ast.Module, op: str) -> str:
    return " ".join((ast.get_docstring(tree) or op).strip().split("\n\n")[0].split())


def check_signature(tree: ast.Module, op: str, params: list[Param], where: str) -> None:
    got = [a.arg for a in _entry(tree, op, where).args.args]
    want = [p.name for p in params]
    if got != want:
        raise PromoteError(f"{where}: {op}({', '.join(got)}) differs from the reference {want}")


def literal_dict(node: ast.Assign | ast.AnnAssign, name: str, where: str) -> dict | None:
    """The dict a top-level assignment binds, or None when it is computed, not a literal."""
    if isinstance(node, ast.Assign) and len(node.targets) != 1:
        raise PromoteError(f"{where}: line {node.lineno}: assign {name} on its own")
    try:
        value = ast.literal_eval(node.value)  # type: ignore[arg-type]
    except ValueError:
        return None
    if not isinstance(value, dict):
        raise PromoteError(f"{where}: line {node.lineno}: {name} must be a dict")
    return value


def tuning_tables(source: str, where: str = "candidate") -> tuple[dict, dict]:
    """(DEFAULT_CONFIG, TUNED) as the candidate source writes them; {} where it has none."""
    tree = parse(source, where)
    out = []
    for name in ("DEFAULT_CONFIG", "TUNED"):
        node = tuning.assignment(tree, name)
        out.append((literal_dict(node, name, where) if node else None) or {})
    return out[0], out[1]
