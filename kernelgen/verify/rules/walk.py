"""The walk of a candidate's AST that applies the static rules, node by node: the rules of names
and imports (names.py) and of module state (state.py) where they apply, and here those of the
launcher (torch only to allocate, view and query; no arithmetic) and of the kernels (device code:
triton.language, no torch, no host Python), which differ by where a node stands. Then where the
launcher's device queries go (device.py) and the entry's reach (reach.py)."""

from __future__ import annotations

import ast

from kernelgen.verify import allowlist as allow
from kernelgen.verify.rules.device import device_flags
from kernelgen.verify.rules.names import (
    attr_name_flag,
    import_flags,
    is_dunder,
    is_escape,
    path_flag,
)
from kernelgen.verify.rules.paths import bound, decorator_path, params, resolve, root, short
from kernelgen.verify.rules.reach import entry_flag
from kernelgen.verify.rules.state import (
    Scope,
    Shared,
    cache_flags,
    literal,
    top_level_flag,
)

# A violation as the walk finds it: the rule's name, the line, and what was found there.
Finding = tuple[str, int, str]

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)
_GENERATORS = (ast.Yield, ast.YieldFrom, ast.Await, ast.AsyncFor, ast.AsyncWith)


def find(tree: ast.Module, entry: str) -> list[Finding]:
    """Every violation in the module, in the order the walk finds them."""
    checker = Checker(tree, entry)
    checker.run()
    return checker.found


class Checker:
    """One module's walk: the module's imports, kernels and top-level values, read once, and
    where the walk stands (the function, its parameters, inside a kernel or not)."""

    def __init__(self, tree: ast.Module, entry: str) -> None:
        self.tree = tree
        self.entry = entry
        self.found: list[Finding] = []
        self.aliases: dict[str, str] = {}  # bound name -> dotted path it was imported as
        self.modules: set[str] = set()  # bound names that are modules, not functions
        self._bind_imports()
        self.functions = {
            s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.kernels = {
            name
            for name, f in self.functions.items()
            if any(decorator_path(d, self.aliases) == "triton.jit" for d in f.decorator_list)
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
        self.bound = bound(tree)
        self.shared = Shared(
            tree,
            aliases=self.aliases,
            state=self.state,
            kernels=self.kernels,
            functions=self.functions,
        )
        self.scope = Scope()  # that of the module-level function being walked
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
        self.found.append((rule, line, found))

    def run(self) -> None:
        for stmt in self.tree.body:
            top = top_level_flag(stmt, self.aliases)
            if top is not None:
                self.flag(*top)
            self._visit(stmt, kernel=False)
        for flag in device_flags(self.tree, self.aliases, self.kernels):
            self.flag(*flag)
        reached = entry_flag(self.tree, self.entry, self.functions, self.kernels)
        if reached is not None:
            self.flag(*reached)

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

    def _visit(self, node: ast.AST, *, kernel: bool) -> None:
        """Walk `node`; `kernel` says whether it is the body of a @triton.jit function."""
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for flag in import_flags(node):
                self.flag(*flag)
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
            self.kernel_locals = bound(node)
        if top:
            self.scope = self.shared.scopes.get(node.name, Scope())
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
            if not literal(default):
                self.flag("default", default, f"`{short(default)}` as a default in `{what}`")
        self._visit(args, kernel=kernel)
        self.params.append({a.arg for a in params(args)})
        for stmt in body:  # nested defs inherit their parent's side
            self._visit(stmt, kernel=kernel or body_kernel)
        self.params.pop()

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef, *, top: bool,
                    is_kernel: bool) -> None:  # fmt: skip
        allowed = allow.DECORATORS_KERNEL if is_kernel else allow.DECORATORS_CACHE
        cached = False
        for d in node.decorator_list:
            path = decorator_path(d, self.aliases)
            if path not in allowed:
                where = "a kernel" if is_kernel else f"`def {node.name}`"
                self.flag("decorator", d, f"`@{short(d)}` on {where}")
            cached |= path in allow.DECORATORS_CACHE
        if cached:
            flags = cache_flags(
                node, top=top, entry=self.entry, aliases=self.aliases, functions=self.functions
            )
            for flag in flags:
                self.flag(*flag)

    def _binding(self, node: ast.AST, name: str, *, param: bool = False) -> None:
        if is_dunder(name):
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
        if is_dunder(name):
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
        flag = attr_name_flag(node, attr)
        if flag is not None:
            self.flag(*flag)
        return flag is not None

    def _attribute(self, node: ast.Attribute, *, kernel: bool, called: bool) -> None:
        path = resolve(node, self.aliases)
        chain: ast.expr = node
        while path is not None and isinstance(chain, ast.Attribute):
            self._attr_name(chain, chain.attr)  # the whole chain is judged here, at once
            chain = chain.value
        bad_name = path is None and self._attr_name(node, node.attr)
        if not isinstance(node.ctx, ast.Load):
            self.flag("monkeypatch", node, f"assignment to `{short(node)}`")
            if path is None:
                self._visit(node.value, kernel=kernel)
            elif is_escape(path):  # torch.backends...allow_tf32 = True: both rules apply
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
        name = root(target)
        if (
            name is not None
            and not self._is_param(name)
            and (name in self.aliases or name in self.functions)
        ):
            self.flag("monkeypatch", node, f"{what} `{name}`")
        elif self.shared.depth(target, self.scope) == 0:
            self.flag("module-state", node, f"{what} `{short(target)}`, which may be module state")

    def _path(self, node: ast.AST, path: str, *, kernel: bool) -> None:
        flag = path_flag(node, path, kernel=kernel, decorating=self.decorating)
        if flag is not None:
            self.flag(*flag)
