"""What the parent and the benchmark worker (worker.py) exchange: a bench request and its records,
a tune request and its variants' times; and the bench shapes a request names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kernelgen.bench.peers import PeerCache
from kernelgen.bench.timing import ROUNDS, Method
from kernelgen.errors import UsageError
from kernelgen.records import BenchRecord, CompileFacts, Environment
from kernelgen.spec import BenchShape, OpSpec

PEERS: tuple[Literal["eager", "compile"], ...] = ("eager", "compile")
TUNE_ROUNDS = 5


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Contender(_Strict):
    label: str = Field(min_length=1, description="seed, best, or the candidate's id")
    path: str


class BenchRequest(_Strict):
    op: str
    root: str = Field(description="project root; the worker runs from there")
    contenders: list[Contender] = Field(min_length=1)
    peers: bool = Field(True, description="also time torch eager and torch.compile")
    cached_peers: list[PeerCache] | None = Field(
        None,
        description="peer times to reuse where one matches this device, shape and method; "
        "None: time the peers on every shape",
    )
    shapes: list[str] | None = Field(None, description="bench shape names; None = all")
    seed: int = 0
    rounds: int = Field(ROUNDS, ge=1)

    @model_validator(mode="after")
    def _labels(self) -> BenchRequest:
        labels = [c.label for c in self.contenders]
        dup = sorted({x for x in labels if labels.count(x) > 1})
        if dup:
            raise ValueError(f"contenders: duplicate labels {dup}")
        clash = sorted(set(labels) & set(PEERS))
        if clash:
            raise ValueError(f"contenders: labels {clash} are reserved for the peers")
        return self


class BenchResult(_Strict):
    records: list[BenchRecord]
    peers: PeerCache | None = Field(None, description="peer times measured here, to be cached")


class Skip(_Strict):
    """A variant not to run on a shape, and why (its compile ran past the tuner's budget: the
    worker would compile it again, with the GPU waiting)."""

    index: int
    shape: str
    reason: str


class TuneRequest(_Strict):
    op: str
    root: str
    sources: list[str] = Field(min_length=1, description="variant module sources")
    indices: list[int] | None = Field(None, description="caller's numbers for the sources")
    shapes: list[str] | None = None
    seed: int = 0
    rounds: int = Field(TUNE_ROUNDS, ge=1)
    baseline: int | None = Field(
        None, description="the caller's number of the source the others must beat"
    )
    skip: list[Skip] = Field(default_factory=list)

    @model_validator(mode="after")
    def _indices(self) -> TuneRequest:
        if self.indices is not None and len(self.indices) != len(self.sources):
            raise ValueError("indices: one per source")
        if self.baseline is not None and self.baseline not in self.numbers:
            raise ValueError(f"baseline: {self.baseline} is not one of the sources' numbers")
        return self

    @property
    def numbers(self) -> list[int]:
        return self.indices if self.indices is not None else list(range(len(self.sources)))


class VariantShape(_Strict):
    shape: str
    median_us: float | None = None
    spread: float | None = None
    method: Method | None = None
    baseline_us: float | None = Field(
        None, description="the baseline's time on this shape, in the same process and rounds"
    )
    baseline_spread: float | None = None
    error: str | None = Field(None, description="why there is no time: compile error, ...")


class VariantTiming(_Strict):
    index: int
    shapes: list[VariantShape]
    compile: list[CompileFacts] = Field(default_factory=list)


class TuneResult(_Strict):
    variants: list[VariantTiming]
    environment: Environment | None = None
    poisoned_by: int | None = Field(
        None, description="the variant whose CUDA error ended this process early"
    )
    poisoned_shape: str | None = None
    compile_seconds: float | None = Field(
        None, description="compile ahead of the timing, in parallel (apart from the timing)"
    )
    seconds: float | None = Field(None, description="the timing workers' wall time")


def select_shapes(spec: OpSpec, names: list[str] | None) -> list[BenchShape]:
    """The named bench shapes of an operator, in the spec's order (all when names is None)."""
    if names is None:
        return list(spec.data.bench)
    known = {s.name: s for s in spec.data.bench}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"{spec.name}: no bench shape {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(known)}"
        )
    return [s for s in spec.data.bench if s.name in names]
