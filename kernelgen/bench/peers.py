"""Peer times measured once: torch eager and torch.compile of an operator, per (shape, dtype,
device, torch, Triton), kept as JSON under evaluations/peers/ beside the committed ceilings.

    evaluations/peers/<op>-<gpu>-torch<version>-triton<version>.json     PeerCache

Compiling torch.compile for every shape and timing two peers with every candidate cost most of a
bench call, and the peers do not change between candidates. A bench request that asks for cached
peers (`bench_files(..., peers="cached")`) times only its contenders on the shapes the cache has;
shapes it lacks are timed in that run and stored. A fresh request (`peers=True`) times the peers
and refreshes their entries.

An entry is reused only when everything that decides the figure matches: shape name, dims and
dtype, the timing method and protocol, the reference module's text, and which function ran as
the peer. The parent process reads the files before it starts the worker and stores what the
worker measured after it: the worker runs candidate code, so it writes nothing here.

A corrupt file is an error that names it, never skipped: files are written atomically (write,
then rename), so a bad one was edited or merged by hand, and timing the peers again would quietly
overwrite whatever it held.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernelgen import paths
from kernelgen.bench.ceilings import clean_name, stack_name
from kernelgen.bench.timing import Method
from kernelgen.errors import StoreError, first_error
from kernelgen.records import PeerTime, ShapeFailure, now
from kernelgen.spec import BenchShape, OpSpec

PeerKind = Literal["eager", "reference"]
Key = tuple[str, str, tuple[tuple[str, int], ...], str, int, str, str]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PeerEntry(_Strict):
    """Both peers on one shape, timed by one method."""

    shape: str
    dtype: str
    dims: dict[str, int]
    method: Method
    protocol: int = Field(description="timing.PROTOCOL when measured")
    reference: str = Field(description="sha256 of the reference module's text")
    peers: PeerKind = Field(description="the reference module's `eager`, or the reference itself")
    eager: PeerTime | None = None
    compile: PeerTime | None = None
    failed: list[ShapeFailure] = Field(
        default_factory=list, description="a peer that raised on this shape, and why"
    )
    measured: str = Field(default_factory=now)

    def key(self) -> Key:
        dims = tuple(sorted(self.dims.items()))
        return (
            self.shape,
            self.dtype,
            dims,
            self.method,
            self.protocol,
            self.reference,
            self.peers,
        )


class PeerCache(_Strict):
    """One operator's peer times on one device and software stack."""

    op: str
    gpu: str
    torch: str
    triton: str
    entries: list[PeerEntry] = Field(default_factory=list)

    def find(self, key: Key) -> PeerEntry | None:
        return next((e for e in self.entries if e.key() == key), None)

    def same_stack(self, gpu: str, torch_version: str, triton_version: str) -> bool:
        return (self.gpu, self.torch, self.triton) == (gpu, torch_version, triton_version)


def reference_sha(spec: OpSpec) -> str:
    """A digest of the reference module: a changed reference (new `eager`, new inputs) is a
    new peer."""
    return hashlib.sha256(spec.path.read_bytes()).hexdigest()


def peer_kind(spec: OpSpec) -> PeerKind:
    return "eager" if spec.eager is not spec.reference else "reference"


def entry_key(shape: BenchShape, method: str, protocol: int, reference: str, kind: str) -> Key:
    dims = tuple(sorted(shape.dims.items()))
    return (shape.name, shape.dtype, dims, method, protocol, reference, kind)


def cache_dir() -> Path:
    return paths.evaluations_dir() / "peers"


def cache_path(op: str, gpu: str, torch_version: str, triton_version: str) -> Path:
    return cache_dir() / f"{op}-{stack_name(gpu, torch_version, triton_version)}.json"


def load(path: Path, op: str) -> PeerCache | None:
    """The cache in `path`; None when there is none. StoreError naming the file when it cannot be
    read or is another operator's."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StoreError(f"{path}: cannot read the peer cache: {e.strerror}") from None
    try:
        cache = PeerCache.model_validate_json(text)
    except ValidationError as e:
        raise StoreError(
            f"{path}: corrupt peer cache ({first_error(e, 'file')}); "
            "fix or delete it to time the peers again"
        ) from None
    if cache.op != op:
        raise StoreError(f"{path}: a peer cache of {cache.op!r} under the name of {op!r}")
    return cache


def load_stack(op: str, torch_version: str, triton_version: str) -> list[PeerCache]:
    """Every device's cache of `op` for this torch and Triton (the caller does not know which
    GPU the worker will see without creating a CUDA context of its own)."""
    pattern = f"{op}-*-torch{clean_name(torch_version)}-triton{clean_name(triton_version)}.json"
    found = [load(p, op) for p in sorted(cache_dir().glob(pattern))]
    return [c for c in found if c is not None]


def store(fresh: PeerCache) -> Path:
    """Merge freshly measured entries into their file (same key: the new one replaces the old)
    and write it atomically."""
    from kernelgen.store import write_atomic

    path = cache_path(fresh.op, fresh.gpu, fresh.torch, fresh.triton)
    old = load(path, fresh.op)
    new_keys = {e.key() for e in fresh.entries}
    kept = [e for e in (old.entries if old else []) if e.key() not in new_keys]
    merged = fresh.model_copy(update={"entries": kept + list(fresh.entries)})
    write_atomic(path, merged.model_dump_json(indent=2))
    return path
