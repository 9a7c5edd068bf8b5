"""torch._scaled_mm (cuBLASLt's fp8 GEMM in the GPU machine's torch 2.11), for fp8_gemm.

fp8_gemm's scales are DeepSeek's blocks: a per (row, 128 columns), b per 128 x 128. torch 2.11's
_scaled_mm refuses those (references/fp8_gemm.py's eager says so); each shape's first call tries
them and the record's api keeps the refusal. What it takes is one scale per row of a and one per
row of b (rowwise): the operands are requantized so, from the dequantized block-scaled values (not
timed: a model stores its weights in the layout its GEMM takes). The peer then computes another
problem, so its answer is checked against the same GEMM on its own rowwise operands (dequantized
in fp32, multiplied, rounded to bf16), not against eager's, by fp8_gemm's own rule.
"""

from __future__ import annotations

from typing import Any

import torch

from peers import Binder, Candidate, Prepared

E4M3_MAX = 448.0


def rowwise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x (R, K) in e4m3 with one fp32 scale per row, amax / 448: (codes, scales (R, 1))."""
    amax = x.abs().amax(dim=1, keepdim=True).float().clamp_min(1e-12)
    scale = amax / E4M3_MAX
    return (x / scale).to(torch.float8_e4m3fn), scale


def block_scaled_call(a, a_scale, b, b_scale) -> torch.Tensor:
    return torch._scaled_mm(a, b.t(), scale_a=a_scale, scale_b=b_scale, out_dtype=torch.bfloat16)


def rowwise_call(a, a_scale, b, b_scale_row) -> torch.Tensor:
    """a (M, K) and b (N, K) e4m3, a_scale (M, 1) and b_scale_row (1, N) fp32."""
    return torch._scaled_mm(
        a, b.t(), scale_a=a_scale, scale_b=b_scale_row, out_dtype=torch.bfloat16
    )


def _describe(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def _rowwise() -> Binder:
    from kernelgen.spec import load_spec

    ref = load_spec("fp8_gemm").module

    def bind(args: list[Any]) -> Prepared:
        a, a_scale, b, b_scale = args
        try:
            block_scaled_call(a, a_scale, b, b_scale)
            refused = "block scales ran too (not timed here)"
        except Exception as e:  # torch 2.11 refuses DeepSeek's block scales
            refused = f"block scales refused: {_describe(e)}"
        a_row, s_a = rowwise(ref.dequant_a(a, a_scale, torch.float32))
        b_row, s_b = rowwise(ref.dequant_b(b, b_scale, torch.float32))
        a_value, b_value = a_row.float() * s_a, b_row.float() * s_b
        expected = (a_value @ b_value.T).to(torch.bfloat16)
        # The rowwise problem in the reference's form (its values, unit block scales): fp8_gemm's
        # own rule judges the answer, as it judges kernelgen's, its bound growing with the
        # operands' scale where a sum over K cancels.
        unit_a = a_scale.new_ones(a_scale.shape)
        unit_b = b_scale.new_ones(b_scale.shape)
        posed = [a_value, unit_a, b_value, unit_b]
        args = [a_row, s_a, b_row, s_b.T.contiguous()]
        return Prepared(rowwise_call, args, expected, refused, posed)

    return bind


CANDIDATES: dict[str, list[Candidate]] = {
    "fp8_gemm": [
        (
            "torch._scaled_mm(a, b.t(), rowwise scales (M,1) and (1,N), out_dtype=bf16) on "
            "operands requantized rowwise",
            _rowwise,
        ),
    ],
}
