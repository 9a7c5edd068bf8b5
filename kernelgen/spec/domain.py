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

    @model_validator(mode="after")
    def _range_or_choices(self) -> Dim:
        if (self.range is None) == (self.choices is None):
            raise ValueError("give either range or choices, not both or neither")
        if self.range is not None and not (1 <= self.range[0] <= self.range[1]):
            raise ValueError(f"range {list(self.range)}: expected 1 <= lo <= hi")
        if self.choices is not None and (not self.choices or min(self.choices) < 1):
            raise ValueError(f"choices {self.choices}: expected positive ints")
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
        description="every dim the inputs' shapes, `reduction`, `bucket` and dim scalars use; "
        "drawn in this order (a dim drawn first may take most of the element budget)"
    )
    dtypes: list[DType] | None = Field(
        None,
        description="the case dtypes drawn from, a subset of SPEC's `dtypes` (None: all of "
        "them); a CPU draw takes the interpreter's (never bf16)",
    )
    layouts: list[Layout] = Field(
        ["contiguous"],
        min_length=1,
        description="the layouts drawn for the inputs whose `layout_varies` (\"all\": every one)",
    )
    dists: list[Dist] = Field(
        min_length=2,
        description="the value distributions drawn from, those the operator's semantics allow "
        "(no NaN where the reference is undefined on it; \"all\": every one)",
    )
    lead: str | None = Field(
        None,
        description="the dim that extra leading dims split (row-wise operators: rows): inputs "
        "whose shape starts with it are drawn at rank 1 (when it is 1) up to `max_rank`",
    )
    max_rank: int = Field(
        2, ge=2, le=4, description="the highest rank an input that starts with `lead` takes"
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
        if self.lead is not None and self.lead not in self.dims:
            raise ValueError(f"lead: {self.lead!r} is not one of dims {sorted(self.dims)}")
        if "leading" in self.layouts and (self.lead is None or self.max_rank < 3):
            raise ValueError("layouts: leading needs `lead` and max_rank >= 3 (a 3-D view)")
        if self.contiguous_only is not None and self.layouts != ["contiguous"]:
            raise ValueError(f"layouts: {self.layouts} with contiguous_only; expected contiguous")
        return self

    def fits(self, needed: set[str], dtypes: list[str]) -> None:
        """The domain draws what the sizes hold: the dims the spec needs, in its dtypes."""
        if set(self.dims) != needed:
            raise ValueError(
                f"dims: {sorted(self.dims)}, the inputs, reduction and bucket use {sorted(needed)}"
            )
        if self.dtypes is not None and not set(self.dtypes) <= set(dtypes):
            raise ValueError(f"dtypes: {self.dtypes} outside SPEC's dtypes {dtypes}")
