"""SPEC.limits: cases at the sizes where a kernel's index arithmetic breaks, run on the GPU only.

A kernel that computes its offsets in 32 bits (`row * stride`, two int32) is right on every
tensor of fewer than 2^31 elements and wrong past it; one that puts its rows on a grid's y or z
axis cannot launch at 65536 rows or more. Real calls reach both (a softmax over 65k rows of 32k
scores, an rms_norm over 262k tokens of 8192), and no case of a few MB shows either. A limit is
one such size in one dtype: its inputs are drawn on the GPU from the run's seed, a block of rows
at a time, and the candidate's output is checked on rows sampled from it against the reference
in float64 on those rows alone (kernelgen/verify/limits.py), so the truth costs what a small
case's does. An operator whose rows index a larger input (decode_attn: a block table into a
paged KV cache of 2^31 elements or more) has its case drawn whole, and its reference's
`limit_rows` cuts the call down to the sampled rows and what they reach.

Models only: this module is imported by kernelgen/spec/__init__.py and imports nothing of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.spec.domain import Dist, DType

# One tensor this large: an int32 offset into it overflows.
ELEMENTS = 1 << 31
# This many rows: more programs than a CUDA grid's y or z axis takes (65535).
ROWS = 1 << 16
# The inputs of one limit case at most. The judge keeps them, the candidate's process copies
# them and writes outputs of about their size, and the judge copies those back: a case of this
# size stays within the H200's 139 GiB beside the other cases and the compile runners.
MAX_INPUT_BYTES = 16 << 30
_ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1}
_ITEMSIZE |= {"int32": 4, "int64": 8, "bool": 1}


class Limit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        description="unique among the limits; names the case (`limit/NAME:dims/dtype/dist`)"
    )
    dims: dict[str, int] = Field(
        description="a value for every dim the inputs' shapes, `reduction` and `bucket` use, as "
        "a size's: one input of 2^31 elements or more, or 65536 rows or more (or both)"
    )
    dtype: DType = Field(description="the case dtype, one of SPEC's `dtypes`: the one real calls "
                         "reach the size in")  # fmt: skip
    rows: str = Field(
        description="the dim whose rows are sampled: the inputs whose shape starts with it are "
        "drawn a block of rows at a time and gathered at the sampled rows (the others whole), "
        "and every output is gathered along its first dim; no input uses it elsewhere. Where "
        "the rows index another input (decode_attn's block table into a paged KV cache), the "
        "reference's `limit_rows(args, rows)` gives the call of the sampled rows alone and the "
        "case is drawn whole (kernelgen/verify/limits.py)"
    )
    dist: Dist = Field("normal", description="the value distribution of the case")


class _Tensor(Protocol):
    name: str
    shape: list[str | int]
    dtype: str


def dim_name(expr: str) -> str:
    return expr.split("*")[-1].split("/")[0].strip()


def check(
    limits: Sequence[Limit],
    tensors: Sequence[_Tensor],
    needed: set[str],
    dtypes: Sequence[str],
    resolve: Callable[[str | int, dict[str, int]], int],
) -> None:
    """Each limit a size the inputs take (every dim they need, its dtype one of SPEC's), rows
    that can be drawn and gathered a block at a time, and a limit it reaches, within
    MAX_INPUT_BYTES. Raises ValueError naming the limit and field."""
    seen: set[str] = set()
    for limit in limits:
        where = f"limits.{limit.name}"
        if limit.name in seen:
            raise ValueError(f"limits: duplicate name {limit.name!r}")
        seen.add(limit.name)
        missing = needed - set(limit.dims)
        if missing:  # more are allowed: a dim the reference's own maker reads, as a size's
            raise ValueError(
                f"{where}.dims: lack {sorted(missing)} (the inputs, reduction and bucket use "
                f"{sorted(needed)})"
            )
        if limit.dtype not in dtypes:
            raise ValueError(f"{where}.dtype: {limit.dtype!r} is not one of SPEC's {list(dtypes)}")
        starts = [t.name for t in tensors if t.shape[:1] == [limit.rows]]
        if not starts:
            raise ValueError(
                f"{where}.rows: {limit.rows!r} starts no input's shape: there are no rows to sample"
            )
        for t in tensors:
            later = [d for d in t.shape[1:] if isinstance(d, str) and dim_name(d) == limit.rows]
            if later:
                raise ValueError(
                    f"{where}.rows: input {t.name!r} uses {limit.rows!r} past its first dim "
                    f"({later[0]!r}): its rows cannot be drawn a block at a time"
                )
        sizes = {t.name: math.prod(resolve(d, limit.dims) for d in t.shape) for t in tensors}
        largest = max(sizes.values())
        rows = limit.dims[limit.rows]
        if largest < ELEMENTS and rows < ROWS:
            raise ValueError(
                f"{where}.dims: reaches no limit (largest input {largest} elements, {rows} rows); "
                f"expected an input of >= 2^31 elements or >= {ROWS} rows"
            )
        total = sum(
            n * _ITEMSIZE[limit.dtype if t.dtype == "case" else t.dtype]
            for t, n in zip(tensors, sizes.values(), strict=True)
        )
        if total > MAX_INPUT_BYTES:
            raise ValueError(
                f"{where}.dims: inputs of {total / 2**30:.1f} GiB, above the "
                f"{MAX_INPUT_BYTES >> 30} GiB a limit case may take"
            )
