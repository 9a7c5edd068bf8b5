"""The error family: one exit code per kind of failure, one line without library text."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from kernelgen.errors import (
    KernelgenError,
    NoDeviceError,
    SpecError,
    StoreError,
    UsageError,
    first_error,
)


@pytest.mark.parametrize(
    ("error", "code"),
    [(KernelgenError, 1), (UsageError, 2), (NoDeviceError, 2), (SpecError, 2), (StoreError, 2)],
)
def test_exit_codes(error: type[KernelgenError], code: int) -> None:
    # 1: the answer is no or the work failed; 2: what was given is wrong (flag, spec, record).
    assert error("x").exit_code == code


class _Scalar(BaseModel):
    value: float
    draw: tuple[float, float] | None = None

    @field_validator("draw")
    @classmethod
    def _range(cls, draw: tuple[float, float] | None) -> tuple[float, float] | None:
        if draw is not None and not 0 < draw[0] < draw[1]:
            raise ValueError(f"a log-uniform range needs 0 < lo < hi, got {draw}")
        return draw


def test_first_error_drops_pydantics_words() -> None:
    with pytest.raises(ValidationError) as e:
        _Scalar.model_validate({"value": 1.0, "draw": (2, 1)})
    assert "Value error, a log-uniform" in str(e.value)  # what pydantic makes of a ValueError
    assert first_error(e.value) == "draw: a log-uniform range needs 0 < lo < hi, got (2.0, 1.0)"


def test_first_error_keeps_a_plain_message_and_names_the_field() -> None:
    with pytest.raises(ValidationError) as e:
        _Scalar.model_validate({"value": "x"})
    assert first_error(e.value) == (
        "value: Input should be a valid number, unable to parse string as a number"
    )
