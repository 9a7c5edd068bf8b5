"""What an imported KernelBench problem's reference runs: the problem's own module, executed from
the source its reference file embeds, at the sizes a case names.

A problem is a module: `class Model(nn.Module)`, module-level size constants, `get_inputs()` and
`get_init_inputs()`. Its operator takes the problem's inputs and then the Model's parameters and
buffers, so a candidate receives the weights it must use; the reference runs the Model's own
forward on them through `torch.func.functional_call`, in training mode as KernelBench runs it.
A size's dims are the module's size constants: the module is executed again with them in place
of its own values, so every shape derived from them (inputs, weights, outputs) follows.

How a case's values are drawn (make_inputs), all from the judge's generator, so a run's seed
gives the same case everywhere:
- an input the problem draws as plain `torch.rand`/`torch.randn` takes the case's distribution
  (as every operator's inputs do), as its magnitude where signed values leave the problem's
  domain (a log, a square root);
- any other input (integer targets, masks, triangular or normalised matrices) is what the
  problem's own `get_inputs()` returns under a seed taken from the generator: its invariants are
  the problem's;
- parameters and buffers are the Model's own, constructed from `get_init_inputs()` under a seed
  taken from the generator: the module's own init sets their scale (Linear's U(+-1/sqrt(fan_in)),
  a randn parameter's N(0, 1)), exactly and reproducibly. A parameter the init fills with one
  value (a norm's weight of ones, a bias of zeros) is drawn around it instead, std
  0.1 * max(|value|, 1), so a kernel that leaves it out fails;
- buffers the forward updates (a BatchNorm's running statistics in training mode) are not
  inputs: the output does not read them, and the judge would see an input written. The
  reference keeps the init's values and updates a fresh copy per call.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import sys
import threading
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from kernelgen.errors import SpecError
from kernelgen.spec import BenchShape, ScalarInput, Size, SpecData, TensorInput, resolve_dim
from kernelgen.spec.inputs import torch_dtype, values

# A parameter its init fills with one value is drawn around it with this spread (relative to
# max(|value|, 1)): far enough that leaving it out shows, near enough to keep the problem's scale.
CONSTANT_SPREAD = 0.1
_PROBLEM_SEED = 0x5EED  # the parameters' init seed is the case's, offset from the inputs'
# Modules eager() keeps, one per set of parameter tensors (and those tensors alive): the bench
# rotates up to 4 input sets.
EAGER_MODULES = 4
# seeded()'s hold on torch's global generators (reentrant: a seeded block may call another)
_SEEDED = threading.RLock()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanInput(_Strict):
    name: str = Field(description="the reference's parameter")
    draw: Literal["judge", "magnitude", "problem", "scalar"] = Field(
        description="judge: the case's distribution; magnitude: its absolute value; problem: "
        "the problem's get_inputs() under the case's seed; scalar: SPEC's value"
    )


class PlanParam(_Strict):
    name: str = Field(description="the reference's parameter")
    state: str = Field(description="the Model's state key (`gemm.weight`)")
    constant: float | None = Field(
        None, description="the one value the init fills it with: drawn around it"
    )


class Plan(_Strict):
    """How the reference maps the problem onto the operator contract (the import decides it)."""

    constants: dict[str, tuple[str, int | None]] = Field(
        description="dim -> (the module-level name, its index when the constant is a tuple)"
    )
    inputs: list[PlanInput]
    params: list[PlanParam]
    internal: list[str] = Field(
        default_factory=list, description="buffers the forward updates: kept inside, not inputs"
    )


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """torch's global generators seeded for a block and restored after it: the problem's own
    draws (its init, its get_inputs) use them, and the judge's state must not move. One block
    at a time in the process: the truth's threads draw several cases at once, and two blocks
    together would draw from each other's seeds, so one seed would not give one case."""
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    with _SEEDED, torch.random.fork_rng(devices=[torch.cuda.current_device()] if cuda else []):
        torch.manual_seed(seed)
        yield


def assigned(node: ast.stmt) -> list[str]:
    """The names a module-level statement assigns: `a = 1`, `a: int = 1`, `h = w = 128`,
    `d, h, w = 16, 64, 64`."""
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.target.id] if isinstance(node.target, ast.Name) else []
    if not isinstance(node, ast.Assign):
        return []
    return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def execute(source: str, overrides: Mapping[str, Any], filename: str) -> dict[str, Any]:
    """The problem module's namespace, its module-level constants in `overrides` given those
    values: each is assigned again right after the statement that assigns it, so what the
    module derives from it later follows. Seeded, without autograd: a module-level draw is the
    same every time."""
    tree = ast.parse(source, filename)
    body: list[ast.stmt] = []
    for node in tree.body:
        body.append(node)
        for name in assigned(node):
            if name in overrides:
                again = ast.Assign(
                    targets=[ast.Name(name, ast.Store())], value=ast.Constant(overrides[name])
                )
                body.append(ast.copy_location(again, node))
    tree.body = body
    ast.fix_missing_locations(tree)
    # A module of its own in sys.modules, one per source and sizes: torch.compile (the peer) and
    # pickling look a function's module up by its name.
    name = "kernelbench_problem_" + sha256(f"{source}\0{sorted(overrides.items())}")[:16]
    module = types.ModuleType(name)
    module.__file__ = filename
    with seeded(0), torch.no_grad():
        exec(compile(tree, filename, "exec"), module.__dict__)
    sys.modules[name] = module
    return module.__dict__


def overrides(constants: Mapping[str, tuple[str, int | None]], dims: Mapping[str, int]) -> dict:
    """The module-level values a size's dims stand for (a tuple constant from its elements)."""
    out: dict[str, Any] = {}
    parts: dict[str, dict[int, int]] = {}
    for dim, (name, index) in constants.items():
        if dim not in dims:
            continue
        if index is None:
            out[name] = int(dims[dim])
        else:
            parts.setdefault(name, {})[index] = int(dims[dim])
    for name, items in parts.items():
        out[name] = tuple(items[i] for i in sorted(items))
    return out


@dataclass
class Measured:
    """One size of a problem, run on the meta device: shapes, dtypes and flops, no memory."""

    inputs: list[Any]  # tensors (meta) or the scalars get_inputs returns
    state: dict[str, torch.Tensor]  # the Model's parameters and buffers (meta)
    outputs: list[torch.Tensor]
    flops: int
    convolution: bool
    parameters: set[str] = field(default_factory=set)  # the state keys that are parameters

    def elements(self) -> int:
        tensors = [*self.inputs, *self.state.values(), *self.outputs]
        return sum(t.numel() for t in tensors if isinstance(t, torch.Tensor))


def measure(namespace: Mapping[str, Any]) -> Measured:
    """Construct the Model, draw the inputs and run the forward on the meta device under torch's
    FlopCounterMode (which counts matmuls, convolutions and attention, not elementwise ops)."""
    from torch.utils.flop_counter import FlopCounterMode

    with seeded(0), torch.no_grad(), torch.device("meta"):
        model = namespace["Model"](*namespace["get_init_inputs"]())
        inputs = list(namespace["get_inputs"]())
        with FlopCounterMode(display=False) as counter:
            out = model(*inputs)
    outputs = list(out) if isinstance(out, (tuple, list)) else [out]
    ops = {str(op) for counts in counter.get_flop_counts().values() for op in counts}
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return Measured(
        inputs=inputs,
        state=state,
        outputs=outputs,
        flops=int(counter.get_total_flops()),
        convolution=any("convolution" in op for op in ops),
        parameters={k for k, _ in model.named_parameters()},
    )


def _nbytes(t: Any) -> int:
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


class Problem:
    """An imported problem, as its reference module holds it: the source, the SPEC and the plan."""

    def __init__(self, op: str, source: str, spec: Mapping[str, Any], plan: Mapping[str, Any]):
        self.op = op
        self.source = source
        self.data = SpecData.model_validate(spec)
        origin = self.data.origin
        if origin is None or origin.sha256 != sha256(source):
            raise SpecError(
                f"{op}: the embedded problem source does not match SPEC.origin.sha256 "
                "(import the problem again)"
            )
        self.filename = origin.file
        self.plan = Plan.model_validate(plan)
        self.n_inputs = len(self.plan.inputs)
        self._namespaces: dict[tuple, dict[str, Any]] = {}
        self._templates: dict[tuple, tuple[torch.nn.Module, dict[str, torch.Tensor]]] = {}
        self._costs: dict[tuple, dict[str, int]] = {}
        self._eager: dict[tuple, tuple[torch.nn.Module, tuple]] = {}
        # forward() swaps the given state into a module shared by every call at one size, and
        # the judge draws several cases' truths at once in threads: unguarded, two cases of one
        # size ran each other's weights (kb1_86: the float64 truth computed on fp32 weights,
        # or wrong at 29834 of 29835 entries).
        self._swap = threading.Lock()
        self._by_shapes: dict[tuple, dict[str, int]] = {}
        for size in [*self.data.sizes, *self.data.bench]:
            self._by_shapes.setdefault(self._key(self.shapes(size)), dict(size.dims))

    # ---- sizes ------------------------------------------------------------------------------

    def shapes(self, size: Size | BenchShape) -> list[list[int] | None]:
        """Each input's shape at this size (None for a scalar), in the order of SPEC.inputs."""
        out: list[list[int] | None] = []
        for item in self.data.inputs:
            if isinstance(item, ScalarInput):
                out.append(None)
            elif item.name in size.shapes:
                out.append(list(size.shapes[item.name]))
            else:
                out.append([resolve_dim(d, size.dims) for d in item.shape])
        return out

    @staticmethod
    def _key(shapes: Sequence[Sequence[int] | None]) -> tuple:
        return tuple(tuple(s) if s is not None else None for s in shapes)

    def dims_of(self, args: Sequence[Any]) -> dict[str, int]:
        """The dims of the size or bench shape whose shapes these arguments have."""
        shapes = [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
        dims = self._by_shapes.get(self._key(shapes))
        if dims is None:
            raise SpecError(
                f"{self.op}: arguments of shapes {shapes} match no size or bench shape of SPEC "
                "(an imported problem runs at the sizes its import made)"
            )
        return dims

    def namespace(self, dims: Mapping[str, int]) -> dict[str, Any]:
        key = tuple(sorted(dims.items()))
        if key not in self._namespaces:
            values_ = overrides(self.plan.constants, dims)
            self._namespaces[key] = execute(self.source, values_, self.filename)
        return self._namespaces[key]

    # ---- the reference ----------------------------------------------------------------------

    def _template(
        self, dims: Mapping[str, int], device: torch.device
    ) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
        """The Model at these dims, whose parameters and buffers every call replaces: on the
        meta device (no memory, no init time), or on `device` where buffers stay inside."""
        key = (tuple(sorted(dims.items())), str(device) if self.plan.internal else "meta")
        if key not in self._templates:
            ns = self.namespace(dims)
            where = device if self.plan.internal else torch.device("meta")
            with seeded(0), torch.no_grad(), torch.device(where):
                model = ns["Model"](*ns["get_init_inputs"]())
            buffers = dict(model.named_buffers())
            self._templates[key] = (model, {k: buffers[k] for k in self.plan.internal})
        return self._templates[key]

    def forward(self, *args: Any) -> Any:
        """The Model's forward on the problem's inputs, with the parameters and buffers given."""
        dims = self.dims_of(args)
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        device = tensors[0].device if tensors else torch.device("cpu")
        state = {p.state: a for p, a in zip(self.plan.params, args[self.n_inputs :], strict=True)}
        floats = [t.dtype for t in tensors if t.is_floating_point()]
        with self._swap:  # the template made (under a seed) and the state swapped, one at a time
            model, internal = self._template(dims, device)
            for key, buf in internal.items():
                dtype = floats[0] if floats and buf.is_floating_point() else buf.dtype
                state[key] = buf.to(device=device, dtype=dtype, copy=True)
            out = torch.func.functional_call(model, state, tuple(args[: self.n_inputs]))
        return tuple(out) if isinstance(out, list) else out

    def eager(self, *args: Any) -> Any:
        """The Model called as its users call it, with the given tensors as its parameters and
        buffers: the peer timed as torch eager, without forward()'s per-call swap of the state
        (functional_call: ~20 us a call on a CPU host, measured). One module per set of
        parameter tensors, kept with them (so no other tensor can take their ids) for the last
        EAGER_MODULES sets: the bench rotates a few input sets."""
        key = tuple(id(a) for a in args[self.n_inputs :])
        hit = self._eager.pop(key, None)
        if hit is None:
            hit = (self._module(args), args[self.n_inputs :])
        self._eager[key] = hit  # the most recent last
        while len(self._eager) > EAGER_MODULES:
            self._eager.pop(next(iter(self._eager)))
        out = hit[0](*args[: self.n_inputs])
        return tuple(out) if isinstance(out, list) else out

    def _module(self, args: Sequence[Any]) -> torch.nn.Module:
        """The Model at the arguments' size holding them as its state (no copy, no init)."""
        dims = self.dims_of(args)
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        device = tensors[0].device if tensors else torch.device("cpu")
        ns = self.namespace(dims)
        with seeded(0), torch.no_grad(), torch.device("meta"):
            model = ns["Model"](*ns["get_init_inputs"]())
        state = {p.state: a for p, a in zip(self.plan.params, args[self.n_inputs :], strict=True)}
        _, internal = self._template(dims, device)
        floats = [t.dtype for t in tensors if t.is_floating_point()]
        for key, buf in internal.items():
            dtype = floats[0] if floats and buf.is_floating_point() else buf.dtype
            state[key] = buf.to(device=device, dtype=dtype, copy=True)
        model.load_state_dict(state, strict=True, assign=True)
        for p in model.parameters():
            p.requires_grad_(False)
        return model

    # ---- the case's values ------------------------------------------------------------------

    def make_inputs(
        self, size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator
    ) -> list[Any]:
        dims = dict(size.dims)
        seed = int(torch.randint(0, 2**62, (1,), generator=gen, device=gen.device))
        ns = self.namespace(dims)
        own: list[Any] = []
        if any(i.draw == "problem" for i in self.plan.inputs):
            with seeded(seed), torch.no_grad():
                own = list(ns["get_inputs"]())
        shapes = self.shapes(size)
        out: list[Any] = []
        for i, (plan, item) in enumerate(zip(self.plan.inputs, self.data.inputs, strict=False)):
            if isinstance(item, ScalarInput):
                out.append(item.value_for(dims))
                continue
            name = dtype if item.dtype == "case" else item.dtype
            want = torch_dtype(name)
            if plan.draw == "problem":
                out.append(own[i].to(want))
                continue
            drawn = values(shapes[i], dist, gen, name)  # type: ignore[arg-type]
            out.append((drawn.abs() if plan.draw == "magnitude" else drawn).to(want))
        if self.plan.params:
            with seeded(seed ^ _PROBLEM_SEED), torch.no_grad():
                model = ns["Model"](*ns["get_init_inputs"]())
            state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
            params = self.data.inputs[self.n_inputs :]
            for p, item in zip(self.plan.params, params, strict=True):
                assert isinstance(item, TensorInput)
                t = state[p.state].detach()
                if p.constant is not None:
                    spread = CONSTANT_SPREAD * max(abs(p.constant), 1.0)
                    t = p.constant + spread * values(list(t.shape), "normal", gen)
                want = torch_dtype(dtype if item.dtype == "case" else item.dtype)
                out.append(t.to(want))
        return out

    # ---- the cost model ---------------------------------------------------------------------

    def cost(self, dims: Mapping[str, int], table: Sequence[Mapping[str, Any]] = ()) -> dict:
        """Bytes of the inputs (the problem's and the parameters) and outputs; flops as torch's
        FlopCounterMode counts them on the reference. From the import's table where it has
        these dims, else measured on the meta device."""
        for row in table:
            if dict(row["dims"]) == dict(dims):
                return {"bytes": int(row["bytes"]), "flops": int(row["flops"])}
        key = tuple(sorted(dims.items()))
        if key not in self._costs:
            self._costs[key] = cost_of(measure(self.namespace(dims)), self.plan)
        return self._costs[key]


def cost_of(m: Measured, plan: Plan) -> dict[str, int]:
    taken = {p.state for p in plan.params}
    moved = sum(_nbytes(t) for t in m.inputs) + sum(_nbytes(t) for t in m.outputs)
    moved += sum(_nbytes(t) for k, t in m.state.items() if k in taken)
    return {"bytes": moved, "flops": m.flops}
