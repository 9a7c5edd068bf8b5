"""The entry launches a kernel: the operator's function must reach a launch `K[grid](...)` of a
module-level @triton.jit kernel, directly or through module-level helpers."""

from __future__ import annotations

import ast

from kernelgen.verify.rules.paths import Flag


def entry_flag(
    tree: ast.Module,
    entry: str,
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    kernels: set[str],
) -> Flag | None:
    root = functions.get(entry)
    if root is None:
        return ("no-entry", tree, f"no top-level `def {entry}`")
    seen, todo = {entry}, [root]
    while todo:
        for node in ast.walk(todo.pop()):
            if _is_launch(node, kernels):
                return None
            if (
                isinstance(node, ast.Name)
                and node.id in functions
                and node.id not in seen | kernels
            ):
                seen.add(node.id)
                todo.append(functions[node.id])
    return ("no-kernel-launch", root, f"`{entry}` reaches no `K[grid](...)`")


def _is_launch(node: ast.AST, kernels: set[str]) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
        return False
    kernel = node.func.value
    return isinstance(kernel, ast.Name) and kernel.id in kernels
