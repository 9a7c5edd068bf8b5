"""vLLM's Triton fused_moe (vllm.model_executor.layers.fused_moe.fused_experts, its tuned configs
under fused_moe/configs: E=128,N=768 and E=8,N=1792 for the H200 in 0.26.0), for fused_moe.

Not staged for the GPU machine (peers.NOT_CARRIED says why): where vllm does not import, the
record says so with that note. Where it does, this is the call its MoE layer makes.
"""

from __future__ import annotations

from peers import Binder, Candidate, Prepared


def _fused_experts() -> Binder:
    from vllm.model_executor.layers.fused_moe import fused_experts

    return lambda args: Prepared(fused_experts, list(args))


CANDIDATES: dict[str, list[Candidate]] = {
    "fused_moe": [
        (
            "vllm.model_executor.layers.fused_moe.fused_experts(x, w1, w2, weights, ids)",
            _fused_experts,
        ),
    ],
}
