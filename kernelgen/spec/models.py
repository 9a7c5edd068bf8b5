"""The dims of the models that bench shapes and GPU sizes are named by.

A shape a model runs is named `<model>_<dims>` (`llama3_70b_16384x8192`: 16384 tokens of
Llama-3-70B's hidden 8192), the model being a key of MODELS, and the reference takes the dims
from here rather than writing the number again, so a name cannot say one model while the dims
are another's. Each entry names the config.json its figures are from (`source`) and where they
were read when it was written (`read_from`): the file itself where the search index held it,
else copies of it that name it as their origin, or the model's own inference code. Sharded
shapes (a tensor-parallel slice of an expert) are derived where they are used, and say so.

A shape that is no model's keeps a name of its dims alone (`4096x4096`), and its comment says
whose it is closest to.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ModelDims(BaseModel):
    """One model's figures, each under the config.json key its description names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str = Field(description="the Hugging Face repository")
    source: str = Field(description="the config.json the figures are from")
    read_from: str = Field(description="where they were read: the file, copies of it, or code")
    hidden: int = Field(gt=0, description="hidden_size (DeepSeek's inference config: dim)")
    vocab: int = Field(gt=0, description="vocab_size")
    heads: int = Field(gt=0, description="num_attention_heads")
    kv_heads: int = Field(gt=0, description="num_key_value_heads")
    head_dim: int | None = Field(
        None,
        gt=0,
        description="head_dim, or hidden_size / num_attention_heads where the config has none; "
        "None for MLA (q and k: qk_nope + qk_rope head dims, v: v_head_dim)",
    )
    intermediate: int | None = Field(
        None, gt=0, description="intermediate_size of the dense FFN layers, where it has some"
    )
    experts: int | None = Field(
        None, gt=0, description="routed experts: n_routed_experts, num_experts, num_local_experts"
    )
    top_k: int | None = Field(None, gt=0, description="num_experts_per_tok")
    expert_intermediate: int | None = Field(
        None,
        gt=0,
        description="one expert's intermediate width: moe_intermediate_size (Mixtral's experts: "
        "intermediate_size)",
    )
    q_lora_rank: int | None = Field(None, gt=0, description="q_lora_rank (MLA)")
    v_head_dim: int | None = Field(None, gt=0, description="v_head_dim (MLA)")
    index_heads: int | None = Field(None, gt=0, description="index_n_heads (sparse attention)")
    index_head_dim: int | None = Field(None, gt=0, description="index_head_dim")
    index_topk: int | None = Field(None, gt=0, description="index_topk")

    @model_validator(mode="after")
    def _experts_whole(self) -> ModelDims:
        moe = (self.experts, self.top_k, self.expert_intermediate)
        if any(v is None for v in moe) and any(v is not None for v in moe):
            raise ValueError("experts, top_k and expert_intermediate: all three or none")
        if self.experts is not None and self.top_k is not None and self.top_k > self.experts:
            raise ValueError(f"top_k {self.top_k} > experts {self.experts}")
        return self


_DEEPSEEK_V3 = {
    "hidden": 7168,
    "vocab": 129280,
    "heads": 128,
    "kv_heads": 128,
    "intermediate": 18432,
    "experts": 256,
    "top_k": 8,
    "expert_intermediate": 2048,
    "q_lora_rank": 1536,
    "v_head_dim": 128,
}

MODELS: dict[str, ModelDims] = {
    "deepseek_v3": ModelDims(
        repo="deepseek-ai/DeepSeek-V3",
        source="https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json",
        read_from="copies of the file (DeepSeek-R1's, same architecture; amd/DeepSeek-R1-0528-"
        "MXFP4's) and deepseek-ai/DeepSeek-V3-Base's inference/configs/config_671B.json as "
        "mirrored on Hugging Face; all agree",
        **_DEEPSEEK_V3,
    ),
    # V3's dims with the lightning indexer of DeepSeek Sparse Attention.
    "deepseek_v3.2": ModelDims(
        repo="deepseek-ai/DeepSeek-V3.2-Exp",
        source="https://huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/config.json",
        read_from="NVIDIA NeMo AutoModel's DeepseekV32Config defaults and deepseek-ai/"
        "DeepSeek-V3.2-Exp inference/model.py (ModelArgs' index_* defaults; the Indexer "
        "rotates q and k over index_head_dim, then keeps index_topk tokens); the index held "
        "the config page without its text",
        index_heads=64,
        index_head_dim=128,
        index_topk=2048,
        **_DEEPSEEK_V3,
    ),
    "llama3_70b": ModelDims(
        repo="meta-llama/Meta-Llama-3-70B",
        source="https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
        read_from="copies that name it as their origin (kittn/Meta-Llama-3-70B-quant, "
        "DukeNLP/Prob-Gen-70B)",
        hidden=8192,
        vocab=128256,
        heads=64,
        kv_heads=8,
        head_dim=128,
        intermediate=28672,
    ),
    # Llama-3-70B's dims with a 128K context (rope scaling): decode shapes with long requests.
    "llama3.1_70b": ModelDims(
        repo="meta-llama/Llama-3.1-70B",
        source="https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
        read_from="a transcription of it (oumi-ai/oumi configs/recipes/llama3_1/README.md)",
        hidden=8192,
        vocab=128256,
        heads=64,
        kv_heads=8,
        head_dim=128,
        intermediate=28672,
    ),
    "llama3_8b": ModelDims(
        repo="meta-llama/Meta-Llama-3-8B",
        source="https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        read_from="copies that name it as their origin (Magpie-Align/Llama-3-8B-OpenHermes-"
        "2.5-1M, aaditya/Llama3-OpenBioLLM-8B)",
        hidden=4096,
        vocab=128256,
        heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate=14336,
    ),
    "qwen3_8b": ModelDims(
        repo="Qwen/Qwen3-8B",
        source="https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json",
        read_from="a copy of the file (citsjtu2020/LLM-Prof sglang/Model_Config.md)",
        hidden=4096,
        vocab=151936,
        heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate=12288,
    ),
    "qwen3_30b_a3b": ModelDims(
        repo="Qwen/Qwen3-30B-A3B",
        source="https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json",
        read_from="a copy of the file (citsjtu2020/LLM-Prof sglang/Model_Config.md)",
        hidden=2048,
        vocab=151936,
        heads=32,
        kv_heads=4,
        head_dim=128,
        experts=128,
        top_k=8,
        expert_intermediate=768,
    ),
    "qwen3_235b_a22b": ModelDims(
        repo="Qwen/Qwen3-235B-A22B",
        source="https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json",
        read_from="the training frameworks' transcriptions of it (THUDM/slime "
        "scripts/models/qwen3-235B-A22B.sh, MindSpeed-RL qwen3_235b_a22b.yaml, MaxText "
        "qwen3-235b-a22b.yml); all agree",
        hidden=4096,
        vocab=151936,
        heads=64,
        kv_heads=4,
        head_dim=128,
        experts=128,
        top_k=8,
        expert_intermediate=1536,
    ),
    "mixtral_8x7b": ModelDims(
        repo="mistralai/Mixtral-8x7B-v0.1",
        source="https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
        read_from="mistralai/Mixtral-8x7B-Instruct-v0.1's config.json (eba9230), the same "
        "architecture",
        hidden=4096,
        vocab=32000,
        heads=32,
        kv_heads=8,
        head_dim=128,
        experts=8,
        top_k=2,
        expert_intermediate=14336,
    ),
    # Multi-head attention (a KV head per query head) at a head dim of 64: decode_attn's MHA.
    "gpt2_medium": ModelDims(
        repo="openai-community/gpt2-medium",
        source="https://huggingface.co/openai-community/gpt2-medium/blob/main/config.json",
        read_from="transcriptions of it (n_embd 1024, n_head 16, vocab 50257: "
        "1501454486/myGPT configs/gpt2medium.py and others that agree)",
        hidden=1024,
        vocab=50257,
        heads=16,
        kv_heads=16,
        head_dim=64,
    ),
}


def model_of(shape_name: str) -> str | None:
    """The MODELS key a shape's name starts with (`qwen3_8b_1x4096`: qwen3_8b), if any."""
    keys = [k for k in MODELS if shape_name.startswith(k + "_")]
    return max(keys, key=len, default=None)


def named(
    model: str,
    dims: dict[str, int],
    label: str | None = None,
    was: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A bench shape (or a size) at one model's dims, as a SPEC writes it: named
    `<model>_<label>`, the label being the dims joined by x unless given; `was`: its name before
    shapes were named by model, which its records carry (BenchShape.was)."""
    if model not in MODELS:
        raise KeyError(f"no model {model!r} in kernelgen/spec/models.py; known: {sorted(MODELS)}")
    label = label or "x".join(str(v) for v in dims.values())
    return {"name": f"{model}_{label}", "dims": dims, **extra} | ({"was": [was]} if was else {})
