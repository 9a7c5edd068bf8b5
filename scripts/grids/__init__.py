"""The peers' own accuracy-test grids, as data, for scripts/peer_grids.py (issue [P], item 4).

Each peer library tests its kernels on a grid of its choosing: shapes, dtypes, dims, layouts and
value families, and a tolerance per dtype. One module per peer (flaggems, liger, quack,
flashinfer, sglang) writes those parametrizations down as `Grid`s: the facts of the peer's test
file at a named commit, never its code. scripts/peer_grids.py applies each grid to
kernelgen_ops and checks every answer against references/<op>.py at the peer's tolerance and at
kernelgen's own (scripts/grids/check.py).

A case names what the peer's test varies; scripts/grids/inputs.py turns it into the library's
call. Where the peer's problem and kernelgen's differ only in how the arguments are laid out (two
tensors gate and up where kernelgen takes them side by side, a K/V cache interleaved in one
tensor, softmax over a dim other than the last), the case says so in its layout and the call
takes the layout the library's user would pass; where they differ in the math (Gemma's 1 + w, a
rotary embedding, a soft cap), the peer's case is left out and the module says so.
"""

from __future__ import annotations

import importlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PEERS = ("flaggems", "liger", "quack", "flashinfer", "sglang")

Scalar = int | float | str | bool | None


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Source(_Model):
    """Where the grid is written: the peer's repository, test file and function, commit."""

    repo: str = Field(description="owner/name on GitHub")
    path: str = Field(description="the test file")
    test: str = Field(description="the test function (or class.method) the grid comes from")
    commit: str = Field(min_length=40, max_length=40)

    def cite(self) -> str:
        return f"{self.repo} {self.path}::{self.test} @ {self.commit[:10]}"


class Check(_Model):
    """One output's comparison in the peer's test, applied against the float64 reference:
    `allclose` |out - ref| <= atol + rtol |ref| (NaN where the reference has NaN only with
    equal_nan); `relmean` mean |out - ref| / mean |ref| below `limit`; `fp8_codes` e4m3 codes
    within one step of the reference's, and fewer than `limit` of them off by that step (or
    `small_limit` where the output has at most `small_numel` entries); `same_set` each row the
    same set of indices."""

    kind: Literal["allclose", "relmean", "fp8_codes", "same_set"] = "allclose"
    atol: float = 0.0
    rtol: float = 0.0
    equal_nan: bool = False
    limit: float | None = None
    small_limit: float | None = None
    small_numel: int | None = None


class GridCase(_Model):
    """One point of a peer's grid. `shape` is the main input's shape where the op has one;
    `params` what else the peer varies (a dim, k, heads, page size, weight dtype), named as
    scripts/grids/inputs.py reads them for the op; `values` the peer's value family."""

    dtype: Literal["float32", "float16", "bfloat16"]
    shape: list[int] | None = None
    values: str = "randn"
    params: dict[str, Scalar | list[int]] = Field(default_factory=dict)

    def key(self) -> str:
        """The case's name in a record: what distinguishes it within its grid."""
        parts = [f"shape={tuple(self.shape)}"] if self.shape is not None else []
        parts += [f"{k}={v}" for k, v in sorted(self.params.items())]
        return " ".join([*parts, self.dtype, self.values])


class Grid(_Model):
    """One test of one peer, for one kernelgen operator."""

    name: str = Field(description="<peer>.<op>.<test>, unique")
    peer: str
    op: str
    source: Source
    checks: dict[str, list[Check]] = Field(
        description="per dtype, one check per output of the op (act_quant: q, then scales)"
    )
    cases: list[GridCase]
    note: str | None = Field(None, description="what of the peer's test is left out, and why")


def all_grids() -> list[Grid]:
    """Every peer's grids, in PEERS' order."""
    out: list[Grid] = []
    for peer in PEERS:
        out += importlib.import_module(f"grids.{peer}").GRIDS
    names = [g.name for g in out]
    if len(set(names)) != len(names):
        raise ValueError(f"scripts/grids: duplicate grid names in {names}")
    return out
