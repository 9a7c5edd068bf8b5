"""docs/spec.md: the reference of every SPEC field, rendered from the contract's pydantic models.

Meanings are the models' `Field(description=...)`, so the page cannot say other than the code;
examples come from a model's own `Field(examples=[...])` where it has them, else from EXAMPLES,
values that the shipped references/*.py use (each names the operator it comes from).

    python -m kernelgen.spec.fields            # print the page
    python -m kernelgen.spec.fields --write    # write docs/spec.md (tests/spec/test_fields.py
                                               # fails when the file differs)
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from kernelgen.spec import (
    BenchShape,
    Case,
    Cost,
    Dist,
    DType,
    Layout,
    Precision,
    ScalarInput,
    Size,
    SpecData,
    TensorDType,
    TensorInput,
    Tolerance,
)
from kernelgen.spec.domain import Dim, Domain, Draws, Placement
from kernelgen.spec.limits import Limit
from kernelgen.spec.origin import Origin
from kernelgen.spec.routes import RULES, Route, RouteArg, Takes

DOC = Path(__file__).resolve().parents[2] / "docs" / "spec.md"


class Section(BaseModel):
    """One model of the contract on the page: where a reference writes it, and what it is."""

    model: type[BaseModel]
    title: str
    anchor: str
    blurb: str


SECTIONS: list[Section] = [
    Section(
        model=SpecData,
        title="`SPEC`",
        anchor="spec",
        blurb="The dict `SPEC` in `references/OP.py`. Unknown keys are an error that names the "
        "file and the field.",
    ),
    Section(
        model=TensorInput,
        title="`SPEC.inputs[]`: a tensor",
        anchor="tensorinput",
        blurb="An entry of `inputs` without `kind` is a tensor. Its values are drawn from its "
        "distribution (or the case's) in float64, `offset` added, cast to its dtype and laid "
        "out as the size says.",
    ),
    Section(
        model=ScalarInput,
        title="`SPEC.inputs[]`: a scalar",
        anchor="scalarinput",
        blurb='An entry with `kind: "scalar"`: a Python number. Give `value` or `dim`, not both.',
    ),
    Section(
        model=Size,
        title="`SPEC.sizes[]`",
        anchor="size",
        blurb="A correctness size. Its cases are its dtypes x its dists; each run draws fresh "
        "values for every case from a new seed.",
    ),
    Section(
        model=BenchShape,
        title="`SPEC.bench[]`",
        anchor="benchshape",
        blurb="A shape the candidate is timed at on CUDA, against torch eager and "
        "torch.compile; the tuner tunes per `bucket` of these.",
    ),
    Section(
        model=Tolerance,
        title="`SPEC.tolerances{dtype}`",
        anchor="tolerance",
        blurb="Overrides torch.testing's defaults for one dtype (float32 1.3e-6/1e-5, float16 "
        "1e-3/1e-5, bfloat16 1.6e-2/1e-5).",
    ),
    Section(
        model=Domain,
        title="`SPEC.domain`",
        anchor="domain",
        blurb="The domain the inputs come from. Each run draws cases from it on top of "
        "`sizes`, reproducibly from the run's seed: every dim as one of the sizes that break "
        "kernels in turn, every layout, dtype and distribution in turn. A drawn case's name "
        "says it in full (`drawn2:cols=1025,rows=6:x=leading[2,3,1025]strides[8200,1025,1]"
        "offset2050/float32/spike`), and judging again with the run's seed "
        "(`kernelgen verify OP FILE --seed S`) draws it again.",
    ),
    Section(
        model=Dim,
        title="`SPEC.domain.dims{dim}`",
        anchor="dim",
        blurb="One dim's values. A range is drawn as 1, a prime, another odd number, a power of "
        "two or one either side of it, a bench shape's value or one either side, its largest, "
        "or any value between; each kind in turn over a run's draws, within `cpu_max` on CPU "
        "and within the domain's element budget.",
    ),
    Section(
        model=Draws,
        title="`SPEC.domain.draws`",
        anchor="draws",
        blurb="How many cases a run draws, per device: a few on CPU, where the interpreter "
        "runs every program one after another; more on CUDA.",
    ),
    Section(
        model=Placement,
        title="`Size.layout` as a placement",
        anchor="placement",
        blurb="A layout with its numbers fixed, as a drawn case's size holds it (a fixed size "
        "may give one too). A bare layout draws its numbers per run.",
    ),
    Section(
        model=Limit,
        title="`SPEC.limits[]`",
        anchor="limit",
        blurb="A size where index arithmetic breaks: an input of 2^31 elements or more (an "
        "int32 offset overflows) or 65536 rows or more (more programs than a CUDA grid's y or "
        "z axis takes). Each is one case, `limit/NAME:dims/dtype/dist`, run on CUDA only (on "
        "CPU it is reported not run). Its inputs are drawn on the GPU from the run's seed, a "
        "block of rows at a time by the reference's own maker or the default one (in one call "
        "where the reference gathers the sampled rows itself, `limit_rows`: decode_attn's "
        "requests, whose block table points into a paged KV cache, sparse_attn's tokens, whose "
        "indices select rows of a KV pool, and fused_moe's tokens, routed to experts whose "
        "weights are one tensor); the candidate runs on all "
        "of them, and its output is checked on about 130 rows (the first "
        "and last, those around 2^31 and 2^32 elements and program id 65536, the rest drawn "
        "from the seed) against the reference on those rows in float64, with the error ratio. "
        "A case runs one call and one more per other autotune config.",
    ),
    Section(
        model=Origin,
        title="`SPEC.origin`",
        anchor="origin",
        blurb="Written by `kernelgen import kernelbench`, never by hand: where an imported "
        "operator came from. Its reference runs the problem's `Model`, whose source it embeds "
        "and checks against `sha256`; the operator may have no seed (torch eager is then the "
        "baseline, and the first accepted candidate the first best).",
    ),
    Section(
        model=Route,
        title="`SPEC.routes[]`",
        anchor="route",
        blurb="A torch function whose calls `kernelgen_ops.enable()` may send to the kernel. "
        "Promotion records the routes of a measured kernel in MANIFEST.json; the library "
        "generates one route per function from them, which takes the kernel only where every "
        "argument is a value its rule lets through and goes to torch's function otherwise.",
    ),
    Section(
        model=RouteArg,
        title="`SPEC.routes[].args{param}`",
        anchor="routearg",
        blurb="One parameter of the torch function: the values the kernel takes, and the "
        "reference's parameter it is passed as. Each of the reference's parameters is passed "
        "by exactly one.",
    ),
    Section(
        model=Cost,
        title="What `cost(dims, itemsize)` returns",
        anchor="cost",
        blurb="The cost model, per call: every timing is put against the device's measured "
        "bandwidth and matmul rate with it, and a time below that floor is flagged.",
    ),
    Section(
        model=Case,
        title="`case`: what `compare(out, ref, case)` is given",
        anchor="case",
        blurb="Built by kernelgen from a size, not written in SPEC. `case.dims` is the size's "
        "dims; `case.interpreter` says whether the CPU interpreter runs it faithfully. "
        "`make_inputs(size, dtype, dist, generator)` gets the size (or a bench shape) itself.",
    ),
]

# Examples from the shipped references: (value, where it comes from). A field that no shipped
# reference sets shows a value it could take, marked "not shipped".
EXAMPLES: dict[str, tuple[Any, str]] = {
    "SpecData.inputs": ([{"name": "x", "shape": ["rows", "cols"]}], "softmax"),
    "SpecData.dtypes": (["float32", "float16", "bfloat16"], "softmax"),
    "SpecData.dists": (["normal", "wide", "neg_inf"], "softmax"),
    "SpecData.sizes": (
        [{"name": "odd", "dims": {"rows": 37, "cols": 1823}, "interpreter": True}],
        "softmax",
    ),
    "SpecData.bench": (
        [{"name": "mixtral_8x7b_1x32000", "dims": {"rows": 1, "cols": 32000}, "was": ["1x32000"]}],
        "softmax",
    ),
    "SpecData.reduction": ("cols", "softmax"),
    "SpecData.bucket": (["rows", "cols"], "softmax"),
    "SpecData.tolerances": (
        {"float16": {"rtol": 2e-3, "atol": 1e-5}},
        "not shipped: every reference keeps the defaults",
    ),
    "SpecData.error_ratio": (4.0, "not shipped"),
    "SpecData.domain": (
        {
            "dims": {"cols": {"range": [1, 262144], "cpu_max": 12289}},
            "dists": ["normal", "spike"],
        },
        "softmax's, shortened",
    ),
    "Domain.dims": ({"D": {"choices": [64, 128, 256], "cpu_max": 256}}, "hadamard's, shortened"),
    "Domain.dtypes": (["float16"], "not shipped: every domain draws its SPEC's dtypes"),
    "Domain.layouts": (["contiguous", "strided", "transposed", "offset", "expanded"], "topk"),
    "Domain.dists": (["normal", "uniform", "small", "sorted_up", "constant"], "router_gemm's"),
    "Domain.lead": ("rows", "softmax"),
    "Domain.max_rank": (4, "softmax"),
    "Domain.cpu_elements": (65536, "the default"),
    "Domain.cuda_elements": (16777216, "the default"),
    "Domain.draws": ({"cpu": 4, "cuda": 12}, "the default"),
    "Domain.contiguous_only": (
        "make_inputs builds the paged KV cache itself",
        "not shipped",
    ),
    "SpecData.limits": (
        [
            {
                "name": "rows",
                "dims": {"rows": 65600, "cols": 32768},
                "dtype": "bfloat16",
                "rows": "rows",
            }
        ],
        "softmax's first",
    ),
    "Limit.name": ("rows", "softmax"),
    "Limit.dims": ({"rows": 262208, "cols": 8192}, "rms_norm's"),
    "Limit.dtype": ("bfloat16", "softmax"),
    "SpecData.origin": (
        {
            "source": "kernelbench",
            "file": "KernelBench/level1/23_Softmax.py",
            "sha256": "0" * 64,
            "level": 1,
            "problem": 23,
            "title": "Softmax",
            "cpu": True,
        },
        "not shipped: an imported problem's",
    ),
    "Origin.file": ("KernelBench/level1/23_Softmax.py", "an imported problem's"),
    "Origin.level": (2, "a fusion"),
    "Origin.problem": (23, "an imported problem's"),
    "Origin.title": ("Gemm_Multiply_LeakyReLU", "level 2, problem 12"),
    "Origin.convolution": (True, "level 1, problem 50"),
    "Origin.cpu": (False, "a problem whose shapes are literals in get_inputs()"),
    "Origin.notes": (
        ["targets: drawn by the problem's own get_inputs() (integer values)"],
        "an imported loss",
    ),
    "Limit.rows": ("M", "router_gemm's tokens"),
    "Limit.dist": ("normal", "the default"),
    "Dim.range": ((1, 262144), "softmax's cols"),
    "Dim.choices": ([64, 128, 256, 512, 1024, 2048, 4096], "hadamard's D"),
    "Dim.cpu_max": (3001, "topk's N"),
    "Dim.at_most": ("N", "topk's k"),
    "Draws.cpu": (4, "the default"),
    "Draws.cuda": (12, "the default"),
    "Placement.kind": ("leading", "a drawn case"),
    "Placement.pad": (5, "a drawn case"),
    "Placement.start": (2, "a drawn case"),
    "Placement.offset": (13, "a drawn case"),
    "SpecData.launcher_casts": (True, "not shipped"),
    "Route.function": ("torch.nn.functional.rms_norm", "rms_norm"),
    "Route.params": ("input, normalized_shape, weight=None, eps=None", "rms_norm"),
    "Route.args": (
        {"input": {"takes": "input", "kernel": "x"}, "dim": {"takes": "last_dim"}},
        "softmax's torch.Tensor.softmax, less its dtype",
    ),
    "RouteArg.takes": ("last_shape", "rms_norm's normalized_shape"),
    "RouteArg.kernel": ("weight", "rms_norm's weight"),
    "RouteArg.value": (1.1920928955078125e-07, "rms_norm's eps: float32's epsilon for None"),
    "TensorInput.kind": ("tensor", "any"),
    "TensorInput.name": ("weight", "rms_norm"),
    "TensorInput.shape": (["M", "K/128"], "fp8_gemm's a_scale"),
    "TensorInput.dtype": ("int32", "decode_attn's block_table"),
    "TensorInput.dist": ("uniform", "rms_norm's weight"),
    "TensorInput.offset": (1.0, "rms_norm's weight"),
    "TensorInput.layout_varies": (False, "rms_norm's weight"),
    "ScalarInput.kind": ("scalar", "rms_norm's eps"),
    "ScalarInput.name": ("eps", "rms_norm"),
    "ScalarInput.value": (1e-6, "rms_norm's eps"),
    "ScalarInput.dim": ("k", "topk's k"),
    "ScalarInput.draw": ([1e-8, 1e-2], "rms_norm's eps"),
    "Size.name": ("odd", "softmax"),
    "Size.dims": ({"rows": 37, "cols": 1823}, "softmax"),
    "Size.shapes": ({"x": [2, 3, 50]}, "softmax's rank3"),
    "Size.layout": ("strided", "softmax"),
    "Size.interpreter": (True, "softmax's odd"),
    "Size.dtypes": (["float16", "bfloat16"], "softmax's many_rows"),
    "Size.dists": (["normal", "wide", "neg_inf", "specials"], "softmax's odd"),
    "BenchShape.name": ("mixtral_8x7b_1x32000", "softmax: a model's, kernelgen/spec/models.py"),
    "BenchShape.dims": ({"rows": 1, "cols": 32000}, "softmax"),
    "BenchShape.dtype": ("float32", "topk"),
    "BenchShape.was": (["1x32000"], "softmax's mixtral_8x7b_1x32000"),
    "Tolerance.rtol": (1.6e-2, "bfloat16's default"),
    "Tolerance.atol": (1e-5, "bfloat16's default"),
    "Cost.bytes": (128000, "softmax at 1x32000 in bf16: 2 * rows * cols * itemsize"),
    "Cost.flops": (160000, "softmax at 1x32000: 5 * rows * cols"),
    "Cost.flops_at": ("fp8", "fp8_gemm"),
    "Case.name": ("odd/float32/wide", "softmax"),
    "Case.size": (
        {"name": "odd", "dims": {"rows": 37, "cols": 1823}, "interpreter": True},
        "softmax",
    ),
    "Case.dtype": ("float32", "softmax"),
    "Case.dist": ("wide", "softmax"),
    "Case.fixed_dtypes": (("float32",), "router_gemm: its weights stay fp32"),
    "Case.drawn": (True, "a drawn case"),
    "Case.limit": ("rows", "softmax's limit cases"),
}

# What each named value means, where the name alone does not say it (kernelgen/spec/inputs.py
# draws the distributions and lays out the layouts).
VALUE_MEANINGS: dict[str, dict[str, str]] = {
    "Dist": {
        "normal": "N(0, 1)",
        "uniform": "U(-1, 1)",
        "wide": "N(0, 40^2): far from 0, where skipping a max overflows",
        "small": "N(0, 1e-3^2): where an epsilon added to a mean square is not negligible",
        "neg_inf": "normal with about a tenth at -inf; every row keeps a finite entry (masked "
        "scores)",
        "specials": "normal with a few NaN, +inf and -inf; from 3 rows on, one row all -inf and "
        "another holding a NaN",
        "large": "magnitudes 2^8 to 2^12 in fp16 (finite, their squares not), 2^20 to 2^40 in "
        "the others, random signs",
        "spike": "normal, each row with one value of 1024 to 2048 in its last quarter: after "
        "the first block of any kernel whose block is at most 3/4 of the row",
        "negative": "every value below zero: -(|N(0, 1)| + a shift of 1e-2 to 1e3 per row)",
        "sorted_up": "normal, each row sorted ascending (its max last)",
        "sorted_down": "normal, each row sorted descending",
        "constant": "each row one normal value throughout",
        "ties": "normal rounded to multiples of 0.5: many equal values",
        "denormal": "the dtype's subnormals: every entry of odd rows, about half of even rows' "
        "(the rest normal)",
    },
    "Layout": {
        "contiguous": "dense, row-major",
        "strided": "each row padded by 3-15 elements (NaN in the padding): a leading stride "
        "larger than the row",
        "transposed": "column-major: the last two dims swapped in memory, same values",
        "leading": "a slice of a wider tensor (NaN around it) along the second-to-last dim, the "
        "q or k heads of a fused qkv [tokens, heads, dim], or along the last for 2-D: leading "
        "strides that fold into no single row stride",
        "offset": "dense, starting 1 to 37 elements into its storage (NaN before it)",
        "expanded": "the first leading dim of more than one entry broadcast: stride 0",
    },
    "DType": {
        "float32": "runs on CPU where the size says `interpreter`",
        "float16": "runs on CPU where the size says `interpreter`",
        "bfloat16": "GPU only: the interpreter's bf16 arithmetic is wrong",
    },
    "TensorDType": {
        "case": "the case's dtype",
        "float32": "float32 in every case (router_gemm's weights, fp8 scales)",
        "float16": "float16 in every case",
        "bfloat16": "bfloat16 in every case (GPU only)",
        "float8_e4m3fn": "fp8 operands (with fp32 scales as inputs of their own)",
        "int32": "indices, tables, lengths: needs the reference's make_inputs",
        "int64": "as int32",
        "bool": "masks: needs the reference's make_inputs",
    },
    "Precision": {
        "bf16": "the measured bf16 matmul rate",
        "fp8": "twice the bf16 rate",
    },
    "Takes": RULES,
}
ALIASES: dict[Any, str] = {
    DType: "DType",
    TensorDType: "TensorDType",
    Dist: "Dist",
    Layout: "Layout",
    Precision: "Precision",
    Takes: "Takes",
}


def literal(value: Any) -> str:
    """Python source for a value, in the references' own spelling (double quotes)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        return re.sub(r"e([+-])0(\d)", r"e\1\2", repr(value))  # 1e-6, as references write it
    return repr(value)


def type_name(annotation: Any) -> str:
    """A field's type as a reader writes it, the contract's models linked to their sections."""
    if annotation in ALIASES:
        return f"[{ALIASES[annotation]}](#values)"
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is Literal:
        return " | ".join(f"`{literal(a)}`" for a in args)
    if origin in (list, tuple, dict):
        shown = [type_name(a) if a is not Ellipsis else "..." for a in args]
        return f"{origin.__name__}[{', '.join(shown)}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        section = next((s for s in SECTIONS if s.model is annotation), None)
        return f"[{annotation.__name__}](#{section.anchor})" if section else annotation.__name__
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(info: FieldInfo) -> str:
    out = []
    for m in info.metadata:
        if isinstance(m, annotated_types.MinLen):
            out.append(f"at least {m.min_length}")
        elif isinstance(m, annotated_types.Gt):
            out.append(f"> {m.gt}")
        elif isinstance(m, annotated_types.Ge):
            out.append(f">= {m.ge}")
    return ", ".join(out)


def default_text(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return f"`{literal(info.default_factory())}`"  # type: ignore[call-arg]
    if info.default is PydanticUndefined:
        return "required"
    return f"`{literal(info.default)}`"


def example_text(model: type[BaseModel], name: str, info: FieldInfo) -> str:
    if info.examples:
        return " ".join(f"`{literal(e)}`" for e in info.examples)
    found = EXAMPLES.get(f"{model.__name__}.{name}")
    if found is None:
        return ""
    value, where = found
    return f"`{literal(value)}`" + (f" ({where})" if where else "")


def _cell(text: str) -> str:
    """Markdown table cells: a pipe (in code spans too) is escaped, GFM's rule."""
    return text.replace("|", "\\|").replace("\n", " ")


def model_table(model: type[BaseModel]) -> list[str]:
    lines = ["| field | type | default | meaning | example |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        kind = type_name(info.annotation)
        bounds = _bounds(info)
        cells = [
            f"`{name}`",
            kind + (f", {bounds}" if bounds else ""),
            default_text(info),
            info.description or "",
            example_text(model, name, info),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _values_section() -> list[str]:
    lines = [
        '<a id="values"></a>',
        "",
        "## Values",
        "",
        "| type | value | meaning |",
        "|---|---|---|",
    ]
    for alias, name in ALIASES.items():
        meanings = VALUE_MEANINGS.get(name, {})
        for value in get_args(alias):
            lines.append(
                "| "
                + " | ".join(
                    _cell(c) for c in (name, f"`{literal(value)}`", meanings.get(value, ""))
                )
                + " |"
            )
    return lines


HEADER = """\
# SPEC field reference

Generated from the pydantic models in `kernelgen/spec/__init__.py` and `domain.py` by
`python -m kernelgen.spec.fields --write`; do not edit by hand (`tests/spec/test_fields.py` fails
when this page differs from what the models render). How to write an operator, step by step:
[operators.md](operators.md).

`references/OP.py` holds:

- `OP(...)`: the reference, in plain PyTorch, named like the operator; the ground truth, evaluated
  in float64 on upcast inputs. Its parameters are `SPEC.inputs`, in order.
- `SPEC`: a dict, validated into the models below.
- `cost(dims, itemsize) -> {"bytes": ..., "flops": ...}`: what one call must move and compute
  ([Cost](#cost)); `itemsize` is the case dtype's, and an input with a dtype of its own counts
  its own bytes.
- optionally `make_inputs(size, dtype, dist, generator) -> list`: the arguments in the order of
  `SPEC.inputs` (CPU tensors), for inputs with invariants (indices, tables, lengths); what it
  returns is checked against `SPEC.inputs`.
- optionally `compare(out, ref, case) -> str | None` (or `compare(out, ref, case, inputs)`): the
  operator's own rule for a right answer (indices as a set, values after dequantization); `None`
  accepts, a string is the reason for rejecting.
- optionally `eager(...)`: the operator as torch users call it (a fused torch op), the peer that
  speed is measured against; the reference is the peer when there is none.

A shape entry of a tensor input is an int, a dim name, `k*name` (silu_and_mul's input is `2*d`
wide) or `name/q`, the q-wide blocks that cover the dim, ceil(dim / q) (fp8_gemm's scales).
"""


def render() -> str:
    """The whole page."""
    lines = [HEADER.rstrip("\n")]
    for s in SECTIONS:
        lines += ["", f'<a id="{s.anchor}"></a>', "", f"## {s.title}", "", s.blurb, ""]
        lines += model_table(s.model)
    lines += [""] + _values_section()
    return "\n".join(lines) + "\n"


def undocumented(sections: list[Section] = SECTIONS) -> list[str]:
    """`Model.field` for every field of the contract without a description."""
    return [
        f"{s.model.__name__}.{name}"
        for s in sections
        for name, info in s.model.model_fields.items()
        if not (info.description or "").strip()
    ]


def main(argv: list[str]) -> int:
    if argv not in ([], ["--write"]):
        print("usage: python -m kernelgen.spec.fields [--write]", file=sys.stderr)
        return 2
    text = render()
    if argv:
        DOC.parent.mkdir(parents=True, exist_ok=True)
        DOC.write_text(text)
        print(f"wrote {DOC}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
