"""What the library records of each operator: its provenance and MANIFEST.json."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from kernelgen.errors import KernelgenError, first_error
from kernelgen.records import now
from kernelgen.spec.routes import Route

Configs = dict[str, dict[str, dict[str, Any]]]


class PromoteError(KernelgenError):
    """A candidate that cannot be promoted, or a library that cannot take it."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShapeSpeedup(_Model):
    """One benchmark shape of the promoted kernel, against its three baselines."""

    shape: str
    dtype: str
    median_us: float
    eager: float | None = Field(None, description="torch eager time / this time")
    compile: float | None = Field(None, description="torch.compile time / this time")
    seed: float | None = Field(None, description="seed kernel time / this time")
    host_us: float | None = Field(None, description="wall time per back-to-back call")
    eager_us: float | None = Field(None, description="torch eager's median, same run")
    eager_host_us: float | None = Field(None, description="torch eager's host time per call")
    bound: Literal["memory", "compute", "launch"] | None = Field(
        None, description="what bounds the shape (roofline); None: a record from before it"
    )


class Provenance(_Model):
    """Where a promoted kernel came from and what it measured."""

    op: str
    source: str = Field(description="the promoted file, relative to the project root")
    run_id: str | None = None
    candidate_id: str | None = None
    record: str | None = Field(None, description="evaluations/<op>/<run>/candidates/<id>/...")
    proposer: str = Field(description="llm, tune, replay, files; 'seed' for an unmeasured seed")
    model: str | None = None
    round: int | None = None
    parent: str | None = None
    device: str | None = Field(None, description="GPU the timings were taken on; None: none")
    driver: str | None = None
    cuda: str | None = None
    torch: str | None = None
    triton: str | None = None
    speedups: list[ShapeSpeedup] | None = Field(None, description="None: never measured")
    peers: Literal["eager", "reference"] | None = Field(
        None,
        description="what 'eager' and 'torch.compile' ran: references/<op>.py's `eager` (the op "
        "as torch users call it) or the reference as written (None: a record older than that)",
    )
    geomean_eager: float | None = None
    geomean_compile: float | None = None
    geomean_seed: float | None = None
    sha256: str = Field(description="of the source as judged, before the promotion rewrites it")
    promoted: str = Field(default_factory=now)
    note: str | None = None
    measured: bool = Field(False, description="derived: timed on a GPU (device and speedups)")

    @model_validator(mode="after")
    def _derive_measured(self) -> Provenance:
        self.measured = self.device is not None and self.speedups is not None
        return self


class PeerShape(_Model):
    """One shape: the kernel against the peer that did best against it there."""

    shape: str
    dtype: str
    peer: Literal["eager", "compile", "liger", "flaggems"]
    speedup: float = Field(description="the best peer's time / the kernel's; below 1: slower")
    source: Literal["run", "library"] = Field(
        description="the promoted run's bench record, or the library bench record"
    )


class BestPeer(_Model):
    """The kernel against the best peer measured, per shape and in one figure."""

    geomean: float = Field(description="of speedup over shapes")
    shapes: list[PeerShape]
    library: str | None = Field(
        None, description="the library bench record some figures come from (evaluations/library/)"
    )


class Param(_Model):
    name: str
    annotation: str
    default: str | None = Field(None, description="source text of the default")


class ManifestEntry(Provenance):
    """Provenance plus what the generated __init__.py needs to expose the operator."""

    params: list[Param]
    returns: str
    summary: str = Field(description="first line of the reference's docstring")
    tuned_on: list[str] = Field(default_factory=list, description="device keys in configs/")
    routes: list[Route] = Field(
        default_factory=list,
        description="the torch entry points kernelgen_ops.enable() routes to a measured kernel "
        "(SPEC.routes); _routing.py generates its routes from them",
    )
    best_peer: BestPeer | None = Field(
        None,
        description="derived: the kernel against the fastest peer measured per shape (eager, "
        "torch.compile, Liger, FlagGems), the figure the headlines give; None: not measured",
    )


class Accepts(_Model):
    """One parameter of an imported problem's kernel as the judge verified it: what the
    library's call checks (kernelgen_ops/kernelbench.py), there being no hand-written contract."""

    name: str
    dtypes: list[str] = Field(
        default_factory=list, description="a tensor's dtypes the cases drew; [] for a scalar"
    )
    rank: int | None = Field(None, description="a tensor's number of dims; None for a scalar")
    contiguous: bool = Field(
        False, description="only contiguous tensors were drawn for it (no layout applied)"
    )
    value: float | int | bool | None = Field(
        None, description="a scalar's one value, every case's (the problem fixes it); None: drawn"
    )


class ImportedProblem(_Model):
    """Where an imported problem came from (its reference's SPEC.origin, trimmed)."""

    source: str = Field(description="the benchmark: kernelbench")
    file: str
    sha256: str
    level: int
    problem: int
    title: str


class ImportedEntry(ManifestEntry):
    """An imported problem's kernel (a KernelBench Model's forward): exposed as
    kernelgen_ops.kernelbench.<op>, the kernel always (package/imported.py says why)."""

    origin: ImportedProblem
    accepts: list[Accepts]


class Manifest(_Model):
    format: Literal[1] = 1
    library: Literal["kernelgen_ops"] = "kernelgen_ops"
    ops: dict[str, ManifestEntry] = Field(default_factory=dict)
    kernelbench: dict[str, ImportedEntry] = Field(
        default_factory=dict,
        description="imported problems' kernels, kept apart from the operators: "
        "kernelgen_ops.kernelbench",
    )

    @model_serializer(mode="wrap")
    def _without_an_empty_kernelbench(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A library without imported problems writes MANIFEST.json as it did before they could
        # be promoted: the operators' promotions stay byte for byte what they were.
        data = handler(self)
        if not self.kernelbench:
            data.pop("kernelbench", None)
        return data


def sha256(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def device_key(device: str, triton_version: str) -> str:
    """How configs/<op>.json names the table of one device under one Triton version."""
    return f"{device}|triton-{triton_version}"


def load_manifest(library: Path) -> Manifest:
    path = library / "MANIFEST.json"
    if not path.is_file():
        return Manifest()
    try:
        return Manifest.model_validate_json(path.read_text())
    except ValidationError as e:
        raise PromoteError(f"{path}: {first_error(e)}") from None
