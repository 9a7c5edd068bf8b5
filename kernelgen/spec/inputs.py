"""Seeded inputs for a correctness case or a benchmark shape.

A correctness case's values are drawn on the CPU from a torch.Generator, then moved, so one seed
gives the same inputs on every device. A benchmark shape's are drawn on the device they are for
(no other device compares with them): on the CPU, the large shapes' draws were most of a bench.
Never zeros: they hide unwritten outputs and run faster than real data. A scalar with a draw
range is drawn from the same generator for correctness cases (a fresh value each run) and takes
its `value` for benchmark shapes.

An operator whose inputs have invariants (routing ids distinct per row, say) brings its own maker
(`make_inputs` in its reference module); `values` and `lay_out` are there for it to draw its
float tensors the way every other operator's are drawn, and its factories (arange, full,
randperm) make their tensors on the generator's device. What it returns is checked against
SPEC.inputs (count, shapes, dtypes), so a maker cannot drift from the contract it declares.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import torch

from kernelgen.errors import SpecError
from kernelgen.spec import (
    INTEGER_DTYPES,
    BenchShape,
    Case,
    OpSpec,
    ScalarInput,
    Size,
    TensorInput,
    resolve_dim,
)

_DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}


def torch_dtype(name: str) -> torch.dtype:
    return _DTYPES[name]


def case_seed(base: int, name: str) -> int:
    """A per-case seed derived from the run's base seed (stable across processes)."""
    digest = hashlib.sha256(f"{base}:{name}".encode()).digest()
    return int.from_bytes(digest[:7], "little")


def values(shape: list[int], dist: str, gen: torch.Generator) -> torch.Tensor:
    """float64 values of one distribution (spec.Dist), drawn from `gen`."""
    if dist == "uniform":
        return torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    if dist == "wide":
        return x * 40
    if dist == "small":
        return x * 1e-3
    if dist == "specials":
        return _specials(x, gen)
    if dist == "neg_inf" and x.numel() and shape[-1] > 1:
        # About a tenth of the entries at -inf, but every row keeps one finite entry, so the
        # reference stays finite and the case tests masking, not NaN conventions.
        mask = torch.rand(shape, generator=gen) < 0.1
        keep = torch.randint(0, shape[-1], (*shape[:-1], 1), generator=gen)
        mask.scatter_(-1, keep, False)
        x = x.masked_fill(mask, float("-inf"))
    return x


def _specials(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A few NaN, +inf and -inf at drawn positions; with more than 2 rows (rank >= 2), one row
    entirely -inf and one other row holding a NaN. Few enough that most rows stay finite, since
    in a reduction one NaN or inf poisons its whole row."""
    n = x.numel()
    if n == 0:
        return x
    width = x.shape[-1] if x.dim() else 1
    flat = x.view(-1)
    all_inf, nan_at = None, None
    if x.dim() >= 2 and n // width > 2:
        all_inf, nan_row = torch.randperm(n // width, generator=gen)[:2].tolist()
        nan_at = nan_row * width + int(torch.randint(0, width, (1,), generator=gen))
    # Sprinkled outside the all -inf row, so it cannot swallow them.
    room = n - width if all_inf is not None else n
    few = 1 + n // 32768

    def draw() -> torch.Tensor:
        pos = torch.randint(0, room, (3, few), generator=gen)
        return pos if all_inf is None else pos + width * (pos >= all_inf * width)

    pos = draw()
    # The first NaN, +inf and -inf each get a place of their own: all three are there.
    need = 3 if nan_at is None else 4
    while room >= need and len({*pos[:, 0].tolist()} - {nan_at}) < 3:
        pos = draw()
    for special, where in zip((math.nan, math.inf, -math.inf), pos, strict=True):
        flat[where] = special
    for special, where in zip((math.nan, math.inf, -math.inf), pos[:, 0].tolist(), strict=True):
        flat[where] = special
    if all_inf is not None and nan_at is not None:
        x.view(-1, width)[all_inf] = -math.inf
        flat[nan_at] = math.nan
    return x


# Above this many elements `large_values` draws normal and uniform values in fp32, not float64:
# the attention operators' bench KV caches hold up to 2.6e8 (decode_attn's 1x128K+31x4K), which
# `values` took seconds a draw to make on a CPU. Their 16-bit inputs lose nothing by it.
FP32_DRAW_ABOVE = 1 << 24


def large_values(shape: list[int], dist: str, gen: torch.Generator) -> torch.Tensor:
    """`values`, in fp32 for a normal or uniform draw of more than FP32_DRAW_ABOVE elements."""
    if math.prod(shape) > FP32_DRAW_ABOVE and dist in ("normal", "uniform"):
        if dist == "normal":
            return torch.randn(shape, generator=gen)
        return torch.rand(shape, generator=gen) * 2 - 1
    return values(shape, dist, gen)


def spec_scalar(entry: dict[str, Any], size: Size | BenchShape, gen: torch.Generator) -> Any:
    """A scalar of a reference's SPEC drawn as kernelgen draws it (log-uniform in its range for a
    case, its value for a bench shape): for the references that make their own inputs."""
    return _scalar(ScalarInput.model_validate(entry), size, gen)


def _scalar(item: ScalarInput, size: Size | BenchShape, gen: torch.Generator) -> Any:
    """Log-uniform in the draw range for a correctness case; `value` (or the size's dim) for a
    benchmark shape."""
    if item.draw is None or not isinstance(size, Size):
        return item.value_for(size.dims)
    lo, hi = item.draw
    u = float(torch.rand((), generator=gen, dtype=torch.float64))
    return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))


def _resolve(t: TensorInput, size: Size | BenchShape) -> list[int]:
    if t.name in size.shapes:
        return list(size.shapes[t.name])
    return [resolve_dim(d, size.dims) for d in t.shape]


def lay_out(x: torch.Tensor, layout: str, gen: torch.Generator) -> torch.Tensor:
    """Same values, another memory layout: padded rows (strided) or column-major (transposed)."""
    if layout == "contiguous" or x.dim() == 0:
        return x
    if layout == "strided":
        pad = 3 + int(torch.randint(0, 13, (1,), generator=gen))
        big = torch.full(
            (*x.shape[:-1], x.shape[-1] + pad), float("nan"), dtype=x.dtype, device=x.device
        )
        big[..., : x.shape[-1]] = x
        return big[..., : x.shape[-1]]
    if layout == "transposed" and x.dim() >= 2:
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x


def make_inputs(
    spec: OpSpec,
    size: Size | BenchShape,
    dtype: str,
    dist: str,
    seed: int,
    device: str,
) -> list[Any]:
    """Positional arguments for the operator, in the order of SPEC.inputs."""
    where = device if isinstance(size, BenchShape) else "cpu"
    gen = torch.Generator(where).manual_seed(seed)
    if where == "cpu":
        return _made(spec, size, dtype, dist, gen, device)
    with torch.device(where):  # a maker's factories follow the draw onto the device
        return _made(spec, size, dtype, dist, gen, device)


def _made(
    spec: OpSpec, size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator, device: str
) -> list[Any]:
    if spec.make_inputs is not None:
        args = spec.make_inputs(size, dtype, dist, gen)
        _check_made(spec, size, dtype, args)
        return [a.to(device) if isinstance(a, torch.Tensor) else a for a in args]
    layout = size.layout if isinstance(size, Size) else "contiguous"
    args: list[Any] = []
    for item in spec.data.inputs:
        if isinstance(item, ScalarInput):
            args.append(_scalar(item, size, gen))
            continue
        shape = _resolve(item, size)
        name = dtype if item.dtype == "case" else item.dtype
        if name in INTEGER_DTYPES:
            raise SpecError(
                f"{spec.path}: input {item.name!r} is {name}; define make_inputs() for it"
            )
        drawn = values(shape, item.dist or dist, gen) + item.offset
        # Lay out on the target device: .to() makes a padded (non-dense) view contiguous.
        x = drawn.to(torch_dtype(name)).to(device)
        if item.layout_varies:
            x = lay_out(x, layout, gen)
        args.append(x)
    return args


def _check_made(spec: OpSpec, size: Size | BenchShape, dtype: str, args: list[Any]) -> None:
    """A reference's own maker returns what SPEC.inputs declares: one argument per input, each
    tensor of its declared shape and dtype (the case's, or its own)."""
    where = f"{spec.path}: make_inputs({size.name!r}, {dtype!r})"
    if not isinstance(args, (list, tuple)) or len(args) != len(spec.data.inputs):
        got = len(args) if isinstance(args, (list, tuple)) else type(args).__name__
        raise SpecError(f"{where}: returned {got}, expected a list of {len(spec.data.inputs)}")
    for item, a in zip(spec.data.inputs, args, strict=True):
        if isinstance(item, ScalarInput):
            if isinstance(a, torch.Tensor):
                raise SpecError(f"{where}: {item.name!r} is a scalar input, got a tensor")
            continue
        want = torch_dtype(dtype if item.dtype == "case" else item.dtype)
        shape = _resolve(item, size)
        if not isinstance(a, torch.Tensor) or a.dtype != want or list(a.shape) != shape:
            got = f"{a.dtype} {list(a.shape)}" if isinstance(a, torch.Tensor) else repr(a)
            raise SpecError(f"{where}: {item.name!r} is {got}, expected {want} {shape}")


def case_inputs(spec: OpSpec, case: Case, seed: int, device: str) -> list[Any]:
    return make_inputs(spec, case.size, case.dtype, case.dist, seed, device)
