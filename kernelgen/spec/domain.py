"""The domain an operator's inputs come from: the contract's words for dtypes, value distributions
and memory layouts, and `SPEC.domain`, from which the judge draws a fresh grid of cases each run.

A fixed list of sizes is public, and a kernel can be right on exactly that list: right at the
listed widths, wrong one past them; right on dense rows, wrong on the q slice of a fused qkv;
right on centred values, wrong when the row's largest value comes after its first block. So a
SPEC may declare the domain its inputs come from, and every run draws cases from it on top of
the fixed floor, reproducibly from the run's seed (kernelgen/spec/draw.py draws the grid,
kernelgen/spec/inputs.py the values and layouts).

Models only: this module is imported by kernelgen/spec/__init__.py and imports nothing of it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DType = Literal["float32", "float16", "bfloat16"]
# The value distributions (kernelgen/spec/fields.py says what each one is; inputs.values draws
# them), in the order a domain's "all" draws them in turn. normal, uniform, wide, small, neg_inf
# and specials are the fixed sizes' own; the others are the families that broke kernels a centred
# draw never shows: a large value late in a row, rows all below zero, sorted, constant or tied
# rows, values at the edge of a dtype's range.
Dist = Literal[
    "normal",
    "uniform",
    "wide",
    "small",
    "large",
    "spike",
    "negative",
    "sorted_up",
    "sorted_down",
    "constant",
    "ties",
    "denormal",
    "neg_inf",
    "specials",
]
# strided: padded rows; leading: a slice of a wider tensor along its second-to-last dim (the q or
# k heads of a fused qkv [tokens, heads, dim]), along its last for a 2-D one; offset: a dense
# view that starts past its storage's first element; expanded: the first dim broadcast (stride 0).
Layout = Literal["contiguous", "strided", "transposed", "leading", "offset", "expanded"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Placement(_Strict):
    """A layout with every number fixed: what a drawn case's name says and what lay_out builds.
    A fixed size names only its layout, and each run draws the numbers."""

    kind: Layout = Field(description="the layout")
    pad: int = Field(
        0,
        ge=0,
        description="strided: elements after each row; leading: entries of the sliced dim "
        "outside the view (the fused qkv's other heads)",
    )
    start: int = Field(
        0, ge=0, description="leading: the view's first index in the sliced dim (k after q)"
    )
    offset: int = Field(
        0, ge=0, description="offset: storage elements before the view's first element"
    )

    @model_validator(mode="after")
    def _fits(self) -> Placement:
        if self.start > self.pad:
            raise ValueError(f"start {self.start} past the pad {self.pad}: the view would overrun")
        return self


class Dim(_Strict):
    """One dim's values: a range or a list of choices."""

    range: tuple[int, int] | None = Field(
        None,
        description="(lo, hi), both included: drawn as the sizes that break kernels are (1, "
        "primes, other non-powers of two, powers of two and their neighbours, the bench "
        "shapes' values and their neighbours, the largest allowed) and at random between",
    )
    choices: list[int] | None = Field(
        None, description="instead of a range: the values allowed (hadamard's powers of two)"
    )
    cpu_max: int | None = Field(
        None,
        ge=1,
        description="the largest value a CPU draw takes, so the interpreter runs a drawn case "
        "in about the time of a fixed one; None: the range's own",
    )
    at_most: str | None = Field(
        None, description="another dim this one never exceeds (topk's k, at most N)"
    )
    multiple_of: int | str | None = Field(
        None,
        description="a block size every value is a multiple of (act_quant's K, whole groups of "
        "128), or a dim drawn before it whose value is (attention's Hq, whole groups of Hkv): "
        "the kinds of size are then drawn in those units (one group, a prime number of them)",
        examples=[128, "Hkv"],
    )
    maker: bool = Field(
        False,
        description="no input's shape uses it: the reference's make_inputs reads it from the "
        "drawn size (fused_moe's routing, sparse_attn's padded rows), and the case's name says "
        "it; its choices may include 0",
        examples=[True],
    )

    @model_validator(mode="after")
    def _range_or_choices(self) -> Dim:
        if (self.range is None) == (self.choices is None):
            raise ValueError("give either range or choices, not both or neither")
        if self.range is not None and not (1 <= self.range[0] <= self.range[1]):
            raise ValueError(f"range {list(self.range)}: expected 1 <= lo <= hi")
        least = 0 if self.maker else 1
        if self.choices is not None and (not self.choices or min(self.choices) < least):
            kind = "ints >= 0" if self.maker else "positive ints"
            raise ValueError(f"choices {self.choices}: expected {kind}")
        if self.multiple_of is not None and self.choices is not None:
            raise ValueError("multiple_of with choices: list the multiples as choices")
        if isinstance(self.multiple_of, int) and (
            self.multiple_of < 1 or self.hi(cpu=True) < self.multiple_of
        ):
            raise ValueError(
                f"multiple_of {self.multiple_of}: expected a block size no larger than the "
                f"range's top (on CPU too), {self.hi(cpu=True)}"
            )
        return self

    @property
    def lo(self) -> int:
        return self.range[0] if self.range is not None else min(self.choices or [1])

    def hi(self, cpu: bool) -> int:
        top = self.range[1] if self.range is not None else max(self.choices or [1])
        return min(top, self.cpu_max) if cpu and self.cpu_max is not None else top


class Draws(_Strict):
    cpu: int = Field(
        4, ge=0, description="cases drawn per run on CPU (the interpreter: a few, kept small)"
    )
    cuda: int = Field(12, ge=0, description="cases drawn per run on CUDA")


class Domain(_Strict):
    dims: dict[str, Dim] = Field(
        description="every dim the inputs' shapes, `reduction`, `bucket` and dim scalars use "
        "(but the `derived` ones), and the `maker` dims; drawn in this order (a dim drawn first "
        "may take most of the element budget)"
    )
    dtypes: list[DType] | None = Field(
        None,
        description="the case dtypes drawn from, a subset of SPEC's `dtypes` (None: all of "
        "them); a CPU draw takes the interpreter's (never bf16)",
    )
    layouts: list[Layout] = Field(
        ["contiguous"],
        min_length=1,
        description='the layouts drawn for the inputs whose `layout_varies` ("all": every one)',
    )
    dists: list[Dist] = Field(
        min_length=2,
        description="the value distributions drawn from, those the operator's semantics allow "
        '(no NaN where the reference is undefined on it; "all": every one)',
    )
    lead: str | None = Field(
        None,
        description="the dim that extra leading dims split (row-wise operators: rows): inputs "
        "whose shape starts with it are drawn at rank 1 (when it is 1) up to `max_rank`",
    )
    max_rank: int = Field(
        2, ge=2, le=4, description="the highest rank an input that starts with `lead` takes"
    )
    heads: str | None = Field(
        None,
        description="without a `lead`: the dim that a leading view slices in the inputs that "
        "are 3-D already (the Hq of an attention q [B, Hq, D], the q heads of a fused qkv)",
        examples=["Hq"],
    )
    derived: list[str] = Field(
        default_factory=list,
        description="dims not drawn: the reference's `derive_dims(dims) -> dict` computes them "
        "from the drawn ones (decode_attn's table width P and cache pages N, which the "
        "lengths fix)",
        examples=[["P", "N"]],
    )
    cpu_elements: int = Field(
        1 << 16,
        ge=1,
        description="the most elements of one input in a CPU draw (the interpreter's budget)",
    )
    cuda_elements: int = Field(
        1 << 24, ge=1, description="the most elements of one input in a CUDA draw"
    )
    draws: Draws = Field(default_factory=Draws, description="how many cases each run draws")
    contiguous_only: str | None = Field(
        None,
        description="why drawn layouts cannot apply (a reference's own make_inputs that lays "
        "its tensors out by itself); `layouts` is then contiguous alone",
    )

    @field_validator("layouts", "dists", mode="before")
    @classmethod
    def _all(cls, value: Any, info: Any) -> Any:
        # An operator defined on every layout or family says so, not the list again: the list
        # then grows with the families the judge learns.
        if value == "all":
            return list(get_args(Layout if info.field_name == "layouts" else Dist))
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Domain:
        for name, dim in self.dims.items():
            if dim.at_most is not None:
                order = list(self.dims)
                if dim.at_most not in self.dims or order.index(dim.at_most) > order.index(name):
                    raise ValueError(
                        f"dims.{name}.at_most: {dim.at_most!r} is not a dim drawn before it"
                    )
            if isinstance(dim.multiple_of, str):
                order = list(self.dims)
                unit = self.dims.get(dim.multiple_of)
                if unit is None or order.index(dim.multiple_of) > order.index(name):
                    raise ValueError(
                        f"dims.{name}.multiple_of: {dim.multiple_of!r} is not a dim drawn before it"
                    )
                if any(unit.hi(cpu) > dim.hi(cpu) for cpu in (True, False)):
                    raise ValueError(
                        f"dims.{name}.multiple_of: {dim.multiple_of!r} may exceed it (its top, "
                        "on CPU too, must be at most this dim's)"
                    )
        if self.lead is not None and self.lead not in self.dims:
            raise ValueError(f"lead: {self.lead!r} is not one of dims {sorted(self.dims)}")
        if self.heads is not None and (self.heads not in self.dims or self.dims[self.heads].maker):
            raise ValueError(f"heads: {self.heads!r} is not a shape's dim of {sorted(self.dims)}")
        split = self.lead is not None and self.max_rank >= 3
        if "leading" in self.layouts and not split and self.heads is None:
            raise ValueError(
                "layouts: leading needs `lead` and max_rank >= 3 (a 3-D view), or `heads`"
            )
        if set(self.derived) & set(self.dims):
            raise ValueError(f"derived: {sorted(set(self.derived) & set(self.dims))} also drawn")
        if self.contiguous_only is not None and self.layouts != ["contiguous"]:
            raise ValueError(f"layouts: {self.layouts} with contiguous_only; expected contiguous")
        return self

    def fits(self, needed: set[str], dtypes: list[str]) -> None:
        """The domain draws what the sizes hold: the dims the spec needs, in its dtypes."""
        shaped = {n for n, d in self.dims.items() if not d.maker} | set(self.derived)
        if shaped != needed:
            raise ValueError(
                f"dims: {sorted(shaped)}, the inputs, reduction and bucket use {sorted(needed)}"
            )
        if self.dtypes is not None and not set(self.dtypes) <= set(dtypes):
            raise ValueError(f"dtypes: {self.dtypes} outside SPEC's dtypes {dtypes}")
