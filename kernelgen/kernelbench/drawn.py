"""An imported problem at any size its SPEC.domain draws, as its reference runs it.

The import's own sizes are listed, and runtime.Problem finds a call's size by its arguments'
shapes. A drawn size is not listed: its dims are read from the shapes (each input's shape names
the dims its axes are, `k*name` for a multiple), then completed as the import found they must be:
- the constants the domain does not draw (kernel sizes, strides, axes) at their own value;
- a constant that must equal another (a loss whose batch broadcasts against its width) tied to it;
- `reduced`, where the problem's reductions are no single dim: the terms one output element sums
  (a convolution's in_channels x its window), fitted at import as max_i c_i * prod(dim ** e_i)
  over its reductions, so the judge's atol grows with log2 of it (kernelgen/kernelbench/reduce.py).
Its inputs take the drawn case's layout (padded rows, transposed, a storage offset, a leading
view): the problem's own inputs only; its parameters stay contiguous, as its init makes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from kernelgen.errors import SpecError
from kernelgen.kernelbench.runtime import Problem
from kernelgen.spec import BenchShape, Size, TensorInput, resolve_dim
from kernelgen.spec.inputs import lay_out


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Site(_Strict):
    """One reduction's terms per output element: factor * prod(dims[d] ** power)."""

    factor: float = Field(gt=0)
    powers: dict[str, int] = Field(default_factory=dict)

    def terms(self, dims: Mapping[str, int]) -> float:
        return self.factor * math.prod(dims[d] ** e for d, e in self.powers.items())


class Derived(_Strict):
    """How a drawn size's dims are completed (the import finds it; the reference holds it)."""

    fixed: dict[str, int] = Field(
        default_factory=dict, description="constants the domain does not draw, at their value"
    )
    ties: dict[str, str] = Field(
        default_factory=dict, description="dim -> the drawn dim it always is (`k*name`: k times)"
    )
    reduced: str | None = Field(None, description="the dim `sites` computes, if any")
    sites: list[Site] = Field(default_factory=list)

    def reduced_value(self, dims: Mapping[str, int]) -> int:
        return max([1, *(math.ceil(s.terms(dims) - 1e-9) for s in self.sites)])

    def complete(self, dims: Mapping[str, int]) -> dict[str, int]:
        out = {**self.fixed, **dims}
        for dim, same in self.ties.items():
            out.setdefault(dim, resolve_dim(same, out))
        if self.reduced is not None and self.reduced not in out:
            out[self.reduced] = self.reduced_value(out)
        return out


def _entry(expr: str | int) -> tuple[int, str | None, int]:
    """A shape entry as (multiplier, dim, divisor): `k*name` -> (k, name, 1), `name/q` -> (1,
    name, q), an int -> (int, None, 1)."""
    if isinstance(expr, int):
        return expr, None, 1
    factor, _, rest = expr.rpartition("*")
    name, _, q = rest.partition("/")
    return (int(factor) if factor else 1), name.strip(), (int(q) if q else 1)


class DrawnProblem(Problem):
    def __init__(
        self,
        op: str,
        source: str,
        spec: Mapping[str, Any],
        plan: Mapping[str, Any],
        derived: Mapping[str, Any] | None = None,
    ):
        self.derived = Derived.model_validate(derived or {})
        super().__init__(op, source, spec, plan)

    def namespace(self, dims: Mapping[str, int]) -> dict[str, Any]:
        return super().namespace(self.derived.complete(dims))

    def derive_dims(self, dims: Mapping[str, int]) -> dict[str, int]:
        """SPEC.domain.derived's values for a drawn size (kernelgen/spec/draw.py asks)."""
        domain = self.data.domain
        full = self.derived.complete(dims)
        return {d: full[d] for d in (domain.derived if domain else [])}

    def dims_of(self, args: Sequence[Any]) -> dict[str, int]:
        try:
            return super().dims_of(args)
        except SpecError:
            solved = self.solve(
                [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
            )
            if solved is None:
                raise
            return solved

    def solve(self, shapes: Sequence[Sequence[int] | None]) -> dict[str, int] | None:
        """The dims whose shapes these are, read off the SPEC's symbolic shapes; None where they
        do not fit them (a rank, a literal or a dim that disagrees)."""
        if self.data.domain is None or len(shapes) != len(self.data.inputs):
            return None
        dims: dict[str, int] = {}
        blocks: list[tuple[str, int, int]] = []  # (dim, q, n): n blocks of q cover the dim
        for item, shape in zip(self.data.inputs, shapes, strict=True):
            if not isinstance(item, TensorInput):
                continue
            if shape is None or len(shape) != len(item.shape):
                return None
            for expr, n in zip(item.shape, shape, strict=True):
                k, name, q = _entry(expr)
                if name is None:
                    if n != k:
                        return None
                elif q > 1:
                    blocks.append((name, q, n))
                elif n % k or dims.setdefault(name, n // k) != n // k:
                    return None
        for name, q, n in blocks:  # whole blocks: the domain draws such a dim in multiples of q
            if -(-dims.setdefault(name, n * q) // q) != n:
                return None
        if set(self.data.domain.dims) - set(dims):
            return None
        return self.derived.complete(dims)

    def make_inputs(
        self, size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator
    ) -> list[Any]:
        out = super().make_inputs(size, dtype, dist, gen)
        if not isinstance(size, Size) or size.layout == "contiguous":
            return out
        for i, item in enumerate(self.data.inputs):
            if isinstance(item, TensorInput) and item.layout_varies:
                out[i] = lay_out(out[i], size.layout, gen)
        return out
