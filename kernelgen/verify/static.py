"""Static rules for a candidate module: the first gate, read from the AST before any of it runs.

A candidate does its work in `@triton.jit` kernels; everything else (the "launcher": undecorated
functions and module level) may only check arguments, allocate, take views, make layout copies,
compute grids and launch. The rules below reject what the contract forbids wherever it can be seen
in the source: foreign imports, fallbacks, hidden state, monkeypatching, escape hatches (streams,
graphs, compile), torch compute in the launcher, and a module whose entry never launches a kernel.

Every name is checked against closed lists (`allowlist.py`): a dotted path into a module must be
listed in full, a builtin must be listed, an attribute of a value must be listed (one list for the
launcher, a narrower one inside kernels). A module root is never enough: modules re-export other
modules, and `typing.sys._getframe(1).f_back` was how candidates reached the judge's frames.
Names are resolved through the module's imports, so `tl.exp` reads as `triton.language.exp`;
rebinding an imported name or a builtin is itself a violation, which keeps that reading sound.

Module state is followed under other names too (`cache = _BUF; cache[k] = y`, a cached function's
result, a parameter it was passed to): see _Shared.

What static rules cannot see: binary operators (`x * y` is legitimate on the ints that make grids
and strides and looks the same on tensors, in the launcher, in a grid callable, or on a constexpr
that is a torch tensor under the interpreter), tensors reached through containers, string
annotations (never evaluated by the harness or by Triton), and anything decided at run time. The
run-time checks (dispatch guard, fresh buffers, a second call) catch what slips through; these
rules are never the only gate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from kernelgen import syntax
from kernelgen.verify import allowlist as allow

# Every rule's reason is a constant (as in KernelBench's static checker); a violation prefixes it
# with what was found.
RULES: dict[str, str] = {
    "forbidden-import": "only torch, triton, triton.language (tl.math, "
    "triton.language.extra.libdevice), math, functools, typing, itertools, operator and "
    "kernelgen_ops._runtime (nearest_bucket) may be "
    "imported, and from them only listed names; anything else reaches the OS, the harness or the "
    "reference",
    "unlisted-name": "only listed names may be used: the allocation and query API of torch, "
    "triton's jit/autotune/heuristics/Config/cdiv/next_power_of_2, the triton.language API, "
    "libdevice, math, a few names of functools/typing/itertools/operator, and names the module "
    "defines; any other path can be a module reached through another (triton.language.core, "
    "typing.sys) that leads to the OS, the interpreter's frames or the judge",
    "try": "try/except is a fallback path: a kernel that fails must fail, not fall back to torch",
    "global": "global/nonlocal state survives between calls (cached outputs, call counters)",
    "module-state": "a function may not change module-level values: state that survives "
    "between calls lets a kernel cache outputs or behave differently once it is being timed",
    "default": "a default is evaluated once at import and shared by every call: only literal "
    "constants (numbers, strings, booleans, None, tuples of them) may be defaults",
    "generator": "yield, async and await make resumable frames that carry state from one call "
    "to the next and expose frames (gi_frame, cr_frame); a candidate needs none",
    "class-def": "classes make tensor subclasses, autograd Functions and stateful objects; a "
    "candidate needs none",
    "decorator": "only @triton.jit, @triton.autotune and @triton.heuristics (on a module-level "
    "kernel) and @functools.lru_cache/@functools.cache (on a config lookup) may decorate: any "
    "other decorator replaces the function with code the rules never read",
    "cache": "a cache may only wrap a module-level config lookup: not the entry, every parameter "
    "annotated `int`, no torch, no kernel, no other module function, no new list/dict/set/"
    "generator returned; a cached launcher returns the same output object on every call",
    "forbidden-builtin": "only listed builtins may be named, called or not (len, range, min, "
    "max, int, float, isinstance, sorted, zip... and exceptions): the others run code (eval, "
    "exec, compile), open files, reach attributes by name (getattr, setattr, hasattr, vars), "
    "make classes (type), carry state (iter, next) or print into the judge's logs",
    "dunder": "dunder names and attributes (__class__, __globals__, __builtins__) reach the "
    "interpreter's internals",
    "frame": "frame, generator, traceback, code and cell attributes (f_back, f_globals, "
    "gi_frame, tb_frame, cell_contents) walk up the stack into the caller's frames",
    "monkeypatch": "assigning or deleting an attribute, or changing an item of an import or a "
    "module-level function, rewires torch, triton, a kernel or a tensor the harness relies on",
    "import-alias": "an imported name may not be rebound, and a module may only be used as "
    "`module.attr`: an alias would hide what actually runs",
    "escape-hatch": "streams, graphs, compilers, extensions, runtime internals and global "
    "settings escape the harness's control",
    "launcher-torch": "outside kernels torch may only allocate (empty*, zeros*), name dtypes "
    "and query devices; any other torch API computes outside the candidate's kernels",
    "launcher-arithmetic": "outside kernels a tensor may only be queried, viewed or "
    "layout-copied (.contiguous, .reshape); this method computes or moves data",
    "attribute": "outside kernels only listed attributes of a value may be used (tensor "
    "queries and views; dict, list and str methods; dtype, device and device-property fields): "
    "others reach a kernel's internals, a function's globals, or (str.format) anything by name",
    "kernel-torch": "a @triton.jit kernel is device code with no torch; torch there runs only "
    "under the CPU interpreter, as plain Python",
    "kernel-name": "a @triton.jit kernel may name only triton.language (with libdevice), math, "
    "its own parameters and locals, module-level kernels and constants, and range/len/min/max/"
    "int/float/isinstance: anything else is host Python that runs only under the interpreter",
    "kernel-attribute": "inside a kernel only listed tl.tensor and dtype attributes may be used "
    "(to, reshape, trans, permute, view, dtype, shape, element_ty...) and no item assigned: under "
    "the CPU interpreter a tl.constexpr argument can be a real torch tensor, whose .sum(), "
    ".copy_() or item assignment computes or writes outside any kernel",
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


def check_source(source: str, entry: str) -> list[Violation]:
    """Every rule violation in `source`, by line. A SyntaxError from parsing propagates."""
    tree = syntax.parse(source)
    checker = _Checker(tree, entry)
    checker.run()
    return sorted(checker.found, key=lambda v: v.line)  # stable: on one line, as found


def _is_escape(path: str) -> bool:
    return path.startswith(allow.ESCAPE_PREFIXES) or any(
        path == p or path.startswith(p + ".") for p in allow.ESCAPES
    )


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name not in allow.DUNDER_OK


def _is_frame(name: str) -> bool:
    return name.startswith(allow.FRAME_PREFIXES) or name in allow.FRAME_NAMES


def _resolve(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The dotted path of `name.attr.attr` rooted at an imported name, else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def _decorator_path(node: ast.expr, aliases: dict[str, str]) -> str | None:
    return _resolve(node.func if isinstance(node, ast.Call) else node, aliases)


def _root(node: ast.expr) -> str | None:
    """The name at the bottom of `a.b[c].d`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _params(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def _bound(root: ast.AST) -> set[str]:
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


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (bool, int, float, str))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        return isinstance(operand, ast.Constant) and type(operand.value) in (int, float)
    return isinstance(node, ast.Tuple) and all(_literal(e) for e in node.elts)


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


# Builtins that build a new container from their arguments: the container is fresh, the
# elements it holds are the arguments' own.
_COPIES = frozenset(
    {"dict", "list", "set", "tuple", "frozenset", "sorted", "reversed", "enumerate", "zip", "map",
     "filter"}
)  # fmt: skip
# Methods that hand out an element of their object, and ones that make a shallow copy or a view.
_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popitem"})
_COPY_METHODS = frozenset({"copy", "values", "items", "keys"})

_Fn = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _min(*depths: int | None) -> int | None:
    known = [d for d in depths if d is not None]
    return min(known) if known else None


@dataclass
class _Scope:
    """One module-level function with everything nested in it: a name means one thing here."""

    names: dict[str, int] = field(default_factory=dict)  # local name -> depth (see _Shared)
    defs: dict[str, _Fn] = field(default_factory=dict)  # nested defs and lambdas, by name


class _Shared:
    """Which values may be module state, by any name.

    A module-level dict survives between calls, and so does whatever is reached from it or
    handed out by a cached function: `state = _STATE; state["calls"] += 1` keeps state as surely
    as `_STATE["calls"] += 1`. A depth of 0 means "may be module state itself", 1 "a fresh
    container whose elements may be": changing a depth-0 object keeps state, changing a copy
    (`dict(DEFAULT_CONFIG)`) does not. Flow-insensitive, and within one module-level function a
    name means the same everywhere: an over-approximation, which only ever rejects more.
    """

    def __init__(self, checker: _Checker) -> None:
        self.c = checker
        tops = [
            s for s in checker.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        self.scopes = {f.name: _Scope() for f in tops}
        self.returns: dict[ast.AST, int] = {}  # what a function's call may return
        for f in tops:
            scope = self.scopes[f.name]
            for n in ast.walk(f):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not f:
                    scope.defs[n.name] = n
                elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda):
                    scope.defs.update((t.id, n.value) for t in n.targets if isinstance(t, ast.Name))
        self.changed = True
        while self.changed:  # depths only decrease, over finitely many names and functions
            self.changed = False
            for f in tops:
                self._propagate(f, self.scopes[f.name])

    def depth(self, e: ast.expr, scope: _Scope) -> int | None:
        if isinstance(e, ast.Name):
            return scope.names.get(e.id, 0 if e.id in self.c.state else None)
        if isinstance(e, (ast.Subscript, ast.Attribute, ast.Starred)):
            return None if self.depth(e.value, scope) is None else 0
        if isinstance(e, ast.NamedExpr):
            return self.depth(e.value, scope)
        if isinstance(e, ast.IfExp):
            return _min(self.depth(e.body, scope), self.depth(e.orelse, scope))
        if isinstance(e, ast.BoolOp):
            return _min(*(self.depth(v, scope) for v in e.values))
        if isinstance(e, ast.Call):
            return self._call(e, scope)
        # A new container (or `[S] * 2`) holds whatever its parts hold.
        parts: list[ast.expr] = []
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            parts = e.elts
        elif isinstance(e, ast.Dict):
            parts = e.values
        elif isinstance(e, ast.BinOp):
            parts = [e.left, e.right]
        elif isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            parts = [e.elt, *(g.iter for g in e.generators)]
        elif isinstance(e, ast.DictComp):
            parts = [e.key, e.value, *(g.iter for g in e.generators)]
        return 1 if any(self.depth(p, scope) is not None for p in parts) else None

    def _call(self, e: ast.Call, scope: _Scope) -> int | None:
        f = e.func
        args = [*e.args, *(k.value for k in e.keywords)]
        shared_arg = any(self.depth(a, scope) is not None for a in args)
        if isinstance(f, ast.Name) and (f.id in allow.BUILTINS or f.id in self.c.aliases):
            if f.id in ("min", "max"):
                return 0 if shared_arg else None  # an element of the argument
            return 1 if shared_arg and f.id in _COPIES else None
        callee = self._callee(f, scope)
        if callee is not None:
            return self.returns.get(callee)
        if isinstance(f, ast.Attribute) and _resolve(f, self.c.aliases) is None:
            if self.depth(f.value, scope) is None:
                return None
            if f.attr in _ELEMENT_METHODS:
                return 0
            return 1 if f.attr in _COPY_METHODS else None
        if isinstance(f, ast.Subscript) and _root(f) in self.c.kernels:
            return None  # a launch
        # A callable the analysis cannot follow (a parameter, an item): assume the worst.
        return 0 if isinstance(f, (ast.Name, ast.Subscript)) else None

    def _callee(self, e: ast.expr, scope: _Scope) -> _Fn | None:
        if isinstance(e, ast.Lambda):
            return e
        if isinstance(e, ast.Name):
            return scope.defs.get(e.id) or self.c.functions.get(e.id)
        return None

    def _scope_of(self, fn: _Fn, scope: _Scope) -> _Scope:
        # A module-level function has its own names; a nested one or a lambda shares its parent's.
        if isinstance(fn, ast.Lambda) or self.c.functions.get(fn.name) is not fn:
            return scope
        return self.scopes[fn.name]

    def _lower(self, table: dict, key: object, depth: int | None) -> None:
        if depth is not None and depth < table.get(key, 2):
            table[key] = depth
            self.changed = True

    def _bind(self, scope: _Scope, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self._lower(scope.names, target.id, self.depth(value, scope))
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    self._bind(scope, t, v)
            elif self.depth(value, scope) is not None:  # unpacking elements of shared state
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        self._lower(scope.names, n.id, 0)

    def _propagate(self, top: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope) -> None:
        for n in ast.walk(top):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    self._bind(scope, t, n.value)
            elif isinstance(n, (ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
                self._bind(scope, n.target, n.value)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                shared = self.depth(n.value, scope) is not None
                self._lower(scope.names, n.target.id, 1 if shared else None)
            elif isinstance(n, (ast.For, ast.comprehension)):
                if self.depth(n.iter, scope) is not None:  # the elements of shared state
                    for t in ast.walk(n.target):
                        if isinstance(t, ast.Name):
                            self._lower(scope.names, t.id, 0)
            elif isinstance(n, ast.Call):
                self._arguments(n, scope)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self._lower(self.returns, n, self._returned(n, scope))

    def _returned(self, fn: _Fn, scope: _Scope) -> int | None:
        if any(_decorator_path(d, self.c.aliases) in allow.DECORATORS_CACHE
               for d in getattr(fn, "decorator_list", [])):  # fmt: skip
            return 0  # every call hands out the same object
        if isinstance(fn, ast.Lambda):
            return self.depth(fn.body, self._scope_of(fn, scope))
        own = self._scope_of(fn, scope)
        values = [n.value for n in self.c._own_nodes(fn) if isinstance(n, ast.Return) and n.value]
        return _min(*(self.depth(v, own) for v in values))

    def _arguments(self, call: ast.Call, scope: _Scope) -> None:
        """Shared state passed to a function makes the parameters that receive it shared."""
        args = [*call.args, *(k.value for k in call.keywords)]
        if all(self.depth(a, scope) is None for a in args):
            return
        callee = self._callee(call.func, scope)
        if callee is not None:
            into = self._scope_of(callee, scope).names
            everything = [p.arg for p in _params(callee.args)]
            positional = [a.arg for a in [*callee.args.posonlyargs, *callee.args.args]]
            for i, a in enumerate(call.args):
                exact = i < len(positional) and not isinstance(a, ast.Starred)
                for name in [positional[i]] if exact else everything:
                    self._lower(into, name, self.depth(a, scope))
            for k in call.keywords:
                for name in [k.arg] if k.arg in everything else everything:
                    self._lower(into, name, self.depth(k.value, scope))
        # Higher-order: a function handed over alongside shared state may be given it.
        for a in args:
            fn = self._callee(a, scope)
            if fn is not None:
                into = self._scope_of(fn, scope).names
                for p in _params(fn.args):
                    self._lower(into, p.arg, 0)


_FRESH = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp,
          ast.Lambda)  # fmt: skip
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)
_GENERATORS = (ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFor, ast.AsyncWith)


class _Checker:
    def __init__(self, tree: ast.Module, entry: str) -> None:
        self.tree = tree
        self.entry = entry
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
            n.id
            for stmt in tree.body
            if isinstance(stmt, (ast.Assign, ast.AnnAssign))
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            for n in ast.walk(t)
            if isinstance(n, ast.Name)
        }
        self.bound = _bound(tree)
        self.shared = _Shared(self)
        self.scope = _Scope()  # that of the module-level function being walked
        # Parameters of the functions and lambdas being walked, innermost last: they shadow
        # everything, and they are the only way a forbidden builtin's name may be bound.
        self.params: list[set[str]] = []
        self.kernel_locals: set[str] = set()  # names bound in the kernel being walked
        # jit, autotune and the caches act only as decorators, where their rules read them.
        self.decorating = {
            id(d.func if isinstance(d, ast.Call) else d)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for d in f.decorator_list
        }

    def flag(self, rule: str, node: ast.AST, found: str) -> None:
        line = getattr(node, "lineno", 1)  # the module itself has none
        self.found.append(Violation(rule=rule, line=line, reason=f"{found}: {RULES[rule]}"))

    def run(self) -> None:
        for stmt in self.tree.body:
            self._top_level(stmt)
            self._visit(stmt, kernel=False)
        self._entry()

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
                        self._bind(node, a.asname or a.name, path, module=path in allow.MODULES)

    def _bind(self, node: ast.AST, name: str, path: str, *, module: bool) -> None:
        if self.aliases.get(name, path) != path:
            self.flag("import-alias", node, f"`{name}` imported as both {self.aliases[name]} "
                      f"and {path}")  # fmt: skip
        if name in allow.FORBIDDEN_BUILTINS:  # `from math import ceil as open`
            self.flag("import-alias", node, f"import shadows the builtin `{name}`")
        self.aliases[name] = path
        if module:
            self.modules.add(name)

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in allow.MODULES:
                    self.flag("forbidden-import", node, f"import {a.name}")
            return
        module = "." * node.level + (node.module or "")
        if module == "__future__":
            return
        if module not in allow.MODULES:
            self.flag("forbidden-import", node, f"from {module} import ...")
            return
        for a in node.names:
            path = f"{module}.{a.name}"
            if a.name == "*":
                self.flag("forbidden-import", node, f"from {module} import *")
            elif path not in allow.MODULES and path not in allow.PATHS:
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
            builtin = isinstance(node.func, ast.Name) and node.func.id in allow.TOP_LEVEL_BUILTINS
            if not (builtin or path in allow.TOP_LEVEL_CALLS):
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
        elif isinstance(node, _GENERATORS):
            self.flag("generator", node, f"`{type(node).__name__.lower()}`")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, kernel=kernel)
            return
        elif isinstance(node, ast.Lambda):
            self._scope(node, [node.body], "lambda", kernel=kernel)
            return
        elif isinstance(node, ast.arg):
            self._binding(node, node.arg, param=True)
        elif isinstance(node, ast.Call):
            self._call(node, kernel=kernel)
            return
        elif isinstance(node, ast.Name):
            self._name(node, kernel=kernel)
        elif isinstance(node, ast.Attribute):
            self._attribute(node, kernel=kernel, called=False)
            return
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            if kernel:  # never Triton; under the interpreter, a write into a torch constexpr
                self.flag("kernel-attribute", node, "item assignment in a kernel")
            self._mutation(node, node.value, "item assignment into")
        elif isinstance(node, ast.AugAssign) and isinstance(node.value, _CONTAINERS):
            # `s += [y]` and `s |= {k: y}` extend a list, dict or set in place.
            self._mutation(node, node.target, "in-place extension of")
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self._binding(node, node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self._binding(node, node.rest)
        for child in ast.iter_child_nodes(node):
            self._visit(child, kernel=kernel)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, kernel: bool) -> None:
        if isinstance(node, ast.AsyncFunctionDef):
            self.flag("generator", node, f"async def {node.name}")
        self._binding(node, node.name)
        top = node in self.tree.body
        is_kernel = top and node.name in self.kernels
        self._decorators(node, top=top, is_kernel=is_kernel)
        # Decorators and return annotations run on the host at import, whatever the body is.
        for part in [*node.decorator_list, *([node.returns] if node.returns else [])]:
            self._visit(part, kernel=kernel)
        outer, outer_scope = self.kernel_locals, self.scope
        if is_kernel:
            self.kernel_locals = _bound(node)
        if top:
            self.scope = self.shared.scopes.get(node.name, _Scope())
        self._scope(node, node.body, f"def {node.name}", kernel=kernel, body_kernel=is_kernel)
        self.kernel_locals, self.scope = outer, outer_scope

    def _scope(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        body: list[ast.stmt] | list[ast.expr],
        what: str,
        *,
        kernel: bool,
        body_kernel: bool = False,
    ) -> None:
        """Parameters (annotations and defaults on the caller's side), then the body."""
        args = node.args
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if not _literal(default):
                self.flag("default", default, f"`{_short(default)}` as a default in `{what}`")
        self._visit(args, kernel=kernel)
        self.params.append({a.arg for a in _params(args)})
        for stmt in body:  # nested defs inherit their parent's side
            self._visit(stmt, kernel=kernel or body_kernel)
        self.params.pop()

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, top: bool,
                    is_kernel: bool) -> None:  # fmt: skip
        allowed = allow.DECORATORS_KERNEL if is_kernel else allow.DECORATORS_CACHE
        cached = False
        for d in node.decorator_list:
            path = _decorator_path(d, self.aliases)
            if path not in allowed:
                where = "a kernel" if is_kernel else f"`def {node.name}`"
                self.flag("decorator", d, f"`@{_short(d)}` on {where}")
            cached |= path in allow.DECORATORS_CACHE
        if cached:
            self._cache(node, top=top)

    def _cache(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, top: bool) -> None:
        """A cached function may only map shape numbers to configs: nothing it returns can be a
        tensor, a launch result or a fresh container that later calls would share."""
        name = node.name
        if not top or name == self.entry:
            self.flag("cache", node, f"cached {'entry' if top else 'nested'} `def {name}`")
            return
        for a in _params(node.args):
            if not (isinstance(a.annotation, ast.Name) and a.annotation.id == "int"):
                self.flag("cache", a, f"parameter `{a.arg}` of cached `{name}` is not `int`")
        used: dict[str, ast.Name] = {}  # first use of each offending name
        for sub in (n for stmt in node.body for n in ast.walk(stmt)):
            if not isinstance(sub, ast.Name) or not isinstance(sub.ctx, ast.Load):
                continue
            torch_path = self.aliases.get(sub.id, "").split(".")[0] == "torch"
            if torch_path or (sub.id in self.functions and sub.id != name):
                used.setdefault(sub.id, sub)
        for used_name, sub in used.items():
            self.flag("cache", sub, f"cached `{name}` uses `{used_name}`")
        for sub in self._own_nodes(node):
            value = sub.value if isinstance(sub, ast.Return) else None
            fresh = isinstance(value, _FRESH) or (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in ("list", "dict", "set")
            )
            if fresh:
                self.flag("cache", sub, f"cached `{name}` returns a new `{_short(value)}`")

    def _own_nodes(self, node: ast.AST) -> list[ast.AST]:
        """The nodes of a function's body, not those of functions nested in it."""
        out, todo = [], list(ast.iter_child_nodes(node))
        while todo:
            n = todo.pop()
            out.append(n)
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                todo.extend(ast.iter_child_nodes(n))
        return out

    def _binding(self, node: ast.AST, name: str, *, param: bool = False) -> None:
        if _is_dunder(name):
            self.flag("dunder", node, f"name `{name}`")
        if name in self.aliases:
            self.flag("import-alias", node, f"`{name}` rebound")
        elif name in allow.FORBIDDEN_BUILTINS and not param:
            # A parameter is seen by _name through self.params; any other binding of the name
            # could shadow it in one scope while another scope reaches the real builtin.
            self.flag("forbidden-builtin", node, f"`{name}` rebound")

    def _is_param(self, name: str) -> bool:
        return any(name in scope for scope in self.params)

    def _call(self, node: ast.Call, *, kernel: bool) -> None:
        func = node.func
        if kernel and isinstance(func, ast.Name) and not self._is_param(func.id):
            # A kernel calls kernels and tl functions; a constant or a local holding a host
            # function would run host code inside the launch (under the interpreter).
            if func.id in self.state or (func.id in self.kernel_locals and func.id not in
                                         self.kernels):  # fmt: skip
                self.flag("kernel-name", node, f"call of `{func.id}` in a kernel")
        if isinstance(node.func, ast.Attribute):
            self._attribute(node.func, kernel=kernel, called=True)
        else:
            self._visit(node.func, kernel=kernel)
        for child in [*node.args, *node.keywords]:
            self._visit(child, kernel=kernel)

    def _name(self, node: ast.Name, *, kernel: bool) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            self._binding(node, name)
            return
        if _is_dunder(name):
            self.flag("dunder", node, f"name `{name}`")
        elif self._is_param(name) or (kernel and name in self.kernel_locals):
            return
        elif name in allow.FORBIDDEN_BUILTINS:
            self.flag("forbidden-builtin", node, f"`{name}`")
        elif name in self.modules:
            # Reached only when not the base of an attribute chain (_attribute stops there).
            self.flag("import-alias", node, f"module `{name}` used bare")
        elif name in self.aliases:
            self._path(node, self.aliases[name], kernel=kernel)
        elif kernel:
            if not (name in self.kernels or name in self.state or name in allow.KERNEL_BUILTINS):
                self.flag("kernel-name", node, f"`{name}` in a kernel")
        elif name not in self.bound and name not in allow.BUILTINS and name not in allow.DUNDER_OK:
            self.flag("unlisted-name", node, f"`{name}` is neither defined here nor listed")

    def _attr_name(self, node: ast.AST, attr: str) -> bool:
        """Dunder and frame attributes, by any route; True when one was flagged."""
        if _is_dunder(attr):
            self.flag("dunder", node, f"attribute `.{attr}`")
        elif _is_frame(attr):
            self.flag("frame", node, f"attribute `.{attr}`")
        else:
            return False
        return True

    def _attribute(self, node: ast.Attribute, *, kernel: bool, called: bool) -> None:
        path = _resolve(node, self.aliases)
        chain: ast.expr = node
        while path is not None and isinstance(chain, ast.Attribute):
            self._attr_name(chain, chain.attr)  # the whole chain is judged here, at once
            chain = chain.value
        bad_name = path is None and self._attr_name(node, node.attr)
        if not isinstance(node.ctx, ast.Load):
            self.flag("monkeypatch", node, f"assignment to `{_short(node)}`")
            if path is None:
                self._visit(node.value, kernel=kernel)
            elif _is_escape(path):  # torch.backends...allow_tf32 = True: both rules apply
                self._path(node, path, kernel=kernel)
            return
        if path is not None:
            self._path(node, path, kernel=kernel)
            return
        attr = node.attr
        if attr in allow.MUTATORS:
            self._mutation(node, node.value, f"`.{attr}` on")
        if bad_name or attr in allow.DUNDER_OK:
            pass
        elif kernel:
            if attr not in allow.KERNEL_ATTRS or (called and attr in allow.KERNEL_FIELDS):
                self.flag("kernel-attribute", node, f"`.{attr}` in a kernel")
        elif attr in allow.TENSOR_DENIED and (called or attr not in allow.FIELDS):
            self.flag("launcher-arithmetic", node, f"`.{attr}` outside a kernel")
        elif attr not in allow.VALUE_ATTRS and attr not in allow.FIELDS:
            self.flag("attribute", node, f"`.{attr}` outside a kernel")
        self._visit(node.value, kernel=kernel)

    def _mutation(self, node: ast.AST, target: ast.expr, what: str) -> None:
        """Item assignment or an in-place method on `target`: an import or a module-level
        function (monkeypatch), or anything that may be module state, under any name."""
        root = _root(target)
        if (
            root is not None
            and not self._is_param(root)
            and (root in self.aliases or root in self.functions)
        ):
            self.flag("monkeypatch", node, f"{what} `{root}`")
        elif self.shared.depth(target, self.scope) == 0:
            self.flag("module-state", node, f"{what} `{_short(target)}`, which may be module state")

    def _path(self, node: ast.AST, path: str, *, kernel: bool) -> None:
        decorators = allow.DECORATORS_KERNEL | allow.DECORATORS_CACHE
        if path in decorators and id(node) not in self.decorating:
            # `triton.jit(softmax)` makes a kernel of code read as launcher code.
            self.flag("decorator", node, f"`{path}` used other than as a decorator")
        elif path in allow.DYNAMIC:
            self.flag("forbidden-builtin", node, f"`{path}`")
        elif _is_escape(path):
            self.flag("escape-hatch", node, f"`{path}`")
        elif path.split(".")[0] == "torch":
            if kernel:
                self.flag("kernel-torch", node, f"`{path}` in a kernel")
            elif path not in allow.PATHS:
                self.flag("launcher-torch", node, f"`{path}` outside a kernel")
        elif path in allow.MODULES:
            self.flag("import-alias", node, f"module `{path}` used bare")
        elif path not in allow.PATHS:
            self.flag("unlisted-name", node, f"`{path}`")
        elif kernel and not path.startswith(allow.KERNEL_ROOTS):
            self.flag("kernel-name", node, f"`{path}` in a kernel")

    def _entry(self) -> None:
        root = self.functions.get(self.entry)
        if root is None:
            self.flag("no-entry", self.tree, f"no top-level `def {self.entry}`")
            return
        seen, todo = {self.entry}, [root]
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
        self.flag("no-kernel-launch", root, f"`{self.entry}` reaches no `K[grid](...)`")

    def _is_launch(self, node: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            return False
        kernel = node.func.value
        return isinstance(kernel, ast.Name) and kernel.id in self.kernels
