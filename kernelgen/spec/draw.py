"""A run's drawn cases: sizes, layouts, dtypes and value distributions drawn from SPEC.domain on
top of the fixed sizes, reproducibly from the run's seed.

The same (operator, seed, device) always gives the same cases, so a failure on a drawn case is
reproduced by judging again with that seed (`kernelgen verify OP FILE --seed S`); its name says
the case in full. Each dim is drawn as one of the sizes that break kernels (KINDS), each in turn
over a run's draws, and so are the layouts, dtypes and distributions. A CPU draw stays within
the domain's CPU caps, so the interpreter runs it in about the time of a fixed case, and in the
dtypes the interpreter computes right.

Operators with invariants between their dims draw within them: a dim in whole blocks (K in
groups of 128, Hq in groups of Hkv) is drawn as a count of blocks, of the kinds above; a dim
that others fix (a table's width from the lengths) comes from the reference's `derive_dims`; a
dim no shape uses (a routing mode) is drawn like the others for the reference's maker to read.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import torch

from kernelgen.errors import SpecError
from kernelgen.spec import (
    DEFAULT_TOLERANCES,
    INTERPRETER_DTYPES,
    Case,
    Domain,
    OpSpec,
    Placement,
    Size,
    TensorInput,
    resolve_dim,
)
from kernelgen.spec.inputs import case_seed, place

# The kinds of size that break kernels: a single element, primes and other non-powers of two
# (no block size divides them), powers of two (a kernel that drops its mask there) and one off
# them (a block boundary, either side), the bench shapes' values and their neighbours (where a
# tuned path is taken), the largest the domain allows, and any value between.
KINDS = (
    "one",
    "prime",
    "odd",
    "pow2",
    "pow2_minus_1",
    "pow2_plus_1",
    "bench",
    "bench_near",
    "largest",
    "any",
)
# A leading view needs at least 2 x 2 rows: tokens above the sliced heads, heads to slice.
LEADING_ROWS = 4

T = TypeVar("T")


class Deck(Generic[T]):
    """Items dealt in a shuffled order, reshuffled when all are dealt: a run's draws cover the
    list evenly rather than by luck."""

    def __init__(self, items: Sequence[T], rng: random.Random):
        self.items, self.rng, self.left = list(items), rng, list[T]()

    def deal(self) -> T:
        if not self.left:
            self.left = self.items[:]
            self.rng.shuffle(self.left)
        return self.left.pop()


def drawn_cases(spec: OpSpec, seed: int, device: str, count: int | None = None) -> list[Case]:
    """The cases a run with this seed draws on this device (`count` of them; by default the
    domain's per-device number). None without a domain."""
    domain = spec.data.domain
    if domain is None:
        return []
    cpu = device != "cuda"
    n = count if count is not None else (domain.draws.cpu if cpu else domain.draws.cuda)
    fixed = tuple(
        sorted(
            {
                i.dtype
                for i in spec.data.inputs
                if isinstance(i, TensorInput) and i.dtype in DEFAULT_TOLERANCES
            }
        )
    )
    dtypes = [d for d in (domain.dtypes or spec.data.dtypes) if not cpu or d in INTERPRETER_DTYPES]
    if cpu and any(d not in INTERPRETER_DTYPES for d in fixed):
        dtypes = []
    if n <= 0 or not dtypes:
        return []
    rng = random.Random(case_seed(seed, f"{spec.name}/drawn/{'cpu' if cpu else 'cuda'}"))
    layouts, dists, types = Deck(domain.layouts, rng), Deck(domain.dists, rng), Deck(dtypes, rng)
    kinds = {name: Deck(KINDS, rng) for name in domain.dims}
    cases = []
    for i in range(n):
        size = _size(spec, domain, f"drawn{i + 1}", layouts.deal(), kinds, rng, cpu)
        dtype, dist = types.deal(), dists.deal()
        cases.append(
            Case(
                name=f"{size.name}/{dtype}/{dist}",
                size=size,
                dtype=dtype,
                dist=dist,
                fixed_dtypes=fixed,
                drawn=True,
            )
        )
    return cases


def _size(
    spec: OpSpec,
    domain: Domain,
    label: str,
    layout: str,
    kinds: dict[str, Deck[str]],
    rng: random.Random,
    cpu: bool,
) -> Size:
    budget = domain.cpu_elements if cpu else domain.cuda_elements
    tensors = [i for i in spec.data.inputs if isinstance(i, TensorInput)]
    complete = _deriver(spec, domain)

    def largest(dims: dict[str, int]) -> int:
        full = complete(dims)
        return max(math.prod(resolve_dim(d, full) for d in t.shape) for t in tensors)

    views = _viewed(tensors, domain) if layout == "leading" else set()
    dims: dict[str, int] = {}
    for name, dim in domain.dims.items():
        rows = layout == "leading" and name == domain.lead
        lo = max(dim.lo, LEADING_ROWS) if rows else dim.lo
        lo = max(lo, 2) if name in views else lo
        top = dim.hi(cpu) if dim.at_most is None else min(dim.hi(cpu), dims[dim.at_most])
        # A dim drawn in whole blocks (K in groups of 128, Hq in groups of Hkv) is drawn as a
        # count of them: one block, a prime count, a bench shape's count or one either side.
        unit = _unit(dim.multiple_of, dims)
        lo, top = -(-lo // unit), top // unit
        # The dims not yet drawn at their least, to see how much room this one has.
        probe = {**{k: d.lo for k, d in domain.dims.items()}, **dims}
        hi = _room(name, lo, top, probe, largest, budget, unit)
        if hi < lo and (rows or name in views):  # no room for a leading view: pad the rows
            layout, lo, views = "strided", -(-dim.lo // unit), set()
            hi = _room(name, lo, top, probe, largest, budget, unit)
        listed = [s.dims[name] for s in spec.data.bench if name in s.dims]
        bench = sorted({b // unit for b in listed if b % unit == 0})
        dims[name] = unit * _dim(kinds[name].deal(), lo, max(lo, hi), dim.choices, bench, rng)
    shapes = _ranks(spec, domain, dims, layout, rng)
    full = complete(dims)
    varying = {
        t.name: shapes.get(t.name) or [resolve_dim(d, full) for d in t.shape]
        for t in tensors
        if t.layout_varies
    }
    placement = _placement(layout, varying, rng)
    seen = []
    for t in tensors:
        if not t.layout_varies:
            continue
        shape = varying[t.name]
        laid = place(torch.empty(shape, device="meta"), placement)
        seen.append(
            f"{t.name}={placement.kind}{_ints(shape)}strides{_ints(laid.stride())}"
            f"offset{laid.storage_offset()}"
        )
    small = largest(dims) <= domain.cpu_elements and all(
        v <= d.hi(cpu=True) for v, d in zip(dims.values(), domain.dims.values(), strict=True)
    )
    name = f"{label}:" + ",".join(f"{k}={v}" for k, v in full.items())
    return Size(
        name=":".join([name, *seen]),
        dims=full,
        shapes=shapes,
        layout=placement,
        interpreter=small,
    )


def _room(
    name: str,
    lo: int,
    hi: int,
    dims: dict[str, int],
    largest: Callable[[dict[str, int]], int],
    budget: int,
    unit: int = 1,
) -> int:
    """The largest count v of `unit`s in [lo, hi] at which dim `name` (v * unit) keeps every
    input within `budget` elements, the other dims as in `dims`; lo - 1 when none does."""
    return _last_true(lo, hi, lambda v: largest({**dims, name: v * unit}) <= budget)


def _unit(multiple_of: int | str | None, dims: dict[str, int]) -> int:
    """The block a dim's values are whole multiples of: a size, a dim drawn before, or 1."""
    if multiple_of is None:
        return 1
    return multiple_of if isinstance(multiple_of, int) else dims[multiple_of]


def _viewed(tensors: list[TensorInput], domain: Domain) -> set[str]:
    """The dims a leading view of inputs that are 3-D already needs 2 or more of: the heads it
    slices and every dim above them, so that its strides fold into no single row stride."""
    if domain.heads is None:
        return set()
    above = {d for t in tensors if t.layout_varies and len(t.shape) >= 3 for d in t.shape[:-2]}
    return {domain.heads} | {d for d in above if isinstance(d, str) and d in domain.dims}


def _deriver(spec: OpSpec, domain: Domain) -> Callable[[dict[str, int]], dict[str, int]]:
    """Drawn dims completed with the derived ones, which the reference's derive_dims computes
    (decode_attn's table width and cache pages, from the lengths)."""
    if not domain.derived:
        return lambda dims: dims
    derive = getattr(spec.module, "derive_dims", None)
    if not callable(derive):
        raise SpecError(
            f"{spec.path}: SPEC.domain.derived {domain.derived} needs derive_dims(dims) -> dict "
            "in the reference"
        )

    def complete(dims: dict[str, int]) -> dict[str, int]:
        got = derive(dict(dims))
        if not isinstance(got, dict) or set(got) != set(domain.derived):
            raise SpecError(
                f"{spec.path}: derive_dims({dims}) returned {got!r}, expected the dims "
                f"{domain.derived}"
            )
        return {**dims, **got}

    return complete


def _last_true(lo: int, hi: int, ok: Callable[[int], bool]) -> int:
    """The largest v in [lo, hi] with ok(v), ok being true up to some point; lo - 1 if none."""
    if hi < lo or not ok(lo):
        return lo - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def _dim(
    kind: str, lo: int, hi: int, choices: list[int] | None, bench: list[int], rng: random.Random
) -> int:
    """One dim's value of the kind asked, in [lo, hi]; any value there when the kind has none."""
    if choices is not None:
        allowed = [c for c in choices if lo <= c <= hi] or [min(choices)]
        return rng.choice(allowed)

    def within(values: list[int]) -> list[int]:
        return [v for v in values if lo <= v <= hi]

    pows = [1 << k for k in range(1, hi.bit_length() + 1)]  # 1 is `one`'s
    found: list[int] = []
    if kind == "one":
        found = within([1])
    elif kind == "prime":
        v = _log_uniform(max(lo, 2), hi, rng)
        found = within([_prime_from(v, +1), _prime_from(v, -1)])[:1]
    elif kind == "odd":  # an odd number past 1 is no power of two
        v = _log_uniform(lo, hi, rng) | 1
        found = within([v, v - 2] if v > 1 else [3])[:1]
    elif kind == "pow2":
        found = within(pows)
    elif kind == "pow2_minus_1":
        found = within([p - 1 for p in pows if p >= 4])
    elif kind == "pow2_plus_1":
        found = within([p + 1 for p in pows if p >= 2])
    elif kind == "bench":
        found = within(bench)
    elif kind == "bench_near":
        found = within([b + s for b in bench for s in (-1, 1)])
    elif kind == "largest":
        found = [hi]
    return rng.choice(found) if found else _log_uniform(lo, hi, rng)


def _log_uniform(lo: int, hi: int, rng: random.Random) -> int:
    if hi <= lo:
        return lo
    v = math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))
    return min(hi, max(lo, int(v)))


def _prime_from(v: int, step: int) -> int:
    """The first prime from v on, going up (step 1) or down (-1); 0 if none down to 2."""
    while v >= 2:
        if _is_prime(v):
            return v
        v += step
    return 0


def _is_prime(v: int) -> bool:
    return v >= 2 and all(v % p for p in range(2, math.isqrt(v) + 1))


def _ranks(
    spec: OpSpec, domain: Domain, dims: dict[str, int], layout: str, rng: random.Random
) -> dict[str, list[int]]:
    """Shapes of another rank for the inputs that start with the domain's `lead` dim: its rows
    split over extra leading dims ([tokens, heads, ...]), or gone when it is 1. A leading view
    gets rank 3 or more with at least 2 x 2 rows, so its leading strides cannot fold into one."""
    lead = domain.lead
    if lead is None:
        return {}
    rows = dims[lead]
    ranks = list(range(3 if layout == "leading" else 2, domain.max_rank + 1))
    if rows == 1 and layout != "leading":
        ranks.append(1)
    rank = rng.choice(ranks)
    if rank == 2:
        return {}
    if rank == 1:
        heads: list[int] = []
    else:
        if layout == "leading" and not _divisors(rows):
            rows = dims[lead] = rows - 1  # a prime: one less is even and at least 4
        heads = _split(rows, rank - 1, rng, layout)
    return {
        t.name: heads + [resolve_dim(d, dims) for d in t.shape[1:]]
        for t in spec.data.inputs
        if isinstance(t, TensorInput) and t.layout_varies and t.shape[:1] == [lead]
    }


def _divisors(n: int) -> list[int]:
    return [d for d in range(2, n) if n % d == 0]


def _split(rows: int, parts: int, rng: random.Random, layout: str) -> list[int]:
    """rows as a product of `parts` dims, the heads last (the dim a leading view slices, as in
    [tokens, heads, dim]): for a leading view 2 heads or more and 2 rows or more above them; for
    a column-major one more than 1 head where rows allow (a column-major [..., 1, n] is dense)."""
    if layout == "leading":
        heads = rng.choice([d for d in _divisors(rows) if d <= 16] or _divisors(rows))
    elif layout == "transposed" and rows > 1:
        heads = rng.choice([*_divisors(rows), rows])
    else:
        heads = rng.choice([1, *_divisors(rows), rows])
    left, upper = rows // heads, []
    for _ in range(parts - 2):
        d = rng.choice([1, *_divisors(left), left])
        upper.append(d)
        left //= d
    return [*upper, left, heads]


def _placement(layout: str, shapes: dict[str, list[int]], rng: random.Random) -> Placement:
    """The layout's numbers (`shapes`: the varying inputs'): padding as a fixed size's (3 to
    15), a leading view among up to twice its heads more (the k and v of a fused qkv), an offset
    of 1 to 37 (odd ones break 16-byte alignment)."""
    if layout == "strided":
        return Placement(kind="strided", pad=rng.randint(3, 15))
    if layout == "leading":
        heads = max((s[-2] for s in shapes.values() if len(s) >= 3), default=1)
        pad = rng.randint(1, 2 * heads)
        return Placement(kind="leading", pad=pad, start=rng.randint(0, pad))
    if layout == "offset":
        return Placement(kind="offset", offset=rng.randint(1, 37))
    return Placement(kind=layout)  # type: ignore[arg-type]


def _ints(values: Sequence[int]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"
