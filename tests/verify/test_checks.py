"""The precision rule: a candidate may be a few times less accurate than torch in the same dtype,
above a floor of fp32 rounding noise, and no more."""

import torch

from kernelgen.verify import checks


def test_an_approximate_exp_is_noise() -> None:
    # What a kernel with tl.exp gave on the H200 at one/float32/wide, against torch's expf.
    assert checks.precision(1.05e-6, 2.75e-8, torch.float32, 2.0) is None


def test_half_precision_arithmetic_is_caught() -> None:
    # fp16 math rounds each step to 2^-11: a mean relative error of ~2.4e-4 at best.
    failure = checks.precision(2.4e-4, 3e-8, torch.float32, 2.0)
    assert failure is not None and failure.category == "precision"
    assert "computed in lower precision?" in failure.reason


def test_the_ratio_bites_above_the_floor() -> None:
    # In bf16 torch's own error is large; a candidate 3x worse than it is still caught.
    assert checks.precision(2.0e-3, 1.0e-3, torch.bfloat16, 2.0) is None
    assert checks.precision(3.0e-3, 1.0e-3, torch.bfloat16, 2.0) is not None
