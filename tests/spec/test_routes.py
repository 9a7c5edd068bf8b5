"""SPEC.routes: an operator's torch entry points, declared as data; a declaration that the
library could not turn into a route is refused where it is written, naming the field."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kernelgen.errors import SpecError
from kernelgen.spec import load_spec
from kernelgen.spec.routes import RULES, Route, Takes

ROOT = Path(__file__).resolve().parents[2]

SOFTMAX = {
    "function": "torch.Tensor.softmax",
    "params": "self, dim, dtype=None",
    "args": {
        "self": {"takes": "input", "kernel": "x"},
        "dim": {"takes": "last_dim"},
        "dtype": {"takes": "none"},
    },
}


def _with(**over: Any) -> dict[str, Any]:
    return {**SOFTMAX, **over}


def _args(**over: Any) -> dict[str, Any]:
    return {**SOFTMAX["args"], **over}


def test_the_shipped_declarations() -> None:
    softmax, rms_norm = load_spec("softmax").data.routes, load_spec("rms_norm").data.routes
    assert [r.function for r in softmax] == [
        "torch.softmax",
        "torch.nn.functional.softmax",
        "torch.Tensor.softmax",
    ]
    assert all(r.passes == ["x"] for r in softmax)
    (norm,) = rms_norm
    assert norm.names == ["input", "normalized_shape", "weight", "eps"]
    assert norm.passes == ["x", "weight", "eps"]
    assert norm.args["eps"].value == 1.1920928955078125e-07  # torch's eps=None, float32's
    assert load_spec("silu_and_mul").data.routes == []  # no torch entry point of its own


def test_keyword_only_parameters_are_parameters_too() -> None:
    route = Route.model_validate(
        {
            "function": "torch.softmax",
            "params": "input, dim, dtype=None, *, out=None",
            "args": {
                "input": {"takes": "input", "kernel": "x"},
                "dim": {"takes": "last_dim"},
                "dtype": {"takes": "none"},
                "out": {"takes": "none"},
            },
        }
    )
    assert route.names == ["input", "dim", "dtype", "out"] and route.passes == ["x"]


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (_with(function="numpy.softmax"), "not a dotted name under torch"),
        (_with(function="torch.nn.functional."), "not a dotted name under torch"),
        (_with(params="self, dim, dtype=None,,"), "is not a parameter list"),
        (_with(params="self, *dims"), "named parameters only"),
        (_with(params="self, dim, **kwargs"), "named parameters only"),
        (_with(params="self, dim, dtype=torch.float32"), "default torch.float32 is not a literal"),
        (_with(args={"self": {"takes": "input", "kernel": "x"}}), "missing ['dim', 'dtype']"),
        (_with(args=_args(out={"takes": "none"})), "not parameters ['out']"),
        (_with(args=_args(self={"takes": "any"})), "the first parameter takes the input"),
        (
            _with(args=_args(dim={"takes": "input", "kernel": "y"})),
            "one input, found ['self', 'dim']",
        ),
        (
            _with(args=_args(dim={"takes": "last_dim", "kernel": "x"})),
            "a kernel parameter passed twice",
        ),
        (_with(args=_args(self={"takes": "input"})), "name the kernel parameter"),
        (
            _with(args=_args(dtype={"takes": "none", "kernel": "dtype"})),
            "nothing to pass to the kernel",
        ),
        (_with(args=_args(dtype={"takes": "equals"})), "give the value"),
        (_with(args=_args(dim={"takes": "last_dim", "value": -1})), "has no value"),
        (_with(args=_args(dtype={"takes": "number", "value": "x"})), "value must be a number"),
        (_with(args=_args(dtype={"takes": "sometimes"})), "takes"),
    ],
)
def test_a_declaration_the_library_could_not_route_is_refused(
    declared: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        Route.model_validate(declared)
    assert message in str(raised.value)


def test_every_rule_is_described() -> None:
    from typing import get_args

    assert set(RULES) == set(get_args(Takes))


def test_a_bad_route_in_a_reference_names_the_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for folder in ("references", "seeds"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    path = tmp_path / "references" / "softmax.py"
    path.write_text(path.read_text().replace('"_stacklevel": {"takes": "any"},', ""))
    with pytest.raises(SpecError, match=r"softmax.py: SPEC\.routes\.1.*missing \['_stacklevel'\]"):
        load_spec("softmax")
