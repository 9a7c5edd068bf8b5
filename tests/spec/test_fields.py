"""docs/spec.md is what the contract's models render, and every field of the contract is
described; the page's examples are values its fields accept."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import pytest
from pydantic import BaseModel, Field, create_model

from kernelgen.spec import Dist, Layout, SpecData
from kernelgen.spec.fields import (
    ALIASES,
    DOC,
    EXAMPLES,
    SECTIONS,
    VALUE_MEANINGS,
    Section,
    main,
    render,
    undocumented,
)

ROOT = Path(__file__).resolve().parents[2]


def test_docs_spec_md_is_what_the_models_render() -> None:
    assert DOC == ROOT / "docs" / "spec.md"
    assert DOC.is_file(), "docs/spec.md is missing: python -m kernelgen.spec.fields --write"
    assert DOC.read_text() == render(), (
        "docs/spec.md differs from the models: python -m kernelgen.spec.fields --write"
    )


def test_every_field_of_the_contract_has_a_description() -> None:
    assert undocumented() == []


def test_a_field_without_a_description_is_named() -> None:
    class Bare(BaseModel):
        told: int = Field(0, description="said")
        untold: int = 0

    bare = Section(model=Bare, title="Bare", anchor="bare", blurb="")
    assert undocumented([bare]) == ["Bare.untold"]


def _models_in(annotation: Any) -> set[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found = {annotation}
        for info in annotation.model_fields.values():
            found |= _models_in(info.annotation)
        return found
    args = get_args(annotation)
    if get_origin(annotation) is Annotated:
        args = args[:1]
    return set().union(*(_models_in(a) for a in args)) if args else set()


def test_every_model_a_spec_holds_has_a_section() -> None:
    shown = {s.model for s in SECTIONS}
    assert _models_in(SpecData) <= shown
    assert len({s.anchor for s in SECTIONS}) == len(SECTIONS)


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_each_example_is_a_value_its_field_accepts(key: str) -> None:
    model_name, field = key.split(".")
    model = next((s.model for s in SECTIONS if s.model.__name__ == model_name), None)
    assert model is not None, f"{key}: no section shows {model_name}"
    assert field in model.model_fields, f"{key}: {model_name} has no field {field!r}"
    info = model.model_fields[field]
    value, _ = EXAMPLES[key]
    # The field itself, its bounds (min_length, gt) included, judges the value.
    create_model("Example", v=(info.annotation, info)).model_validate({"v": value})


def test_the_named_values_have_meanings_and_no_stale_ones() -> None:
    for alias in (Dist, Layout):
        assert set(VALUE_MEANINGS[ALIASES[alias]]) == set(get_args(alias))
    for alias, name in ALIASES.items():
        assert set(VALUE_MEANINGS.get(name, {})) <= set(get_args(alias)), name


def test_the_command_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == render()
    assert main(["--nonsense"]) == 2
