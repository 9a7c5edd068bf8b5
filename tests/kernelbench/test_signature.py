"""An imported reference's entry is annotated as a shipped operator's is: torch.Tensor for each
tensor input and parameter, a scalar's own type, and what the Model's forward returns. That is
the signature promotion gives the library (kernelgen/package/sources.py reference_api)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelgen.kernelbench import import_paths
from kernelgen.package import reference_api
from kernelgen.spec import load_spec
from kernelgen.spec.inputs import make_inputs

HERE = Path(__file__).parent

# A scaled row-wise max and its argmax: a scalar input, and two outputs.
SCALED_MAX = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """The scaled rows' max and where it is."""

    def __init__(self):
        super().__init__()

    def forward(self, x, scale):
        values, where = torch.max(x * scale, dim=1)
        return values, where.float()


rows = 16
cols = 40


def get_inputs():
    return [torch.randn(rows, cols), 2.5]


def get_init_inputs():
    return []
'''


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "references").mkdir()
    monkeypatch.setenv("KERNELGEN_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _signature(op: str) -> tuple[list[tuple[str, str]], str]:
    params, returns, _ = reference_api(op)
    return [(p.name, p.annotation) for p in params], returns


def test_tensors_and_parameters_are_tensors(project: Path) -> None:
    (result,) = import_paths([HERE / "problems" / "level2" / "1_Gemm_BiasAdd_ReLU.py"])
    assert result.status == "imported", result.reason
    assert _signature(result.op) == (
        [("x", "torch.Tensor"), ("linear_weight", "torch.Tensor"), ("linear_bias", "torch.Tensor")],
        "torch.Tensor",
    )


def test_a_scalar_keeps_its_type_and_several_outputs_are_a_tuple(project: Path) -> None:
    level = project / "kb" / "level1"
    level.mkdir(parents=True)
    (level / "9_Scaled_max.py").write_text(SCALED_MAX)
    (result,) = import_paths([level])
    assert result.status == "imported", result.reason
    op = result.op
    assert _signature(op) == (
        [("x", "torch.Tensor"), ("scale", "float")],
        "tuple[torch.Tensor, torch.Tensor]",
    )
    # The annotations are what the reference returns, called as the judge calls it.
    spec = load_spec(op)
    size = next(s for s in spec.data.sizes if s.interpreter)
    x, scale = make_inputs(spec, size, "float32", "normal", 0, "cpu")
    got = spec.reference(x, scale)
    assert isinstance(scale, float) and isinstance(got, tuple) and len(got) == 2
    assert all(isinstance(t, torch.Tensor) for t in got)
