"""Module state, under any name: what a module-level function may change, what may stand at
module level, which defaults and caches hand every call the same object. A kernel that keeps
state between calls can cache its outputs, or behave differently once it is being timed."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernelgen.verify import allowlist as allow
from kernelgen.verify.rules.paths import (
    Flag,
    decorator_path,
    own_nodes,
    params,
    resolve,
    root,
    short,
)

# Builtins that build a new container from their arguments: the container is fresh, the
# elements it holds are the arguments' own.
_COPIES = frozenset(
    {"dict", "list", "set", "tuple", "frozenset", "sorted", "reversed", "enumerate", "zip", "map",
     "filter"}
)  # fmt: skip
# Methods that hand out an element of their object, and ones that make a shallow copy or a view.
_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popitem"})
_COPY_METHODS = frozenset({"copy", "values", "items", "keys"})

Fn = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _min(*depths: int | None) -> int | None:
    known = [d for d in depths if d is not None]
    return min(known) if known else None


@dataclass
class Scope:
    """One module-level function with everything nested in it: a name means one thing here."""

    names: dict[str, int] = field(default_factory=dict)  # local name -> depth (see Shared)
    defs: dict[str, Fn] = field(default_factory=dict)  # nested defs and lambdas, by name


class Shared:
    """Which values may be module state, by any name.

    A module-level dict survives between calls, and so does whatever is reached from it or
    handed out by a cached function: `state = _STATE; state["calls"] += 1` keeps state as surely
    as `_STATE["calls"] += 1`. A depth of 0 means "may be module state itself", 1 "a fresh
    container whose elements may be": changing a depth-0 object keeps state, changing a copy
    (`dict(DEFAULT_CONFIG)`) does not. Flow-insensitive, and within one module-level function a
    name means the same everywhere: an over-approximation, which only ever rejects more.
    """

    def __init__(
        self,
        tree: ast.Module,
        *,
        aliases: dict[str, str],
        state: set[str],
        kernels: set[str],
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    ) -> None:
        # The module's imports, its top-level values, its kernels and its top-level functions.
        self.aliases, self.state, self.kernels, self.functions = aliases, state, kernels, functions
        tops = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.scopes = {f.name: Scope() for f in tops}
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

    def depth(self, e: ast.expr, scope: Scope) -> int | None:
        if isinstance(e, ast.Name):
            return scope.names.get(e.id, 0 if e.id in self.state else None)
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

    def _call(self, e: ast.Call, scope: Scope) -> int | None:
        f = e.func
        args = [*e.args, *(k.value for k in e.keywords)]
        shared_arg = any(self.depth(a, scope) is not None for a in args)
        if isinstance(f, ast.Name) and (f.id in allow.BUILTINS or f.id in self.aliases):
            if f.id in ("min", "max"):
                return 0 if shared_arg else None  # an element of the argument
            return 1 if shared_arg and f.id in _COPIES else None
        callee = self._callee(f, scope)
        if callee is not None:
            return self.returns.get(callee)
        if isinstance(f, ast.Attribute) and resolve(f, self.aliases) is None:
            if self.depth(f.value, scope) is None:
                return None
            if f.attr in _ELEMENT_METHODS:
                return 0
            return 1 if f.attr in _COPY_METHODS else None
        if isinstance(f, ast.Subscript) and root(f) in self.kernels:
            return None  # a launch
        # A callable the analysis cannot follow (a parameter, an item): assume the worst.
        return 0 if isinstance(f, (ast.Name, ast.Subscript)) else None

    def _callee(self, e: ast.expr, scope: Scope) -> Fn | None:
        if isinstance(e, ast.Lambda):
            return e
        if isinstance(e, ast.Name):
            return scope.defs.get(e.id) or self.functions.get(e.id)
        return None

    def _scope_of(self, fn: Fn, scope: Scope) -> Scope:
        # A module-level function has its own names; a nested one or a lambda shares its parent's.
        if isinstance(fn, ast.Lambda) or self.functions.get(fn.name) is not fn:
            return scope
        return self.scopes[fn.name]

    def _lower(self, table: dict, key: object, depth: int | None) -> None:
        if depth is not None and depth < table.get(key, 2):
            table[key] = depth
            self.changed = True

    def _bind(self, scope: Scope, target: ast.expr, value: ast.expr) -> None:
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

    def _propagate(self, top: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
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

    def _returned(self, fn: Fn, scope: Scope) -> int | None:
        if any(decorator_path(d, self.aliases) in allow.DECORATORS_CACHE
               for d in getattr(fn, "decorator_list", [])):  # fmt: skip
            return 0  # every call hands out the same object
        if isinstance(fn, ast.Lambda):
            return self.depth(fn.body, self._scope_of(fn, scope))
        own = self._scope_of(fn, scope)
        values = [n.value for n in own_nodes(fn) if isinstance(n, ast.Return) and n.value]
        return _min(*(self.depth(v, own) for v in values))

    def _arguments(self, call: ast.Call, scope: Scope) -> None:
        """Shared state passed to a function makes the parameters that receive it shared."""
        args = [*call.args, *(k.value for k in call.keywords)]
        if all(self.depth(a, scope) is None for a in args):
            return
        callee = self._callee(call.func, scope)
        if callee is not None:
            into = self._scope_of(callee, scope).names
            everything = [p.arg for p in params(callee.args)]
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
                for p in params(fn.args):
                    self._lower(into, p.arg, 0)


def literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (bool, int, float, str))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = node.operand
        return isinstance(operand, ast.Constant) and type(operand.value) in (int, float)
    return isinstance(node, ast.Tuple) and all(literal(e) for e in node.elts)


_FRESH = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp,
          ast.Lambda)  # fmt: skip


def top_level_flag(stmt: ast.stmt, aliases: dict[str, str]) -> Flag | None:
    """Module level may hold a docstring, imports, functions and constant assignments."""
    if isinstance(stmt, (ast.Try, ast.ClassDef, ast.Global, ast.Nonlocal)):
        return None  # their own rules say why
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
        return None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return None  # the docstring
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (
        stmt.value is None or constant(stmt.value, aliases)
    ):
        return None
    return ("top-level-code", stmt, f"module-level `{type(stmt).__name__}`")


def constant(node: ast.AST, aliases: dict[str, str]) -> bool:
    """Literals, names and arithmetic on them, comprehensions over them, config builders."""
    if isinstance(node, ast.Call):
        path = resolve(node.func, aliases)
        builtin = isinstance(node.func, ast.Name) and node.func.id in allow.TOP_LEVEL_BUILTINS
        if not (builtin or path in allow.TOP_LEVEL_CALLS):
            return False
        return all(constant(a, aliases) for a in node.args) and all(
            constant(k.value, aliases) for k in node.keywords
        )
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for gen in node.generators:
            parts += [gen.iter, *gen.ifs]
        return all(constant(p, aliases) for p in parts)
    allowed = (ast.Constant, ast.Name, ast.Attribute, ast.Tuple, ast.List, ast.Set, ast.Dict,
               ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript,
               ast.Slice, ast.Starred, ast.JoinedStr, ast.FormattedValue, ast.expr_context,
               ast.operator, ast.unaryop, ast.boolop, ast.cmpop)  # fmt: skip
    return isinstance(node, allowed) and all(
        constant(c, aliases) for c in ast.iter_child_nodes(node)
    )


def cache_flags(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    *,
    top: bool,
    entry: str,
    aliases: dict[str, str],
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> list[Flag]:
    """A cached function may only map shape numbers to configs: nothing it returns can be a
    tensor, a launch result or a fresh container that later calls would share."""
    name = node.name
    if not top or name == entry:
        return [("cache", node, f"cached {'entry' if top else 'nested'} `def {name}`")]
    flags: list[Flag] = []
    for a in params(node.args):
        if not (isinstance(a.annotation, ast.Name) and a.annotation.id == "int"):
            flags.append(("cache", a, f"parameter `{a.arg}` of cached `{name}` is not `int`"))
    used: dict[str, ast.Name] = {}  # first use of each offending name
    for sub in (n for stmt in node.body for n in ast.walk(stmt)):
        if not isinstance(sub, ast.Name) or not isinstance(sub.ctx, ast.Load):
            continue
        torch_path = aliases.get(sub.id, "").split(".")[0] == "torch"
        if torch_path or (sub.id in functions and sub.id != name):
            used.setdefault(sub.id, sub)
    for used_name, sub in used.items():
        flags.append(("cache", sub, f"cached `{name}` uses `{used_name}`"))
    for sub in own_nodes(node):
        value = sub.value if isinstance(sub, ast.Return) else None
        fresh = isinstance(value, _FRESH) or (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in ("list", "dict", "set")
        )
        if fresh:
            flags.append(("cache", sub, f"cached `{name}` returns a new `{short(value)}`"))
    return flags
