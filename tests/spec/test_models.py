"""kernelgen/spec/models.py: the model dims bench shapes are named by, and the names they carry
(a model's, or their dims alone), and the former names that records made before the renaming
still find them by."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from kernelgen.spec import SpecData, load_spec
from kernelgen.spec.models import MODELS, ModelDims, model_of, named

REPO = Path(__file__).resolve().parents[2]
# The operators whose bench shapes are named from MODELS (decode_attn keeps a table of its own).
NAMED_OPS = (
    "softmax",
    "rms_norm",
    "silu_and_mul",
    "hadamard",
    "topk",
    "router_gemm",
    "fp8_gemm",
    "fused_moe",
    "act_quant",
)


def _figures(dims: ModelDims) -> set[int]:
    return {v for v in dims.model_dump().values() if isinstance(v, int)}


def test_each_model_names_its_hugging_face_config() -> None:
    for key, dims in MODELS.items():
        assert dims.source == f"https://huggingface.co/{dims.repo}/blob/main/config.json", key
        assert dims.read_from, key


def test_a_model_has_all_of_its_expert_figures_or_none() -> None:
    base = MODELS["qwen3_8b"].model_dump()
    with pytest.raises(ValidationError, match="all three or none"):
        ModelDims(**base | {"experts": 128, "top_k": 8})
    with pytest.raises(ValidationError, match="top_k 9 > experts 8"):
        ModelDims(**base | {"experts": 8, "top_k": 9, "expert_intermediate": 14336})


@pytest.mark.parametrize("op", NAMED_OPS)
def test_a_bench_shape_is_named_by_its_model_or_by_its_dims_alone(op: str) -> None:
    """`<model>_<dims>` with a model of the table, one of whose figures is among the dims; or a
    shape of no model, named by its dims (a digit first)."""
    for shape in load_spec(op).data.bench:
        model = model_of(shape.name)
        if model is None:
            assert shape.name[0].isdigit(), f"{op}: {shape.name!r} names no model of the table"
            continue
        assert _figures(MODELS[model]) & set(shape.dims.values()), (
            f"{op}: {shape.name} {shape.dims} holds none of {model}'s figures"
        )


def test_model_of_takes_the_longest_key() -> None:
    assert model_of("deepseek_v3.2_1x131072_k2048") == "deepseek_v3.2"
    assert model_of("deepseek_v3_8x7168") == "deepseek_v3"
    assert model_of("4096x4096") is None


def test_named_spells_the_dims_and_the_former_name() -> None:
    assert named("llama3_70b", {"rows": 16384, "cols": 8192}, was="16384x8192") == {
        "name": "llama3_70b_16384x8192",
        "dims": {"rows": 16384, "cols": 8192},
        "was": ["16384x8192"],
    }
    assert named("qwen3_30b_a3b", {"M": 1}, label="M1")["name"] == "qwen3_30b_a3b_M1"
    with pytest.raises(KeyError, match="no model 'llama2_7b'"):
        named("llama2_7b", {"rows": 1})


def test_a_former_name_finds_its_shape_and_is_a_name_still() -> None:
    data = load_spec("rms_norm").data
    assert data.bench_named("16384x8192") is data.bench_named("llama3_70b_16384x8192")
    assert data.bench_named("16384x8192") is not None
    assert data.bench_named("nope") is None
    spec = data.model_dump()
    spec["bench"][1]["was"] = [spec["bench"][0]["name"]]
    with pytest.raises(ValidationError, match="bench: duplicate name 'qwen3_8b_4096x4096'"):
        SpecData.model_validate(spec)


@pytest.mark.parametrize("op", NAMED_OPS)
def test_the_shipped_dispatch_rows_still_find_their_shapes(op: str) -> None:
    """The library's dispatch rows were measured under the shapes' former names: each still
    finds its shape, in the bucket it was shipped under, so promoting the kernel again derives
    the same table (tests/package: the shipped tables are their provenance's)."""
    configs = REPO / "generated" / "kernelgen_ops" / "configs" / f"{op}.json"
    spec = load_spec(op)
    rows = 0
    for table in json.loads(configs.read_text())["dispatch"].values():
        for bucket, row in table.items():
            shape = spec.data.bench_named(row["shape"])
            assert shape is not None, (op, row["shape"])
            assert spec.bucket_key(shape.dims) == bucket, (op, row["shape"])
            rows += 1
    assert rows > 0
