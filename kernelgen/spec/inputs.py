"""Seeded inputs for a correctness case or a benchmark shape.

A correctness case the interpreter runs is drawn on the CPU from a torch.Generator, then moved,
so one seed gives the same inputs on every device. A GPU-only case (a size not marked
`interpreter`) and a benchmark shape are drawn on the device they are for, since no other device
runs them: torch draws normal values on the CPU in one thread, about 50 M a second, so a GPU-only
case of 10^9 values would cost a cold verdict 20 s a variant, where the GPU takes milliseconds
(decode_attn's 40 CUDA cases took 17 s a variant on a 2-core host); on the CPU, the large bench
shapes' draws were most of a bench. A GPU's draw of a
seed is the same on GPUs of one SM count (torch's CUDA generator spreads a tensor over a grid
sized by it): an H100 SXM's and an H200's, 132 each.
Never zeros: they hide unwritten outputs and run faster than real data. A scalar with a draw
range is drawn from the same generator for correctness cases (a fresh value each run) and takes
its `value` for benchmark shapes.

An operator whose inputs have invariants (routing ids distinct per row, say) brings its own maker
(`make_inputs` in its reference module); `values` and `lay_out` are there for it to draw its
float tensors the way every other operator's are drawn, and its factories (arange, full,
randperm) make their tensors on the generator's device. What it returns is checked against
SPEC.inputs (count, shapes, dtypes), so a maker cannot drift from the contract it declares.

A case drawn from SPEC.domain (spec/draw.py) comes the same way: its distribution may be one of
the families a centred draw never shows (a late spike, all-negative, sorted, constant or tied
rows, large values, subnormals), and its size's layout is a Placement, whose numbers (padding,
the leading slice, the offset) are fixed where a fixed size's layout draws them per case.
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
    Placement,
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


def values(
    shape: list[int], dist: str, gen: torch.Generator, dtype: str | None = None
) -> torch.Tensor:
    """float64 values of one distribution (spec.Dist), drawn from `gen`. `dtype`, the one they
    will be cast to, sets the range of `large` and `denormal` (float32's when None)."""
    if dist == "uniform":
        return torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    if dist in _ROWS:
        if x.numel() == 0 or x.dim() == 0:
            return x
        return _ROWS[dist](x.reshape(-1, x.shape[-1]), gen, dtype or "float32").reshape(shape)
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


# The families drawn per row: each takes the normal draw as rows [n_rows, width] (float64), the
# generator and the target dtype. They are what centred i.i.d. values never show a kernel.

# `large`: magnitudes 2^lo..2^hi with random signs. fp16's stay finite (< 65504) while their
# squares overflow it; the others' pass exp()'s overflow by far while a row's sum of squares
# stays finite in fp32.
_LARGE_EXP = {"float16": (8.0, 12.0)}
_LARGE_EXP_ELSE = (20.0, 40.0)
# `denormal`: binary exponents of the dtype's subnormals (smallest, smallest normal).
_SUBNORMAL_EXP = {"float16": (-24.0, -14.0), "bfloat16": (-133.0, -126.0)}
_SUBNORMAL_EXP_ELSE = (-149.0, -126.0)
# `spike`: its height, past exp()'s overflow over any row's other values, finite in fp16.
SPIKE = (1024.0, 2048.0)
# `ties`: values rounded to multiples of this (N(0, 1) then spans ~15 levels).
TIE_STEP = 0.5


def _signs(shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    return torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0).double()


def _large(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    lo, hi = _LARGE_EXP.get(dtype, _LARGE_EXP_ELSE)
    u = torch.rand(x.shape, generator=gen, dtype=torch.float64)
    return torch.exp2(lo + (hi - lo) * u) * _signs(x.shape, gen)


def late_positions(width: int, rows: int, gen: torch.Generator) -> torch.Tensor:
    """One position per row in the row's last quarter: past the first block of any kernel whose
    block is at most three quarters of the row (a row within one block has no later block)."""
    late = max(1, width // 4)
    return width - late + torch.randint(0, late, (rows, 1), generator=gen)


def _spike(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    """Normal rows, each with one value of SPIKE's height at a late position: a row max taken
    from the first block only overflows exp() on it."""
    lo, hi = SPIKE
    height = lo + (hi - lo) * torch.rand((x.shape[0], 1), generator=gen, dtype=torch.float64)
    return x.scatter(1, late_positions(x.shape[1], x.shape[0], gen), height)


def _negative(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    """Every value below zero, each row shifted down by 1e-2 to 1e3: a max that starts at 0, not
    -inf, is wrong on them (and underflows exp() on the far ones)."""
    shift = 10 ** (torch.rand((x.shape[0], 1), generator=gen, dtype=torch.float64) * 5 - 2)
    return -(x.abs() + shift)


def _sorted_up(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    return x.sort(dim=-1).values


def _sorted_down(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    return x.sort(dim=-1, descending=True).values


def _constant(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    """Each row one value throughout: every entry ties for the max."""
    return x[:, :1].expand(x.shape).clone()


def _ties(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    return torch.round(x / TIE_STEP) * TIE_STEP


def _denormal(x: torch.Tensor, gen: torch.Generator, dtype: str) -> torch.Tensor:
    """Subnormals of the dtype: every entry of the odd rows, about half of the even rows' (the
    rest normal). A flush to zero moves the outputs by ~1e-38 of a row's scale (GPUs may flush),
    while a kernel that turns a subnormal into NaN or inf is caught."""
    lo, hi = _SUBNORMAL_EXP.get(dtype, _SUBNORMAL_EXP_ELSE)
    u = torch.rand(x.shape, generator=gen, dtype=torch.float64)
    tiny = torch.exp2(lo + (hi - lo) * u) * _signs(x.shape, gen)
    pick = torch.rand(x.shape, generator=gen) < 0.5
    pick[1::2] = True
    return torch.where(pick, tiny, x)


_ROWS = {
    "large": _large,
    "spike": _spike,
    "negative": _negative,
    "sorted_up": _sorted_up,
    "sorted_down": _sorted_down,
    "constant": _constant,
    "ties": _ties,
    "denormal": _denormal,
}


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


def lay_out(x: torch.Tensor, layout: str | Placement, gen: torch.Generator) -> torch.Tensor:
    """Same values, another memory layout (spec.Layout). A layout's numbers (padding, the
    leading slice, the offset) are drawn from `gen` unless a Placement fixes them, as a drawn
    case's does."""
    if isinstance(layout, str):
        if layout == "contiguous" or x.dim() == 0:
            return x
        layout = _draw_placement(x, layout, gen)
    return place(x, layout)


def _draw_placement(x: torch.Tensor, kind: str, gen: torch.Generator) -> Placement:
    def draw(n: int) -> int:
        return int(torch.randint(0, n, (1,), generator=gen))

    if kind == "strided":
        return Placement(kind="strided", pad=3 + draw(13))
    if kind == "leading":
        pad = 1 + draw(2 * x.shape[_sliced(x)])
        return Placement(kind="leading", pad=pad, start=draw(pad + 1))
    if kind == "offset":
        return Placement(kind="offset", offset=1 + draw(37))
    return Placement(kind=kind)  # type: ignore[arg-type]


def _sliced(x: torch.Tensor) -> int:
    """The dim a leading view slices: the heads of [tokens, heads, dim], the columns of 2-D."""
    return -2 if x.dim() >= 3 else -1


def place(x: torch.Tensor, p: Placement) -> torch.Tensor:
    """`x`'s values in the layout `p` fixes. Storage outside the view (padding, the other heads,
    the elements before an offset) holds NaN, so a kernel that reads it shows."""
    if p.kind == "contiguous" or x.dim() == 0:
        return x
    if p.kind == "strided":
        big = _nans((*x.shape[:-1], x.shape[-1] + p.pad), x)
        big[..., : x.shape[-1]] = x
        return big[..., : x.shape[-1]]
    if p.kind == "transposed":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2) if x.dim() >= 2 else x
    if p.kind == "leading":
        d = _sliced(x)
        shape = list(x.shape)
        shape[d] += p.pad
        view = _nans(shape, x).narrow(d, p.start, x.shape[d])
        view.copy_(x)
        return view
    if p.kind == "offset":
        flat = _nans((x.numel() + p.offset,), x)
        flat[p.offset :] = x.reshape(-1)
        return flat[p.offset :].view(x.shape)
    if p.kind == "expanded":
        # The first leading dim of more than one entry broadcast (stride 0): one slice's storage
        # read for all of them, as torch's expand() gives.
        d = next((i for i, n in enumerate(x.shape[:-1]) if n > 1), None)
        return x if d is None else x.narrow(d, 0, 1).clone().expand(x.shape)
    raise ValueError(f"unknown layout {p.kind!r}")


def _nans(shape: tuple[int, ...] | list[int], like: torch.Tensor) -> torch.Tensor:
    return torch.full(shape, float("nan"), dtype=like.dtype, device=like.device)


def drawn_on(size: Size | BenchShape, device: str) -> str:
    """Where a size's values are drawn for `device`: on the CPU where the interpreter runs it
    (the same values on every device), else on `device`."""
    return "cpu" if isinstance(size, Size) and size.interpreter else device


def make_inputs(
    spec: OpSpec,
    size: Size | BenchShape,
    dtype: str,
    dist: str,
    seed: int,
    device: str,
) -> list[Any]:
    """Positional arguments for the operator, in the order of SPEC.inputs, drawn where
    `drawn_on` says and made on `device`."""
    where = drawn_on(size, device)
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
        drawn = values(shape, item.dist or dist, gen, name) + item.offset
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
