"""Static rules for a candidate module: the first gate, read from the AST before any of it runs.

A candidate does its work in `@triton.jit` kernels; everything else (the "launcher": undecorated
functions and module level) may only check arguments, allocate, take views, make layout copies,
compute grids and launch. The rules below reject what the contract forbids wherever it can be seen
in the source: foreign imports, fallbacks, hidden state, monkeypatching, escape hatches (streams,
graphs, compile), torch compute in the launcher, and a module whose entry never launches a kernel.

Names are resolved through the module's imports, so `tl.exp` reads as `triton.language.exp` and
`from torch import empty` makes `empty` read as `torch.empty`; rebinding an imported name is itself
a violation, which keeps that reading sound.

What static rules cannot see: binary operators (`x * y` is legitimate on the ints that make grids
and strides and looks the same on tensors), tensors reached through containers, and anything
decided at run time. The runtime dispatch guard (contract check 6) catches the tensor arithmetic
that slips through here; these rules are never the only gate.
"""

from __future__ import annotations

import ast

import torch
from pydantic import BaseModel, ConfigDict

# Every rule's reason is a constant (as in KernelBench's static checker); a violation prefixes it
# with what was found.
RULES: dict[str, str] = {
    "forbidden-import": "only torch, triton, triton.language(.extra), math, functools, typing, "
    "itertools and operator may be imported; anything else reaches the OS, the harness or the "
    "reference",
    "try": "try/except is a fallback path: a kernel that fails must fail, not fall back to torch",
    "global": "global/nonlocal state survives between calls (cached outputs, call counters)",
    "module-state": "a function may not change module-level values: state that survives "
    "between calls lets a kernel cache outputs or behave differently once it is being timed",
    "class-def": "classes make tensor subclasses, autograd Functions and stateful objects; a "
    "candidate needs none",
    "forbidden-builtin": "this builtin runs code, opens files or reaches attributes by name, "
    "past every other rule",
    "dunder": "dunder names and attributes (__class__, __globals__, __builtins__) reach the "
    "interpreter's internals",
    "monkeypatch": "assigning or deleting an attribute rewires torch, triton, a kernel or a "
    "tensor the harness relies on",
    "import-alias": "an imported name may not be rebound, and a module may only be used as "
    "`module.attr`: an alias would hide what actually runs",
    "escape-hatch": "streams, graphs, compilers, extensions, runtime internals and global "
    "settings escape the harness's control",
    "launcher-torch": "outside kernels torch may only allocate (empty*, zeros*), name dtypes "
    "and query devices; any other torch API computes outside the candidate's kernels",
    "launcher-arithmetic": "outside kernels a tensor may only be queried, viewed or "
    "layout-copied (.contiguous, .reshape); this method computes or moves data",
    "kernel-torch": "a @triton.jit kernel is device code with no torch; torch there runs only "
    "under the CPU interpreter, as plain Python",
    "top-level-code": "module level may hold only a docstring, imports, functions and constant "
    "assignments: nothing may run at import",
    "no-entry": "the module must define the operator's function at top level",
    "no-kernel-launch": "the operator's function must launch a module-level @triton.jit kernel "
    "(`K[grid](...)`), directly or through module-level helpers",
}


class Violation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: str
    line: int
    reason: str


_MODULES = frozenset(
    {"torch", "triton", "triton.language", "math", "functools", "typing", "itertools", "operator"}
)
_EXTRA = "triton.language.extra"  # libdevice and friends: device math, imported as modules

_BUILTINS = frozenset(
    {"open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr",
     "setattr", "delattr", "breakpoint", "input", "memoryview", "exit", "quit",
     "type"}  # type(x) with one argument only reads, and _call lets it through
)  # fmt: skip
# getattr by another name.
_DYNAMIC = frozenset({"operator.attrgetter", "operator.methodcaller"})
_DUNDER_OK = frozenset({"__name__", "__doc__"})
# Methods that change a list, dict or set in place.
_MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove",
     "add", "discard", "sort", "reverse", "__setitem__", "__delitem__"}
)  # fmt: skip

# Matched component-wise: the path itself or anything under it.
_ESCAPES = (
    "torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.StreamContext",
    "torch.cuda.stream", "torch.cuda.streams", "torch.cuda.current_stream",
    "torch.cuda.default_stream", "torch.cuda.Event", "torch.cuda.graph", "torch.cuda.graphs",
    "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables", "torch.cuda.synchronize",
    "torch.cuda.empty_cache", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.cuda.amp", "torch.Stream", "torch.Event", "torch.compile", "torch.jit",
    "torch.library", "torch.ops", "torch.backends", "torch.utils", "torch.autograd",
    "torch.multiprocessing", "torch.distributed", "torch.fx", "torch.export", "torch.overrides",
    "torch.func", "torch.hub", "torch.load", "torch.save", "torch.random", "torch.manual_seed",
    "torch.seed", "torch.use_deterministic_algorithms", "torch.accelerator",
    "triton.testing", "triton.runtime", "triton.compiler", "triton.compile", "triton.knobs",
    "triton.backends",
)  # fmt: skip
# Matched as plain string prefixes: private modules, setters of global state, allocator knobs.
_ESCAPE_PREFIXES = ("torch._", "torch.set_", "torch.cuda._", "torch.cuda.set_",
                    "torch.cuda.memory", "torch.cuda.caching_allocator", "triton._")  # fmt: skip

# What the launcher may touch in torch, beyond dtypes (derived below).
_TORCH_LAUNCHER = frozenset(
    {"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
     "torch.Tensor", "torch.Size", "torch.dtype", "torch.device", "torch.finfo", "torch.iinfo",
     "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.cuda.is_available",
     "torch.cuda.device", "torch.cuda.device_count", "torch.cuda.current_device",
     "torch.cuda.get_device_properties", "torch.cuda.get_device_capability",
     "torch.cuda.get_device_name"}
)  # fmt: skip
_DTYPES = frozenset(f"torch.{n}" for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype))

# Tensor attributes a launcher may use: queries, views and layout copies. `is_*` are queries too.
_TENSOR_OK = frozenset(
    {"contiguous", "view", "reshape", "view_as", "reshape_as", "stride", "size", "dim",
     "ndimension", "numel", "nelement", "element_size", "data_ptr", "storage_offset",
     "get_device", "dim_order", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim",
     "moveaxis", "unsqueeze", "squeeze", "flatten", "unflatten", "expand", "expand_as",
     "as_strided", "narrow", "select", "unbind", "split", "tensor_split", "chunk", "diagonal",
     "unfold", "detach", "new_empty", "new_empty_strided", "new_zeros", "shape", "dtype",
     "device", "layout", "ndim", "itemsize", "nbytes", "requires_grad", "T", "mT", "H", "mH",
     "real", "imag", "name"}
)  # fmt: skip


def _tensor_attr_ok(name: str) -> bool:
    return name in _TENSOR_OK or name.startswith("is_")


# Every other public Tensor attribute of the installed torch computes, moves data, syncs or reaches
# storage/autograd/streams; deriving the list keeps it complete as torch grows. Two names are far
# more common on dicts and lists than on tensors (`cfg.values()`, `shape.index(n)`) and do no
# arithmetic, so they stay allowed.
_TENSOR_DENIED = frozenset(
    n for n in dir(torch.Tensor) if not n.startswith("_") and not _tensor_attr_ok(n)
) - {"values", "index"}
# Read without a call these are data: `torch.finfo(dt).max`, `x.device.type`.
_FIELDS = frozenset({"max", "min", "type"})

# The only calls module level may make: constant builders for meta-parameters.
_TOP_LEVEL_CALLS = frozenset({"triton.language.constexpr", "triton.Config"})
_TOP_LEVEL_BUILTINS = frozenset({"dict", "range"})


def check_source(source: str, entry: str) -> list[Violation]:
    """Every rule violation in `source`, by line. A SyntaxError from parsing propagates."""
    tree = ast.parse(source)
    checker = _Checker(tree)
    checker.run(entry)
    return sorted(checker.found, key=lambda v: v.line)  # stable: on one line, as found


def _module_ok(path: str) -> bool:
    return path in _MODULES or path == _EXTRA or path.startswith(_EXTRA + ".")


def _is_escape(path: str) -> bool:
    return path.startswith(_ESCAPE_PREFIXES) or any(
        path == p or path.startswith(p + ".") for p in _ESCAPES
    )


def _torch_launcher_ok(path: str) -> bool:
    parts = path.split(".")
    if path in _TORCH_LAUNCHER or ".".join(parts[:2]) in _DTYPES:
        return True
    return parts[:2] == ["torch", "Tensor"] and len(parts) == 3 and _tensor_attr_ok(parts[2])


def _decorator_path(node: ast.expr, aliases: dict[str, str]) -> str | None:
    return _resolve(node.func if isinstance(node, ast.Call) else node, aliases)


def _resolve(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The dotted path of `name.attr.attr` rooted at an imported name, else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


class _Checker:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.found: list[Violation] = []
        self.aliases: dict[str, str] = {}  # bound name -> dotted path it was imported as
        self.modules: set[str] = set()  # bound names that are modules, not functions
        self._bind_imports()
        self.functions = {
            s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.kernels = {
            name
            for name, f in self.functions.items()
            if any(_decorator_path(d, self.aliases) == "triton.jit" for d in f.decorator_list)
        }
        # Values the module binds at top level (TUNED, constants): readable, never changed.
        self.state = {
            t.id
            for stmt in tree.body
            if isinstance(stmt, (ast.Assign, ast.AnnAssign))
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            if isinstance(t, ast.Name)
        }

    def flag(self, rule: str, node: ast.AST, found: str) -> None:
        line = getattr(node, "lineno", 1)  # the module itself has none
        self.found.append(Violation(rule=rule, line=line, reason=f"{found}: {RULES[rule]}"))

    def run(self, entry: str) -> None:
        for stmt in self.tree.body:
            self._top_level(stmt)
            self._visit(stmt, kernel=False)
        self._entry(entry)

    def _bind_imports(self) -> None:
        # Flow-insensitive on purpose: any later rebinding is itself flagged (import-alias).
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    bound, path = (a.asname, a.name) if a.asname else ((a.name.split(".")[0],) * 2)
                    self._bind(node, bound, path, module=True)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
                for a in node.names:
                    path = f"{node.module}.{a.name}"
                    if a.name != "*":
                        self._bind(node, a.asname or a.name, path, module=_module_ok(path))

    def _bind(self, node: ast.AST, name: str, path: str, *, module: bool) -> None:
        if self.aliases.get(name, path) != path:
            self.flag("import-alias", node, f"`{name}` imported as both {self.aliases[name]} "
                      f"and {path}")  # fmt: skip
        self.aliases[name] = path
        if module:
            self.modules.add(name)

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if not _module_ok(a.name):
                    self.flag("forbidden-import", node, f"import {a.name}")
            return
        module = "." * node.level + (node.module or "")
        if module == "__future__":
            return
        if not _module_ok(module):
            self.flag("forbidden-import", node, f"from {module} import ...")
            return
        for a in node.names:
            path = f"{module}.{a.name}"
            if a.name == "*":
                self.flag("forbidden-import", node, f"from {module} import *")
            elif not _module_ok(path) and (
                _is_escape(path)
                or path in _DYNAMIC
                or (module == "torch" and not _torch_launcher_ok(path))
            ):
                self.flag("forbidden-import", node, f"from {module} import {a.name}")

    def _top_level(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Try, ast.ClassDef, ast.Global, ast.Nonlocal)):
            return  # their own rules say why
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # the docstring
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (
            stmt.value is None or self._constant(stmt.value)
        ):
            return
        self.flag("top-level-code", stmt, f"module-level `{type(stmt).__name__}`")

    def _constant(self, node: ast.AST) -> bool:
        """Literals, names and arithmetic on them, comprehensions over them, config builders."""
        if isinstance(node, ast.Call):
            path = _resolve(node.func, self.aliases)
            builtin = isinstance(node.func, ast.Name) and node.func.id in _TOP_LEVEL_BUILTINS
            if not (builtin or path in _TOP_LEVEL_CALLS):
                return False
            return all(self._constant(a) for a in node.args) and all(
                self._constant(k.value) for k in node.keywords
            )
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for gen in node.generators:
                parts += [gen.iter, *gen.ifs]
            return all(self._constant(p) for p in parts)
        allowed = (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.List, ast.Set, ast.Dict,
                   ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript,
                   ast.Slice, ast.Starred, ast.JoinedStr, ast.FormattedValue, ast.expr_context,
                   ast.operator, ast.unaryop, ast.boolop, ast.cmpop)  # fmt: skip
        return isinstance(node, allowed) and all(
            self._constant(c) for c in ast.iter_child_nodes(node)
        )

    def _visit(self, node: ast.AST, *, kernel: bool) -> None:
        """Walk `node`; `kernel` says whether it is the body of a @triton.jit function."""
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._imports(node)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.flag("try", node, "try statement")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.flag("global", node, f"{type(node).__name__.lower()} {', '.join(node.names)}")
        elif isinstance(node, ast.ClassDef):
            self.flag("class-def", node, f"class {node.name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, kernel=kernel)
            return
        elif isinstance(node, ast.arg):
            self._binding(node, node.arg)
        elif isinstance(node, ast.Call):
            self._call(node, kernel=kernel)
            return
        elif isinstance(node, ast.Name):
            self._name(node, kernel=kernel)
        elif isinstance(node, ast.Attribute):
            self._attribute(node, kernel=kernel, called=False)
            return
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.aliases:
                self.flag("monkeypatch", node, f"item assignment into `{root.id}`")
            elif isinstance(root, ast.Name) and root.id in self.state:
                self.flag("module-state", node, f"item assignment into `{root.id}`")
        for child in ast.iter_child_nodes(node):
            self._visit(child, kernel=kernel)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, kernel: bool) -> None:
        self._binding(node, node.name)
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            # A mutable default is one object shared by every call: module state by another name.
            if isinstance(
                default, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
            ) or (
                isinstance(default, ast.Call)
                and isinstance(default.func, ast.Name)
                and default.func.id in ("list", "dict", "set", "bytearray")
            ):
                self.flag("module-state", default, f"mutable default in `def {node.name}`")
        # Decorators, annotations and defaults run on the host at import, whatever the body is.
        for part in [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]:
            self._visit(part, kernel=kernel)
        body_is_kernel = kernel or (
            node in self.tree.body and node.name in self.kernels
        )  # nested defs inherit their parent's side
        for stmt in node.body:
            self._visit(stmt, kernel=body_is_kernel)

    def _binding(self, node: ast.AST, name: str) -> None:
        if name.startswith("__") and name not in _DUNDER_OK:
            self.flag("dunder", node, f"name `{name}`")
        if name in self.aliases:
            self.flag("import-alias", node, f"`{name}` rebound")

    def _call(self, node: ast.Call, *, kernel: bool) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) == 1:
            pass  # type(x) only reads; three-argument type() makes a class
        elif isinstance(func, ast.Attribute):
            if (
                isinstance(func.value, ast.Name)
                and func.value.id in self.state
                and func.attr in _MUTATORS
            ):
                self.flag("module-state", node, f"`{func.value.id}.{func.attr}(...)`")
            self._attribute(func, kernel=kernel, called=True)
        else:
            self._visit(func, kernel=kernel)
        for child in [*node.args, *node.keywords]:
            self._visit(child, kernel=kernel)

    def _name(self, node: ast.Name, *, kernel: bool) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._binding(node, node.id)
            return
        if node.id.startswith("__") and node.id not in _DUNDER_OK:
            self.flag("dunder", node, f"name `{node.id}`")
        if node.id in _BUILTINS:
            self.flag("forbidden-builtin", node, f"`{node.id}`")
        if node.id in self.modules:
            # Reached only when not the base of an attribute chain (_attribute stops there).
            self.flag("import-alias", node, f"module `{node.id}` used bare")
        elif node.id in self.aliases:
            self._path(node, self.aliases[node.id], kernel=kernel)

    def _attribute(self, node: ast.Attribute, *, kernel: bool, called: bool) -> None:
        if node.attr.startswith("__") and node.attr not in _DUNDER_OK:
            self.flag("dunder", node, f"attribute `.{node.attr}`")
        path = _resolve(node, self.aliases)
        if not isinstance(node.ctx, ast.Load):
            self.flag("monkeypatch", node, f"assignment to `{ast.unparse(node)}`")
            if path is None:
                self._visit(node.value, kernel=kernel)
            elif _is_escape(path):  # torch.backends...allow_tf32 = True: both rules apply
                self._path(node, path, kernel=kernel)
            return
        if path is not None:
            self._path(node, path, kernel=kernel)
            return  # the whole chain is judged as one path
        if not kernel and node.attr in _TENSOR_DENIED and (called or node.attr not in _FIELDS):
            self.flag("launcher-arithmetic", node, f"`.{node.attr}` outside a kernel")
        self._visit(node.value, kernel=kernel)

    def _path(self, node: ast.AST, path: str, *, kernel: bool) -> None:
        if path in _DYNAMIC:
            self.flag("forbidden-builtin", node, f"`{path}`")
        elif _is_escape(path):
            self.flag("escape-hatch", node, f"`{path}`")
        elif path.split(".")[0] == "torch":
            if kernel:
                self.flag("kernel-torch", node, f"`{path}` in a kernel")
            elif not _torch_launcher_ok(path):
                self.flag("launcher-torch", node, f"`{path}` outside a kernel")

    def _entry(self, entry: str) -> None:
        root = self.functions.get(entry)
        if root is None:
            self.flag("no-entry", self.tree, f"no top-level `def {entry}`")
            return
        seen, todo = {entry}, [root]
        while todo:
            for node in ast.walk(todo.pop()):
                if self._is_launch(node):
                    return
                if (
                    isinstance(node, ast.Name)
                    and node.id in self.functions
                    and node.id not in seen | self.kernels
                ):
                    seen.add(node.id)
                    todo.append(self.functions[node.id])
        self.flag("no-kernel-launch", root, f"`{entry}` reaches no `K[grid](...)`")

    def _is_launch(self, node: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            return False
        kernel = node.func.value
        return isinstance(kernel, ast.Name) and kernel.id in self.kernels
