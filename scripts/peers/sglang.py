"""SGLang 0.5.17 (the newest release pinned to torch 2.11): its Triton decode attention for
decode_attn, its Triton fused_moe for fused_moe.

Decode attention: the kernel module sglang/kernels/ops/attention/decode_attention.py as the wheel
ships it, loaded alone (_kernel_modules): the packages above it start SGLang's server runtime on
import (transformers patches, the frontend language, a registry of every kernel backend), and the
module needs nothing of it but `sglang.srt.utils.is_hip`, which is given SGLang's own definition.
The cache is passed as it is, 4-D (pages, page, Hkv, D) with the case's page size as page_size,
a layout the kernel takes (_extract_kv_strides); the block table becomes SGLang's per-token
locations (token_indices: page id * page + slot, per request in order, kv_indptr its offsets).
As SGLang's Triton backend does once per decode step, before its layers: num_kv_splits by its
get_num_kv_splits_triton with the default max_kv_splits of 8 and the GPU's SM count, and the
split buffers allocated. Not timed.

fused_moe: SGLang's fused_experts as its MoE layer calls it (outplace), which picks the tuned
config of the GPU from the wheel's configs (E=128,N=768 for the H200 under Triton 3.6.0; E=8,
N=1792 from its Triton 3.1.0 folder). It imports SGLang's runtime and sgl_kernel: where the GPU
machine lacks them, the record says which module was missing.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import torch

from peers import Binder, Candidate, Prepared

MAX_KV_SPLITS = 8  # server_args.triton_attention_num_kv_splits' default on CUDA
_DECODE = "sglang.kernels.ops.attention.decode_attention"
_SPLITS = "sglang.kernels.ops.attention.metadata"
_SCORE_MOD = "sglang.kernels.ops.attention.score_mod"
# What fused_experts imports beyond the staged wheels (an H100 run of 2026-12-07 stopped at the
# first, a CPU probe of the 0.5.17 wheel found the rest): the server's utilities, and the CUDA
# ops it calls between its two GEMMs, which no Triton stand-in would time as SGLang runs them.
FUSED_MOE_NOT_STAGED = (
    "not staged: SGLang's runtime imports orjson, psutil, pybase64, requests, PIL, starlette and "
    "a torchvision built for this torch, and fused_experts calls silu_and_mul and "
    "moe_sum_reduce from sglang-kernel 0.4.5, a 383 MB wheel"
)


def token_indices(
    block_table: torch.Tensor, seq_lens: torch.Tensor, page: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(kv_indptr int32, kv_indices int64): request b's n_b tokens are at
    kv_indices[kv_indptr[b]:kv_indptr[b+1]], its token t at block_table[b, t // page] * page
    + t % page."""
    lens = seq_lens.long()
    indptr = torch.zeros(len(lens) + 1, dtype=torch.int64, device=lens.device)
    indptr[1:] = torch.cumsum(lens, 0)
    width = block_table.shape[1] * page
    t = torch.arange(width, device=lens.device)
    slots = block_table.long()[:, t // page] * page + t % page  # (B, width)
    return indptr.int(), slots[t < lens[:, None]]


def _kernel_modules(*names: str) -> list[types.ModuleType]:
    """The named module files of the installed sglang, each loaded alone: their parent packages
    stand in as bare namespaces for the duration (their __init__s are the server's, not the
    kernel's), then are taken out of sys.modules again, so that a later `import sglang` (the
    fused_moe candidate) gets the real packages."""
    found = importlib.util.find_spec("sglang")  # finds the folder; runs nothing
    if found is None or not found.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'sglang'")
    root = Path(next(iter(found.submodule_search_locations))).parent
    added: list[str] = []

    def stand_in(name: str, module: types.ModuleType) -> None:
        sys.modules[name] = module
        added.append(name)

    try:
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts)):
                package = ".".join(parts[:i])
                if package not in sys.modules:
                    bare = types.ModuleType(package)
                    bare.__path__ = [str(root.joinpath(*parts[:i]))]
                    stand_in(package, bare)
        utils = types.ModuleType("sglang.srt.utils")
        utils.is_hip = lambda: torch.version.hip is not None  # SGLang's own is_hip
        stand_in("sglang.srt.utils", utils)
        loaded = []
        for name in names:
            path = root.joinpath(*name.split(".")).with_suffix(".py")
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            stand_in(name, module)
            spec.loader.exec_module(module)
            loaded.append(module)
        return loaded
    finally:
        for name in added:
            sys.modules.pop(name, None)


def _decode_attention() -> Binder:
    _, splits_mod, decode_mod = _kernel_modules(_SCORE_MOD, _SPLITS, _DECODE)
    fwd = decode_mod.decode_attention_fwd
    get_num_kv_splits = splits_mod.get_num_kv_splits_triton

    def bind(args: list[Any]) -> Prepared:
        q, k_cache, v_cache, block_table, seq_lens, scale = args
        batch, heads, _ = q.shape
        page, kv_heads, v_dim = k_cache.shape[1], k_cache.shape[2], v_cache.shape[-1]
        indptr, indices = token_indices(block_table, seq_lens, page)
        splits = torch.empty(batch, dtype=torch.int32, device=q.device)
        cores = torch.cuda.get_device_properties(q.device).multi_processor_count
        get_num_kv_splits[(1,)](
            splits,
            seq_lens,
            batch,
            1,  # num_group: one query token per request
            heads,
            kv_heads,
            MAX_KV_SPLITS,
            cores,
            MAX_NUM_SEQ=max(256, 1 << (batch - 1).bit_length()),
        )
        f32 = {"dtype": torch.float32, "device": q.device}
        logits = torch.empty(batch, heads, MAX_KV_SPLITS, v_dim, **f32)
        lse = torch.empty(batch, heads, MAX_KV_SPLITS, **f32)

        def call(q, k, v, indptr, indices, splits, logits, lse):
            o = torch.empty(q.shape[:2] + (v_dim,), dtype=q.dtype, device=q.device)
            fwd(q, k, v, o, indptr, indices, logits, lse, splits, MAX_KV_SPLITS,
                float(scale), 1.0, 1.0, page_size=page)  # fmt: skip
            return o

        return Prepared(call, [q, k_cache, v_cache, indptr, indices, splits, logits, lse])

    return bind


def _fused_experts() -> Binder:
    try:
        from sglang.srt.layers.moe.moe_runner import MoeRunnerConfig
        from sglang.srt.layers.moe.moe_runner.triton_utils import fused_experts
        from sglang.srt.layers.moe.topk import StandardTopKOutput
    except Exception as e:
        # A failed import leaves sglang's half-run packages in sys.modules, and the next shape's
        # import failed as KeyError: 'sglang'; without them each shape records the real cause.
        for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
            del sys.modules[name]
        if isinstance(e, ImportError):
            raise ModuleNotFoundError(f"{e} ({FUSED_MOE_NOT_STAGED})", name=e.name) from e
        raise

    def bind(args: list[Any]) -> Prepared:
        x, w1, w2, topk_weights, topk_ids = args
        experts, hidden, inter = w1.shape[0], x.shape[1], w2.shape[2]
        config = MoeRunnerConfig(
            num_experts=experts,
            num_local_experts=experts,
            hidden_size=hidden,
            intermediate_size_per_partition=inter,
            top_k=topk_ids.shape[1],
            params_dtype=x.dtype,
            activation="silu",
            is_gated=True,
            inplace=False,  # the layer's default writes into x; the bench reuses its inputs
        )

        def call(x, w1, w2, topk_weights, topk_ids):
            routing = StandardTopKOutput(topk_weights, topk_ids, None)
            return fused_experts(x, w1, w2, routing, config)

        return Prepared(call, list(args))

    return bind


CANDIDATES: dict[str, list[Candidate]] = {
    "decode_attn": [
        (
            "sglang.kernels.ops.attention.decode_attention.decode_attention_fwd(page_size=page), "
            f"max_kv_splits {MAX_KV_SPLITS}",
            _decode_attention,
        ),
    ],
    "fused_moe": [
        (
            "sglang.srt.layers.moe.moe_runner.triton_utils.fused_experts(inplace=False), "
            "its tuned configs",
            _fused_experts,
        ),
    ],
}
