"""`kernelgen new OP --like EXISTING`: references/OP.py and seeds/OP.py for a new operator, from
the shape of one that exists.

What it writes, and why. The two files compute EXISTING's own math under the new name (for
`--like silu_and_mul`, the same gated activation), with the contract's whole case grid for that
shape: one element, sizes that are no power of two, rows past a block and past the grid, strided
and transposed layouts, every dtype, NaN and infinities. A kernel engineer's work is then the
operator's math, in the places marked `TODO:`, and its model shapes; everything else
(the SPEC's fields, the tuning convention, the launcher's strides and grid) is already right.
Starting from working files, rather than from blanks, means the first `kernelgen verify` passes,
and every later one answers for the last change alone: a reference changed without the kernel
(or the kernel without the reference) is a rejection that names the case. An identity or a
copy of the input would verify as well, but would teach nothing of the shape: a row-wise scaffold
keeps its reduction, a GEMM its K loop.

The templates (kernelgen/templates/new/<EXISTING>/) are written for the scaffold rather than
copied from references/ and seeds/: the shipped files explain their own operator's numerics (why
softmax's NaN rows are NaN, router_gemm's top-8 bound), which would be wrong under another name.
A GEMM-like scaffold keeps router_gemm's shape but not its routing rules (fp32 weights, a top-8
compare): its docstring says where those go.
"""

from __future__ import annotations

import builtins
import keyword
import re
from pathlib import Path
from string import Template

from pydantic import BaseModel, ConfigDict

from kernelgen import paths
from kernelgen.errors import UsageError
from kernelgen.spec import known_ops

TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "new"
# What the templates mark for the engineer to write (`grep -n TODO:` lists them all).
TODO = "TODO:"


class Shape(BaseModel):
    """What `--like EXISTING` starts from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str  # the shape, as the error for another operator lists it
    computes: str  # what the scaffold's two files compute as written


# Adding a shape is a folder of two templates and a line here.
SHAPES: dict[str, Shape] = {
    "softmax": Shape(kind="row-wise", computes="softmax over the last dimension"),
    "rms_norm": Shape(kind="row-wise", computes="RMSNorm over the last dimension"),
    "silu_and_mul": Shape(kind="elementwise/gated", computes="silu(a) * b of x = [a | b]"),
    "router_gemm": Shape(kind="GEMM-like", computes="x @ w.T, accumulated in fp32"),
}

_NAME = re.compile(r"[a-z][a-z0-9_]*")
# An operator's name is a function in its reference, its seed and kernelgen_ops: it may not
# shadow what those modules use (imports, builtins, the reference's hooks) or what the library
# holds beside its operators (kernelgen/templates/ops_init.py.tmpl, its configs/ folder).
_TAKEN = frozenset(
    {"torch", "triton", "tl", "functools", "math", "nearest_bucket", "cost", "eager", "compare",
     "make_inputs", "available", "enable", "disable", "use", "routed", "set_dispatch",
     "dispatch_mode", "routable", "configs"}
)  # fmt: skip


class Scaffold(BaseModel):
    """What `kernelgen new` wrote."""

    model_config = ConfigDict(extra="forbid")

    op: str
    like: str
    shape: Shape
    reference: Path
    seed: Path
    todos: int  # TODO lines across both files: what is left to write by hand

    def summary(self) -> list[str]:
        """What was written and what to do next, for the terminal."""
        ref, seed = display(self.reference), display(self.seed)
        return [
            f"wrote {ref} and {seed} ({self.shape.kind}, like {self.like}); as written they "
            f"compute {self.shape.computes}",
            f"next: the {self.todos} TODOs (grep -n {TODO} {ref} {seed}), then "
            f"kernelgen verify {self.op} {seed} --device cpu",
        ]


def check_name(op: str) -> None:
    """A new operator's name: a lowercase identifier that shadows nothing its modules use."""
    if not _NAME.fullmatch(op):
        raise UsageError(
            f"{op!r}: an operator name is a lowercase Python identifier (a-z, 0-9 and _, "
            "starting with a letter), e.g. gelu_and_mul"
        )
    if keyword.iskeyword(op):
        raise UsageError(f"{op!r}: a Python keyword cannot name the operator's function")
    if hasattr(builtins, op):
        # A launcher may call the builtin (`max`, `sum`, `len`) in the module that would hide it.
        raise UsageError(
            f"{op!r}: Python's builtin of that name is one a launcher calls; name the operator "
            f"for what it computes (e.g. {op}_rows)"
        )
    if op in _TAKEN:
        raise UsageError(
            f"{op!r}: a name the reference, the seed or kernelgen_ops already uses; pick another"
        )


def shape_of(like: str) -> Shape:
    """The shape the scaffold gives `--like like`. The templates carry everything, so a project
    without references/<like>.py can start from it too."""
    shape = SHAPES.get(like)
    if shape is not None:
        return shape
    if like not in known_ops():
        known = sorted({*known_ops(), *SHAPES})
        raise UsageError(f"--like {like!r}: unknown operator; known: {', '.join(known)}")
    kinds = dict.fromkeys(s.kind for s in SHAPES.values())
    takes = "; ".join(
        f"{kind} ({', '.join(k for k, s in SHAPES.items() if s.kind == kind)})" for kind in kinds
    )
    raise UsageError(f"--like {like}: the scaffold cannot take its shape; it takes {takes}")


def render(op: str, like: str) -> tuple[str, str]:
    """(reference source, seed source) of `op` in the shape of `like`."""
    folder = TEMPLATES / like
    reference = Template((folder / "reference.py.tmpl").read_text()).substitute(op=op)
    seed = Template((folder / "seed.py.tmpl").read_text()).substitute(op=op)
    return reference, seed


def _write_new(path: Path, text: str) -> None:
    """Create `path`; one that appeared since the check is never replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x") as f:
            f.write(text)
    except FileExistsError:
        raise UsageError(f"{display(path)} already exists; pick another name") from None


def display(path: Path) -> str:
    """`path` as the user would name it: relative to the working directory where it can be."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def new_op(op: str, like: str) -> Scaffold:
    """Write references/OP.py and seeds/OP.py in the shape of `like`; both verify on CPU."""
    check_name(op)
    shape = shape_of(like)
    reference = paths.references_dir() / f"{op}.py"
    seed = paths.seeds_dir() / f"{op}.py"
    for path in (reference, seed):
        if path.exists():
            raise UsageError(f"{display(path)} already exists; pick another name")
    ref_text, seed_text = render(op, like)
    _write_new(reference, ref_text)
    try:
        _write_new(seed, seed_text)
    except BaseException:
        reference.unlink()  # both files or neither
        raise
    todos = sum(line.count(TODO) for text in (ref_text, seed_text) for line in text.splitlines())
    return Scaffold(op=op, like=like, shape=shape, reference=reference, seed=seed, todos=todos)
