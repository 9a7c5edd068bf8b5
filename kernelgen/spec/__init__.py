"""The operator contract: load references/<op>.py and seeds/<op>.py and validate them.

A reference module holds
- a function named like the operator, in plain PyTorch: the ground truth;
- ``SPEC``, a plain dict validated here into :class:`SpecData` (inputs, sizes, dtypes, value
  distributions, benchmark shapes, tolerances);
- ``cost(dims, itemsize) -> {"bytes": int, "flops": int}``: the bytes that must move and the flops
  that must be done for one call, so every timing can be put against the device's limits
  (itemsize is the case dtype's; an input with a dtype of its own counts its own bytes); an
  fp8 matmul adds ``"flops_at": "fp8"``, whose rate is twice bf16's;
- optionally ``make_inputs(size, dtype, dist, generator) -> list`` (size: a correctness Size or
  a BenchShape; the CPU tensors in the order of SPEC.inputs, checked against it) and
  ``compare(out, ref, case) -> str | None`` for operators whose inputs have invariants (routing
  ids, say) or whose outputs are judged by their own rule; a compare with a fourth parameter,
  ``compare(out, ref, case, inputs)``, also gets the call's arguments (indices judged as a set
  need the values they index);
- optionally ``eager(...)``: the operator as a torch user calls it (a fused torch kernel, say),
  the peer that speed is measured against, eager and under torch.compile. The reference is the
  ground truth and may be written for clarity and float64; it is the peer when there is no
  ``eager``.

Correctness cases are the product sizes x dtypes x distributions (a size may narrow the dtypes or
distributions it runs with); a SPEC's `domain` (spec/domain.py) adds cases drawn per run from the
run's seed (spec/draw.py). A tensor input takes the case dtype unless it names its own
(``"dtype": "float32"``: router weights kept in fp32 whatever the activations are; e4m3 operands
with fp32 scales). Each case says whether the CPU interpreter can run it faithfully (no bf16
input, the case's or a fixed one; fp8 inputs are fine: the interpreter's fp8 casts and fp8 dots
are made the GPU's, verify/interpreter.py).
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from kernelgen import paths
from kernelgen.errors import SpecError, UsageError, first_error
from kernelgen.spec.domain import Dist, Domain, DType, Layout, Placement
from kernelgen.spec.limits import Limit
from kernelgen.spec.limits import check as check_limits
from kernelgen.spec.origin import Origin
from kernelgen.spec.routes import Route

TensorDType = Literal[
    "case", "float32", "float16", "bfloat16", "float8_e4m3fn", "int32", "int64", "bool"
]
# Index and mask inputs (routing ids, block tables, lengths): their values carry invariants only
# the operator knows, so the reference draws them itself.
INTEGER_DTYPES: frozenset[str] = frozenset({"int32", "int64", "bool"})

# (rtol, atol) per dtype: torch.testing's defaults.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1.3e-6, 1e-5),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}
# Triton's interpreter multiplies bf16 bit patterns: its bf16 arithmetic is wrong, so a bf16 case
# run there would judge the interpreter, not the kernel.
INTERPRETER_DTYPES: frozenset[str] = frozenset({"float32", "float16"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TensorInput(_Strict):
    kind: Literal["tensor"] = Field("tensor", description="a tensor argument (may be left out)")
    name: str = Field(description="the reference's parameter name, in the order of its signature")
    shape: list[str | int] = Field(
        description="one entry per dim: a dim name of the size's dims, `k*name`, `name/q` "
        "(ceil(dim / q) blocks), or a literal int"
    )
    dtype: TensorDType = Field(
        "case",
        description="`case`: the case's dtype; any other keeps this dtype in every case (fp32 "
        "router weights, e4m3 operands); integer and bool inputs need the reference's own "
        "make_inputs",
    )
    dist: Dist | None = Field(
        None, description="this input's value distribution, in place of the case's"
    )
    offset: float = Field(0.0, description="added to every value (a norm weight around 1, say)")
    layout_varies: bool = Field(
        True,
        description="a size's `layout` (strided, transposed) applies to this input; False keeps "
        "it contiguous (weights, caches, index tables)",
    )


class ScalarInput(_Strict):
    kind: Literal["scalar"] = Field(
        "scalar",
        description="a Python number passed as is (eps, a scale, k); write it in SPEC, where "
        "an input without `kind` is a tensor",
    )
    name: str = Field(description="the reference's parameter name, in the order of its signature")
    value: float | int | bool | None = Field(
        None, description="benchmarks use it; correctness cases too, unless `draw` is given"
    )
    dim: str | None = Field(
        None,
        description="instead of a value: the int that this dim of each size and bench shape "
        "has (topk's k, a count that shapes the output and so must vary with the size)",
    )
    draw: tuple[float, float] | None = Field(
        None,
        description="(lo, hi): correctness cases draw the value log-uniformly from it, per seed, "
        "so a kernel that hard-codes `value` fails",
    )

    @field_validator("draw")
    @classmethod
    def _log_uniform_range(
        cls, draw: tuple[float, float] | None, info: ValidationInfo
    ) -> tuple[float, float] | None:
        if draw is None:
            return draw
        value = info.data.get("value")
        if not isinstance(value, float):
            raise ValueError(f"only a float scalar can be drawn, value is {value!r}")
        lo, hi = draw
        if not (0 < lo < hi < math.inf):
            raise ValueError(f"a log-uniform range needs 0 < lo < hi (finite), got ({lo}, {hi})")
        return draw

    @model_validator(mode="after")
    def _value_or_dim(self) -> ScalarInput:
        if (self.value is None) == (self.dim is None):
            raise ValueError(f"scalar {self.name!r}: give either value or dim, not both or neither")
        return self

    def value_for(self, dims: dict[str, int]) -> float | int | bool:
        """The argument for a size or bench shape of these dims (a draw aside)."""
        return dims[self.dim] if self.dim is not None else self.value  # type: ignore[return-value]


def _input_kind(item: Any) -> str:
    """Tensors may leave `kind` out; tagging by it makes errors name the member that was meant."""
    if isinstance(item, dict):
        return str(item.get("kind", "tensor"))
    return str(getattr(item, "kind", "tensor"))


Input = Annotated[
    Annotated[TensorInput, Tag("tensor")] | Annotated[ScalarInput, Tag("scalar")],
    Discriminator(
        _input_kind,
        custom_error_type="input_kind",
        custom_error_message="kind: expected 'tensor' (the default) or 'scalar'",
    ),
]


class Size(_Strict):
    name: str = Field(description="unique among the sizes; names the case (`odd/float32/wide`)")
    dims: dict[str, int] = Field(
        description="a value for every dim name that the inputs' shapes, `reduction` and "
        "`bucket` use"
    )
    shapes: dict[str, list[int]] = Field(
        default_factory=dict,
        description="per-input literal shape overriding its `shape` (another rank: a 1-D or "
        "3-D x over the same rows and cols)",
    )
    layout: Layout | Placement = Field(
        "contiguous",
        description="the memory layout of the inputs whose `layout_varies`: a layout, its "
        "numbers (padding, offset) drawn per run, or a placement that fixes them",
    )
    interpreter: bool = Field(
        False,
        description="small enough for Triton's CPU interpreter: its float32 and float16 cases "
        "run on CPU (bf16 never does); GPU-only sizes leave it False",
    )
    dtypes: list[DType] | None = Field(
        None, description="the dtypes this size runs in, in place of SPEC's `dtypes`"
    )
    dists: list[Dist] | None = Field(
        None, description="the distributions this size runs with, in place of SPEC's `dists`"
    )


class BenchShape(_Strict):
    name: str = Field(description="unique among the bench shapes; names its timings")
    dims: dict[str, int] = Field(description="a value for every dim name, as a size's")
    shapes: dict[str, list[int]] = Field(
        default_factory=dict, description="per-input literal shape overriding its `shape`"
    )
    dtype: DType = Field("bfloat16", description="the dtype it is timed in")
    was: list[str] = Field(
        default_factory=list,
        description="names it was timed under before it was renamed: records that name it so "
        "(dispatch rows, a run's worst shape) still find it",
    )


class Tolerance(_Strict):
    rtol: float = Field(description="relative tolerance against the float64 ground truth")
    atol: float = Field(
        description="absolute tolerance; with a `reduction` dim, times max(1, log2 of its length)"
    )

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(rtol=self.rtol * factor, atol=self.atol * factor)


class SpecData(_Strict):
    inputs: list[Input] = Field(
        description="the reference's parameters in order: tensors, and scalars with "
        '`kind: "scalar"`'
    )
    dtypes: list[DType] = Field(description="the case dtypes every size runs in by default")
    dists: list[Dist] = Field(
        min_length=2, description="the value distributions every size runs with by default"
    )
    sizes: list[Size] = Field(
        min_length=1, description="correctness sizes; cases are sizes x dtypes x dists"
    )
    bench: list[BenchShape] = Field(
        min_length=1, description="the shapes a candidate is timed at (CUDA)"
    )
    reduction: str | None = Field(
        None, description="the dim summed over: atol grows with log2 of its length"
    )
    bucket: list[str] = Field(
        default_factory=list,
        description="dims that key tuned configs and dispatch rows, each rounded up to a power "
        "of two (`TUNED` keys like `16x32768`)",
    )
    tolerances: dict[DType, Tolerance] = Field(
        default_factory=dict,
        description="per-dtype (rtol, atol) where torch.testing's defaults do not fit",
    )
    error_ratio: float = Field(
        2.0, gt=1.0, description="max candidate error / torch's error in the same dtype"
    )
    launcher_casts: bool = Field(
        False,
        description="the launcher may change dtypes (.to, copy_ from another dtype); by default "
        "a cast is arithmetic outside the kernel",
    )
    routes: list[Route] = Field(
        default_factory=list,
        description="the torch functions kernelgen_ops.enable() may send to the kernel, and how "
        "their arguments map onto the kernel's (kernelgen/spec/routes.py)",
    )
    domain: Domain | None = Field(
        None,
        description="the domain the inputs come from: each run draws cases from it on top of "
        "`sizes`, reproducibly from the run's seed (kernelgen/spec/domain.py)",
    )
    limits: list[Limit] = Field(
        default_factory=list,
        description="sizes where index arithmetic breaks (an input of 2^31 elements or more, "
        "65536 rows or more), each one case on the GPU, checked on sampled rows "
        "(kernelgen/spec/limits.py)",
    )
    origin: Origin | None = Field(
        None,
        description="an imported operator's source (a KernelBench problem): its file, sha256, "
        "level and number; None for an operator written here (kernelgen/spec/origin.py)",
    )

    @model_validator(mode="after")
    def _dims_resolve(self) -> SpecData:
        names = [i.name for i in self.inputs]
        if len(set(names)) != len(names):
            raise ValueError(f"inputs: duplicate names in {names}")
        tensors = [i for i in self.inputs if isinstance(i, TensorInput)]
        if not tensors:
            raise ValueError("inputs: at least one tensor input is needed")
        for group, items in (("sizes", self.sizes), ("bench", self.bench)):
            seen: set[str] = set()
            for item in items:
                # A former name is a name still: two shapes under one would split a record.
                for name in (item.name, *getattr(item, "was", ())):
                    if name in seen:
                        raise ValueError(f"{group}: duplicate name {name!r}")
                    seen.add(name)
                for t in tensors:
                    if t.name in item.shapes:
                        continue
                    for d in t.shape:
                        if isinstance(d, str) and _dim_name(d) not in item.dims:
                            raise ValueError(
                                f"{group}.{item.name}: input {t.name!r} needs dim {d!r}, "
                                f"dims are {sorted(item.dims)}"
                            )
                for key in item.shapes:
                    if key not in names:
                        raise ValueError(f"{group}.{item.name}.shapes: no input named {key!r}")
                for s in self.inputs:
                    if isinstance(s, ScalarInput) and s.dim and s.dim not in item.dims:
                        raise ValueError(
                            f"{group}.{item.name}: scalar {s.name!r} is dim {s.dim!r}, "
                            f"dims are {sorted(item.dims)}"
                        )
                for d in (self.reduction, *self.bucket):
                    if d is not None and d not in item.dims:
                        raise ValueError(f"{group}.{item.name}: dims lack {d!r}")
        needed = {_dim_name(d) for t in tensors for d in t.shape if isinstance(d, str)}
        needed |= {s.dim for s in self.inputs if isinstance(s, ScalarInput) and s.dim}
        needed |= {d for d in (self.reduction, *self.bucket) if d is not None}
        if self.domain is not None:
            try:
                self.domain.fits(needed, list(self.dtypes))
            except ValueError as e:
                raise ValueError(f"domain.{e}") from None
        check_limits(self.limits, tensors, needed, self.dtypes, resolve_dim)
        return self

    def bench_named(self, name: str) -> BenchShape | None:
        """The bench shape a record names: by its name, or by one it was timed under before."""
        return next((b for b in self.bench if name == b.name or name in b.was), None)


class Case(_Strict):
    """One correctness case: a size in one dtype with one value distribution."""

    name: str = Field(description="`size/dtype/dist`")
    size: Size = Field(description="the size it was made from (`case.size.layout`, ...)")
    dtype: DType = Field(description="the case dtype")
    dist: Dist = Field(description="the value distribution")
    fixed_dtypes: tuple[DType, ...] = Field(
        (), description="float dtypes of the inputs that keep their own (not the case's)"
    )
    drawn: bool = Field(
        False,
        description="drawn from SPEC.domain for this run's seed; its name says it in full: "
        "dims, each varying input's shape, strides and offset, dtype, distribution",
    )
    limit: str | None = Field(
        None,
        description="a limit case (SPEC.limits), run on CUDA only: the dim whose rows are "
        "sampled, the output checked on those rows against the reference on them alone",
    )

    @property
    def interpreter(self) -> bool:
        """Whether Triton's CPU interpreter can run this case faithfully: every float input in
        a dtype it computes right, the case's and any an input fixes for itself."""
        return self.size.interpreter and all(
            d in INTERPRETER_DTYPES for d in (self.dtype, *self.fixed_dtypes)
        )

    @property
    def dims(self) -> dict[str, int]:
        return self.size.dims


# The tensor-core precision a cost's flops run at (the roofline's compute ceiling follows it).
Precision = Literal["bf16", "fp8"]


class Cost(_Strict):
    bytes: int = Field(ge=0, description="the bytes one call must move, at the least")
    flops: int = Field(ge=0, description="the flops one call must do")
    flops_at: Precision = Field(
        "bf16", description="the tensor-core precision the flops run at (fp8: twice bf16's rate)"
    )


class OpSpec:
    """A validated operator: reference function, spec data, cost model, optional hooks."""

    def __init__(self, name: str, path: Path, module: ModuleType, data: SpecData):
        self.name = name
        self.path = path
        self.module = module
        self.data = data
        self.reference: Callable[..., Any] = getattr(module, name)
        self._cost: Callable[[dict[str, int], int], dict[str, int]] = module.cost
        self.make_inputs: Callable[..., list[Any]] | None = getattr(module, "make_inputs", None)
        self.compare: Callable[..., str | None] | None = getattr(module, "compare", None)
        # Asked once: the judge compares every call of every case.
        self._compare_takes_inputs = (
            self.compare is not None and len(inspect.signature(self.compare).parameters) >= 4
        )
        self.eager: Callable[..., Any] = getattr(module, "eager", None) or self.reference

    def judge(self, out: Any, ref: Any, case: Case | BenchShape, inputs: list[Any]) -> str | None:
        """The reference's own compare, given the call's arguments where it takes them."""
        assert self.compare is not None
        if self._compare_takes_inputs:
            return self.compare(out, ref, case, inputs)
        return self.compare(out, ref, case)

    @property
    def arg_names(self) -> list[str]:
        return [i.name for i in self.data.inputs]

    @cached_property
    def cases(self) -> list[Case]:
        # An input with a dtype of its own (router_gemm's fp32 weights) keeps it in every case;
        # the case dtype drives the others.
        fixed = sorted(
            {
                i.dtype
                for i in self.data.inputs
                if isinstance(i, TensorInput) and i.dtype in DEFAULT_TOLERANCES
            }
        )
        out = []
        for size in self.data.sizes:
            for dtype in size.dtypes or self.data.dtypes:
                for dist in size.dists or self.data.dists:
                    out.append(
                        Case(
                            name=f"{size.name}/{dtype}/{dist}",
                            size=size,
                            dtype=dtype,
                            dist=dist,
                            fixed_dtypes=tuple(fixed),
                        )
                    )
        return out

    def tolerance(self, dtype: str, dims: dict[str, int]) -> Tolerance:
        """Per-dtype tolerance; atol grows with log2 of the reduction length (summation error)."""
        base = self.data.tolerances.get(dtype)  # type: ignore[call-overload]
        rtol, atol = (base.rtol, base.atol) if base else DEFAULT_TOLERANCES[dtype]
        if self.data.reduction:
            atol *= max(1.0, math.log2(max(1, dims[self.data.reduction])))
        return Tolerance(rtol=rtol, atol=atol)

    def cost(self, dims: dict[str, int], dtype: str) -> Cost:
        itemsize = {"float32": 4, "float16": 2, "bfloat16": 2}[dtype]
        raw = self._cost(dict(dims), itemsize)
        try:
            return Cost.model_validate(raw)
        except ValidationError as e:
            raise SpecError(f"{self.path}: cost({dims}) returned {raw!r}: {_first(e)}") from None

    def bucket_key(self, dims: dict[str, int]) -> str:
        """Tuned-config key: each bucket dim rounded up to a power of two, joined by 'x'."""
        return "x".join(str(_next_pow2(dims[d])) for d in self.data.bucket)


def _dim_name(expr: str) -> str:
    return expr.split("*")[-1].split("/")[0].strip()


def resolve_dim(expr: str | int, dims: dict[str, int]) -> int:
    """A shape entry: an int, a dim name, `k*name` (silu_and_mul's input is `2*d` wide), or
    `name/q`: the q-wide blocks that cover the dim, ceil(dim / q) (fp8_gemm's scales, one per
    128 entries, a partial last block included)."""
    if isinstance(expr, int):
        return expr
    factor, _, rest = expr.rpartition("*")
    name, _, block = rest.partition("/")
    n = (int(factor) if factor else 1) * dims[name.strip()]
    return -(-n // int(block)) if block else n


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _first(e: ValidationError) -> str:
    return first_error(e)


def load_module(path: Path, name: str) -> ModuleType:
    """Import a file as a fresh module (not cached in sys.modules under a shared name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise SpecError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # a broken spec file must surface as one line, not a traceback
        raise SpecError(f"{path}: import failed: {type(e).__name__}: {e}") from None
    return module


def known_ops() -> list[str]:
    return sorted(p.stem for p in paths.references_dir().glob("*.py") if not p.stem.startswith("_"))


def reference_path(op: str) -> Path:
    return paths.references_dir() / f"{op}.py"


def seed_path(op: str) -> Path:
    return paths.seeds_dir() / f"{op}.py"


def has_seed(op: str) -> bool:
    """Whether seeds/<op>.py exists. An imported problem may start without one: torch eager (its
    reference) is then the baseline, and the first accepted candidate its first best."""
    return seed_path(op).is_file()


def load_spec(op: str) -> OpSpec:
    path = reference_path(op)
    if not path.is_file():
        raise UsageError(f"unknown operator {op!r}; known: {', '.join(known_ops()) or 'none'}")
    module = load_module(path, f"kernelgen_reference_{op}")
    fn = getattr(module, op, None)
    if not callable(fn):
        raise SpecError(
            f"{path}: no function named {op!r} (the reference must be named like the op)"
        )
    raw = getattr(module, "SPEC", None)
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: SPEC: expected a dict, found {type(raw).__name__}")
    try:
        data = SpecData.model_validate(raw)
    except ValidationError as e:
        raise SpecError(f"{path}: SPEC.{_first(e)}") from None
    if not callable(getattr(module, "make_inputs", None)):
        for i in data.inputs:
            if isinstance(i, TensorInput) and i.dtype in INTEGER_DTYPES:
                raise SpecError(
                    f"{path}: SPEC.inputs.{i.name}: {i.dtype} values need the reference's own "
                    "make_inputs(size, dtype, dist, generator); the default draws floats only"
                )
    if not callable(getattr(module, "cost", None)):
        raise SpecError(f"{path}: cost: expected a function cost(dims, itemsize) -> dict")
    params = list(inspect.signature(fn).parameters)
    names = [i.name for i in data.inputs]
    if params != names:
        raise SpecError(f"{path}: {op}{tuple(params)} does not match SPEC.inputs {tuple(names)}")
    return OpSpec(op, path, module, data)


def check_signature(fn: Callable[..., Any], spec: OpSpec, where: str) -> None:
    """A candidate's entry point must take the reference's parameters, in order."""
    params = list(inspect.signature(fn).parameters.values())
    names = [p.name for p in params]
    if names[: len(spec.arg_names)] != spec.arg_names:
        raise SpecError(
            f"{where}: {spec.name}({', '.join(names)}) must take the reference's parameters "
            f"({', '.join(spec.arg_names)})"
        )
    extra = [p.name for p in params[len(spec.arg_names) :] if p.default is inspect.Parameter.empty]
    if extra:
        raise SpecError(f"{where}: extra parameters without defaults: {', '.join(extra)}")
