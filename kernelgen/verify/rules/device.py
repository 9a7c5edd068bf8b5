"""One program on both devices: the launcher may not branch on the device it runs on.

The CPU verdict runs the candidate under Triton's interpreter, with its tensors on the CPU; the H200
runs it on CUDA. A launcher that asks where it runs (`x.is_cuda`, `x.device.type`,
`torch.cuda.is_available()`) can take a path on the GPU that the CPU run never sees, and the CPU
verdict then judges another program. So a device query may only go where a device is needed and
nothing is decided: the `device=` of an allocation, or the device argument of torch.cuda's property
queries (which answer with the H200's figures under the interpreter, so the SM count that sizes a
persistent grid is the same on both). Any other use is flagged: tested, compared, combined,
indexed with, formatted, returned, or passed to a kernel or to anything but a helper of this module.

The flow is followed through names, containers, attributes and helpers' parameters; it is
flow-insensitive, and within one module-level function a name means one thing everywhere (as in
state.py), so it only ever rejects more. Kernels are not read here: a kernel has no device query
(`.device` is not a tl.tensor attribute), it only receives what the launcher passes.
"""

from __future__ import annotations

import ast

from kernelgen.verify import allowlist as allow
from kernelgen.verify.rules.paths import Flag, resolve, root, short

Fn = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
Origin = tuple[str, int]  # the device query a value came from, and its line
_MODULE = ""  # the scope of module-level code: decorators, constants
_CONTAINERS = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred)


def device_flags(tree: ast.Module, aliases: dict[str, str], kernels: set[str]) -> list[Flag]:
    return _Flow(tree, aliases, kernels).flags()


class _Flow:
    def __init__(self, tree: ast.Module, aliases: dict[str, str], kernels: set[str]) -> None:
        self.aliases, self.kernels = aliases, kernels
        self.parent: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
        self.scope: dict[int, str] = {}  # node -> the module-level function it stands in
        self.nodes: list[ast.AST] = []  # the launcher's nodes: everything but kernel bodies
        self.callables: dict[str, dict[str, Fn]] = {_MODULE: {}}  # scope -> name -> function
        # scope -> name -> the values it is bound to; `plain`: targets of a plain assignment
        self.assigned: dict[str, dict[str, list[ast.expr | None]]] = {}
        self.plain: set[int] = set()
        for stmt in tree.body:
            is_def = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_def and stmt.name not in kernels:
                self.callables[_MODULE][stmt.name] = stmt
        for stmt in tree.body:
            is_def = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_def and stmt.name in kernels:  # only its decorators run on the host
                for d in stmt.decorator_list:
                    self._collect(d, _MODULE)
            else:
                self._collect(stmt, stmt.name if is_def else _MODULE)
        self.by_id = {id(n): n for n in self.nodes}
        # scope -> name -> the device query its value came from
        self.names: dict[str, dict[str, Origin]] = {s: {} for s in self.callables}
        self.taint: dict[int, Origin] = {}
        self._settle()

    def _collect(self, top: ast.AST, scope: str) -> None:
        own = self.callables.setdefault(scope, {})
        assigned = self.assigned.setdefault(scope, {})
        for node in ast.walk(top):
            self.scope[id(node)] = scope
            self.nodes.append(node)
            # Every value a name is bound to (None: one not written out, a parameter, a loop
            # variable, an unpacked item): an allocator's alias must be one in all of them.
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        assigned.setdefault(t.id, []).append(node.value)
                        self.plain.add(id(t))
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                if id(node) not in self.plain:
                    assigned.setdefault(node.id, []).append(None)
            elif isinstance(node, ast.arg):
                assigned.setdefault(node.arg, []).append(None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not top:
                own[node.name] = node
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                own.update((t.id, node.value) for t in node.targets if isinstance(t, ast.Name))

    # ---- where device values are -----------------------------------------------------------

    def _settle(self) -> None:
        """Mark every expression that holds a device value, binding names and helpers'
        parameters as they receive one, until nothing changes (names only ever get added)."""
        while True:
            before = sum(len(n) for n in self.names.values())
            self.taint = {}
            for node in self.nodes:
                if isinstance(node, ast.expr):
                    self._origin(node)
            for nid, origin in list(self.taint.items()):
                self._bind(self.by_id[nid], origin)
            if sum(len(n) for n in self.names.values()) == before:
                return

    def _origin(self, e: ast.expr) -> Origin | None:
        """Where the device value `e` holds came from, or None if it holds none."""
        if id(e) in self.taint:
            return self.taint[id(e)]
        found = self._find(e)
        if found is not None:
            self.taint[id(e)] = found
        return found

    def _find(self, e: ast.expr) -> Origin | None:
        scope = self.scope.get(id(e), _MODULE)
        if isinstance(e, ast.Name) and isinstance(e.ctx, ast.Load):
            if self.aliases.get(e.id) in allow.DEVICE_PATHS:  # from torch.cuda import ...
                return (e.id, e.lineno)
            return self.names[scope].get(e.id) or self.names[_MODULE].get(e.id)
        if isinstance(e, ast.Attribute) and isinstance(e.ctx, ast.Load):
            path = resolve(e, self.aliases)
            value_attr = path is None or path.startswith("torch.Tensor.")
            if path in allow.DEVICE_PATHS or (value_attr and e.attr in allow.DEVICE_ATTRS):
                return (short(e), e.lineno)
            return self._origin(e.value) if path is None else None
        if isinstance(e, ast.Call):
            return self._origin(e.func)
        if isinstance(e, ast.Subscript):
            return self._origin(e.value)
        if isinstance(e, ast.IfExp):
            return self._origin(e.body) or self._origin(e.orelse)
        if isinstance(e, ast.NamedExpr):
            return self._origin(e.value)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return next(filter(None, (self._origin(x) for x in e.elts)), None)
        if isinstance(e, ast.Dict):
            parts = [*e.values, *(k for k in e.keys if k is not None)]
            return next(filter(None, (self._origin(x) for x in parts)), None)
        if isinstance(e, ast.Starred):
            return self._origin(e.value)
        return None

    def _bind(self, e: ast.AST, origin: Origin) -> None:
        """A device value stored in a name, or passed to a helper: the name, or the parameter,
        now holds one."""
        p = self.parent.get(id(e))
        scope = self.scope.get(id(e), _MODULE)
        if isinstance(p, ast.Assign) and p.value is e:
            for t in p.targets:
                self._bind_target(scope, t, e, origin)
        elif isinstance(p, (ast.AnnAssign, ast.NamedExpr)) and p.value is e:
            self._bind_target(scope, p.target, e, origin)
        elif isinstance(p, ast.keyword) or (isinstance(p, ast.Call) and e in p.args):
            call = self.parent[id(p)] if isinstance(p, ast.keyword) else p
            fn = self._callee(call, scope)
            if fn is None:
                return
            into = self._scope_of(fn, scope)
            params = [*fn.args.posonlyargs, *fn.args.args]
            everything = [*params, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg]
            if isinstance(p, ast.keyword):
                named = [a for a in everything if a is not None and a.arg == p.arg]
            else:
                i = call.args.index(e)
                starred = any(isinstance(a, ast.Starred) for a in call.args[: i + 1])
                named = [params[i]] if i < len(params) and not starred else []
            for a in named or [a for a in everything if a is not None]:
                self.names[into].setdefault(a.arg, origin)

    def _bind_target(self, scope: str, target: ast.expr, value: ast.expr, origin: Origin) -> None:
        if isinstance(target, ast.Name):
            self.names[scope].setdefault(target.id, origin)
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `n, dev = x.shape[0], x.device` binds item by item; any other unpacking, every name.
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else []
            pairs = len(items) == len(target.elts) and not any(
                isinstance(x, ast.Starred) for x in [*items, *target.elts]
            )
            for i, t in enumerate(target.elts):
                if not pairs:
                    self._bind_target(scope, t, value, origin)
                elif id(items[i]) in self.taint:
                    self._bind_target(scope, t, items[i], origin)
        elif isinstance(target, ast.Starred):
            self._bind_target(scope, target.value, value, origin)

    def _callee(self, call: ast.Call, scope: str) -> Fn | None:
        if isinstance(call.func, ast.Lambda):
            return call.func
        if isinstance(call.func, ast.Name):
            name = call.func.id
            return self.callables[scope].get(name) or self.callables[_MODULE].get(name)
        return None

    def _scope_of(self, fn: Fn, scope: str) -> str:
        # A module-level function has its own names; a nested one or a lambda shares its parent's.
        if isinstance(fn, ast.Lambda) or self.callables[_MODULE].get(fn.name) is not fn:
            return scope
        return fn.name

    # ---- where they may go -----------------------------------------------------------------

    def flags(self) -> list[Flag]:
        found: list[Flag] = []
        seen: set[int] = set()  # one flag per use: `a.device != b.device` is one comparison
        for nid, origin in self.taint.items():
            e = self.by_id[nid]
            use = self._misuse(e)
            if use is None:
                continue
            where, how = use
            if id(where) in seen:
                continue
            seen.add(id(where))
            text, (source, line) = short(e), origin
            held = "" if source in text else f" (it holds `{source}`, line {line})"
            found.append(("device-branch", e, f"`{text}` {how}{held}"))
        return found

    def _misuse(self, e: ast.AST) -> tuple[ast.AST, str] | None:
        """The node where device value `e` is used as more than a device, and how; None where
        the use passes it on (the parent holds it in turn) or is one of the allowed ones."""
        p = self.parent.get(id(e))
        if p is None or isinstance(p, ast.Expr):
            return None
        if (isinstance(p, ast.Attribute) and p.value is e) or (
            isinstance(p, ast.Call) and p.func is e
        ):
            return None  # `x.device.type`, `f()`: the parent holds it
        if isinstance(p, ast.Subscript):
            if p.value is e:
                return None
            kernel = root(p.value)
            if kernel in self.kernels:
                return (p, f"in the grid of the kernel `{kernel}`")
            return (p, "used as an index")
        if isinstance(p, ast.IfExp):
            return (p, "tested by a conditional expression") if p.test is e else None
        if isinstance(p, (*_CONTAINERS, ast.NamedExpr)):
            return None
        if isinstance(p, (ast.Assign, ast.AnnAssign)):
            targets = p.targets if isinstance(p, ast.Assign) else [p.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, (ast.Subscript, ast.Attribute)):
                        return (p, f"stored into `{short(n)}`")
            return None
        if isinstance(p, (ast.keyword, ast.Call)):
            return self._argument(e, p)
        if self._in_raise(e):
            return None
        if isinstance(p, (ast.If, ast.While, ast.Assert)):
            return (p, f"tested by `{type(p).__name__.lower()}`")
        if isinstance(p, ast.BoolOp):
            return (p, "in a boolean operation")
        if isinstance(p, ast.Compare):
            return (p, "compared")
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
            return (p, "tested by `not`")
        if isinstance(p, (ast.UnaryOp, ast.BinOp, ast.AugAssign)):
            return (p, "used in arithmetic")
        if isinstance(p, (ast.Return, ast.Lambda)):
            return (p, "returned")
        if isinstance(p, (ast.FormattedValue, ast.JoinedStr)):
            return (p, "formatted into a string")
        if isinstance(p, (ast.comprehension, ast.For)):
            return (p, "iterated over")
        if isinstance(p, ast.Match):
            return (p, "matched")
        return (p, f"used in `{short(p)}`")

    def _argument(self, e: ast.AST, p: ast.AST) -> tuple[ast.AST, str] | None:
        call = self.parent[id(p)] if isinstance(p, ast.keyword) else p
        assert isinstance(call, ast.Call)
        path = resolve(call.func, self.aliases)
        keyword = p.arg if isinstance(p, ast.keyword) else None
        func = call.func
        scope = self.scope.get(id(call), _MODULE)
        if path in allow.DEVICE_ARGUMENTS or (keyword == "device" and self._allocator(func, scope)):
            return None
        if isinstance(func, ast.Subscript) and root(func) in self.kernels:
            return (call, f"passed to the kernel `{root(func)}`")
        if isinstance(func, ast.Name) and func.id in self.kernels:
            return (call, f"passed to the kernel `{func.id}`")
        if self._callee(call, self.scope.get(id(call), _MODULE)) is not None:
            return None  # the helper's parameter holds it: its uses are judged there
        if self._in_raise(e):
            return None
        return (call, f"passed to `{short(func)}`")

    def _allocator(self, func: ast.expr, scope: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether `func` is an allocator: torch.empty, `x.new_empty`, `torch.zeros if split
        else torch.empty`, or a name only ever bound to one."""
        path = resolve(func, self.aliases)
        if path is not None:
            return path in allow.ALLOCATORS
        if isinstance(func, ast.Attribute):
            return func.attr in allow.ALLOCATOR_METHODS
        if isinstance(func, ast.IfExp):
            return self._allocator(func.body, scope, seen) and self._allocator(
                func.orelse, scope, seen
            )
        if isinstance(func, ast.Name) and func.id not in seen:
            values = self.assigned[scope].get(func.id) or self.assigned[_MODULE].get(func.id, [])
            return bool(values) and all(
                v is not None and self._allocator(v, scope, seen | {func.id}) for v in values
            )
        return False

    def _in_raise(self, e: ast.AST) -> bool:
        """Whether `e` only goes into the message of a raised error: naming the device in an
        error decides nothing."""
        node = e
        while True:
            p = self.parent.get(id(node))
            if isinstance(p, ast.Raise):
                return node is p.exc
            if isinstance(p, (ast.FormattedValue, ast.JoinedStr, ast.keyword)) or (
                isinstance(p, ast.Call) and node is not p.func
            ):
                node = p
                continue
            return False
