"""The package's shape, read from its imports: no two modules import each other (directly or round
a circle; a lazy import counts, since it is a dependency all the same), the layers point down
(cli -> agent -> run -> propose/package/report/kernelbench -> bench/verify -> spec -> records,
store, paths), and no module is too long to read in one sitting."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kernelgen"
MAX_LINES = 600
# The folders of kernelgen/ by layer: a module may import its own layer and those below.
# Top-level modules (records, store, paths, errors, syntax, tuning, env, config) are the floor.
LAYERS = {"cli": 6, "agent": 5, "run": 4, "report": 3, "package": 3, "propose": 3,
          "kernelbench": 3, "bench": 2, "verify": 2, "spec": 1}  # fmt: skip


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in its body."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_pkg else name.split(".")[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join(here + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for target in targets:
                while target and target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in mods and target != name:
                    found.add(target)
                    break
        graph[name] = found
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def upward(graph: dict[str, set[str]]) -> Iterable[str]:
    for name, deps in sorted(graph.items()):
        if name == "kernelgen.__main__":  # the entry point: above everything
            continue
        for dep in sorted(deps):
            if layer(dep) > layer(name):
                yield f"{name} -> {dep}"


def test_no_import_circles() -> None:
    found = circles(imports(modules()))
    assert not found, f"modules that import each other: {found}"


def test_the_layers_point_down() -> None:
    found = list(upward(imports(modules())))
    assert not found, f"imports of a layer above: {found}"


def test_no_module_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): n
        for path in modules().values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split by responsibility: {long}"


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    pkg = tmp_path / "kernelgen"
    (pkg / "run").mkdir(parents=True)
    (pkg / "spec").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "spec" / "__init__.py").write_text("")
    (pkg / "run" / "a.py").write_text("from kernelgen.run import b\n")
    (pkg / "run" / "b.py").write_text("def f():\n    from kernelgen.run.a import x\n")
    (pkg / "spec" / "c.py").write_text("from kernelgen.run.a import y\n")
    graph = imports(modules(pkg))
    assert circles(graph) == [["kernelgen.run.a", "kernelgen.run.b"]]
    assert list(upward(graph)) == ["kernelgen.spec.c -> kernelgen.run.a"]
