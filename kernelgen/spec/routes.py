"""An operator's torch entry points, declared in its SPEC (`routes`): the torch functions whose
calls kernelgen_ops.enable() may send to the kernel, and how their arguments map onto the
kernel's.

A route takes a call only where torch would compute exactly what the kernel computes; every other
call goes to torch's function unchanged. So each parameter of the entry point says which of its
values the kernel takes (`takes`) and, where the kernel needs it, which of the kernel's
parameters it is passed as (`kernel`). The entry point's first parameter is the input: the
tensor the kernel reads and whose shape keys the dispatch.

Promotion records the routes of a measured kernel in MANIFEST.json, and the library's
_routing.py generates one function per entry point from them.
"""

from __future__ import annotations

import ast
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Takes = Literal["input", "per_column", "last_dim", "last_shape", "none", "any", "number", "equals"]

# What each rule lets through to the kernel; any other value sends the call to torch.
RULES: dict[str, str] = {
    "input": "the tensor the kernel reads: a plain float16, bfloat16 or float32 tensor on CUDA "
    "(float16, float32 on CPU under the interpreter), not empty, no gradient wanted, no "
    "autocast; the route keys its dispatch by its shape",
    "per_column": "a tensor as the input is, of its dtype and device, with one entry per "
    "element of the input's last dimension (a norm's weight)",
    "last_dim": "an int naming the input's last dimension (-1 or ndim - 1)",
    "last_shape": "a list, tuple or torch.Size equal to [the input's last dimension] (a norm's "
    "normalized_shape)",
    "none": "None only (a dtype= cast or an out= tensor stays torch's)",
    "any": "any value: torch's own, the kernel does not need it (F.softmax's _stacklevel)",
    "number": "a Python int or float, passed as a float; None too where `value` says what "
    "None stands for (torch's default)",
    "equals": "exactly `value` (F.gelu's approximate='tanh')",
}
# Rules whose argument the kernel must get, and rules whose argument it cannot use.
_PASSED = frozenset({"input", "per_column"})
_NOT_PASSED = frozenset({"none", "any"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RouteArg(_Strict):
    """One parameter of a torch entry point: which of its values the kernel takes, and which
    kernel parameter it becomes."""

    takes: Takes = Field(description="the values the kernel takes (see Values: Takes)")
    kernel: str | None = Field(
        None,
        description="the reference's parameter this argument is passed to the kernel as; None: "
        "checked, not passed",
    )
    value: bool | int | float | str | None = Field(
        None,
        description='for "number": what None stands for (None: a None goes to torch); for '
        '"equals": the one value taken',
    )

    @model_validator(mode="after")
    def _consistent(self) -> RouteArg:
        if self.takes in _PASSED and self.kernel is None:
            raise ValueError(f"takes {self.takes!r}: name the kernel parameter it is passed as")
        if self.takes in _NOT_PASSED and self.kernel is not None:
            raise ValueError(f"takes {self.takes!r}: nothing to pass to the kernel")
        if self.takes == "equals" and self.value is None:
            raise ValueError('takes "equals": give the value (None is takes "none")')
        if self.value is not None and self.takes not in ("number", "equals"):
            raise ValueError(f"takes {self.takes!r}: has no value")
        if self.takes == "number" and type(self.value) not in (int, float, type(None)):
            raise ValueError('takes "number": value must be a number, what None stands for')
        return self


class Route(_Strict):
    """A torch function whose calls may go to the kernel."""

    function: str = Field(
        description="the torch function as its users name it (torch.softmax, "
        "torch.nn.functional.softmax, torch.Tensor.softmax)"
    )
    params: str = Field(
        description="its parameters: its signature's (a Python function) or what torch's "
        "parser takes (a C function); the route takes exactly these (no *args, no **kwargs: "
        "packing them costs as much as the rest of the route), literal defaults only"
    )
    args: dict[str, RouteArg] = Field(
        description="per parameter, which of its values the kernel takes and what it becomes; "
        "the first parameter takes the input"
    )

    @model_validator(mode="after")
    def _well_formed(self) -> Route:
        parts = self.function.split(".")
        if parts[0] != "torch" or len(parts) < 2 or not all(p.isidentifier() for p in parts):
            raise ValueError(f"function: {self.function!r} is not a dotted name under torch")
        names = self.names
        if set(self.args) != set(names):
            missing = [n for n in names if n not in self.args]
            extra = [n for n in self.args if n not in names]
            raise ValueError(
                f"args of {self.function}: every parameter once; missing {missing}, "
                f"not parameters {extra}"
            )
        if self.args[names[0]].takes != "input":
            raise ValueError(f"args.{names[0]}: the first parameter takes the input")
        inputs = [n for n in names if self.args[n].takes == "input"]
        if len(inputs) != 1:
            raise ValueError(f"args of {self.function}: one input, found {inputs}")
        targets = [a.kernel for a in self.args.values() if a.kernel is not None]
        if len(set(targets)) != len(targets):
            raise ValueError(f"args of {self.function}: a kernel parameter passed twice")
        return self

    @property
    def names(self) -> list[str]:
        """The parameter names, in order (keyword-only ones last)."""
        return [a.arg for a in _signature(self.params).args + _signature(self.params).kwonlyargs]

    @property
    def passes(self) -> list[str]:
        """The kernel parameters this route passes."""
        return [a.kernel for a in self.args.values() if a.kernel is not None]


def _signature(params: str) -> ast.arguments:
    """The parameters, parsed; literal defaults only, since the library compiles them into
    the route."""
    try:
        fn = ast.parse(f"def route({params}):\n    pass\n").body[0]
    except SyntaxError:
        raise ValueError(f"params: {params!r} is not a parameter list") from None
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    if a.vararg or a.kwarg or a.posonlyargs or not a.args:
        raise ValueError(f"params: {params!r}: named parameters only, the first positional")
    for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
        try:
            ast.literal_eval(default)
        except ValueError:
            raise ValueError(
                f"params: {params!r}: default {ast.unparse(default)} is not a literal"
            ) from None
    return a
