"""silu_and_mul(x): for x[..., 2d], silu(x[..., :d]) * x[..., d:], of shape [..., d].

The gated activation of SwiGLU MLPs. Memory traffic: read 2d, write d per row
(3 * rows * d * itemsize bytes); ~6 flops per output element (exp, add, div, two muls).
"""

import torch
import torch.nn.functional as F

from kernelgen.spec.models import MODELS, named

# FFN widths d of the models the bench shapes run (kernelgen/spec/models.py).
LLAMA3_8B = MODELS["llama3_8b"].intermediate  # 14336, Mixtral-8x7B's experts' too
LLAMA3_70B = MODELS["llama3_70b"].intermediate  # 28672
DEEPSEEK_V3 = MODELS["deepseek_v3"]  # dense layers 18432, experts 2048, top-8


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["rows"] * dims["d"]
    return {"bytes": 3 * n * itemsize, "flops": 6 * n}


def _rows(model: str, rows: int, d: int, was: str | None = None) -> dict:
    return named(model, {"rows": rows, "d": d}, was=was)


SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "2*d"]}],
    "dtypes": ["float32", "float16", "bfloat16"],
    "dists": ["normal", "wide"],
    "bucket": ["rows", "d"],
    # Each run draws more cases from here (kernelgen/spec/domain.py): x in any layout (the
    # gate_up slice of a wider projection, a broadcast row), rank up to 4. Not `large`: the
    # product of two such values overflows fp16 where float64 does not (torch's own fp16 result
    # is inf there too).
    "domain": {
        "dims": {
            "d": {"range": [1, 32768], "cpu_max": 8191},
            "rows": {"range": [1, 32768], "cpu_max": 64},
        },
        "layouts": ["contiguous", "strided", "transposed", "leading", "offset", "expanded"],
        "dists": [
            "normal",
            "uniform",
            "wide",
            "small",
            "spike",
            "negative",
            "sorted_up",
            "sorted_down",
            "constant",
            "ties",
            "denormal",
            "neg_inf",
            "specials",
        ],
        "lead": "rows",
        "max_rank": 4,
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 75000 tokens of a
    # 2 x 14336 gate_up (Llama-3-8B's and Mistral-7B's intermediate size): x past 2^31 elements
    # from token 74899 on, rows past a grid axis's end.
    "limits": [
        {
            "name": "tokens",
            "dims": {"rows": 75000, "d": 14336},
            "dtype": "bfloat16",
            "rows": "rows",
        },
    ],
    "sizes": [
        {"name": "one", "dims": {"rows": 1, "d": 1}, "interpreter": True},
        {"name": "one_row", "dims": {"rows": 1, "d": 781}, "interpreter": True},
        {
            "name": "rank1",
            "dims": {"rows": 1, "d": 77},
            "shapes": {"x": [154]},
            "interpreter": True,
        },
        # specials: torch's silu is x / (1 + exp(-x)), so silu(-inf) = -inf / inf = NaN (not the
        # limit 0) and silu(+inf) = inf; x * sigmoid(x) gives the same (-inf * 0), in fp32 as in
        # fp64, so an honest kernel agrees. One that clamps x before exp() answers 0 at -inf: it
        # is another function there and is rejected.
        {
            "name": "rank3",
            "dims": {"rows": 6, "d": 50},
            "shapes": {"x": [2, 3, 100]},
            "interpreter": True,
            "dists": ["normal", "wide", "specials"],
        },
        {
            "name": "odd",
            "dims": {"rows": 37, "d": 1823},
            "interpreter": True,
            "dists": ["normal", "wide", "specials"],
        },
        {"name": "long_row", "dims": {"rows": 3, "d": 5003}, "interpreter": True},
        # The interpreter runs one program per row here, ~3 ms each: fp32 many-row coverage is
        # rows_past_grid's (531 rows), so this size runs the half-precision dtypes only.
        {
            "name": "many_rows",
            "dims": {"rows": 257, "d": 67},
            "interpreter": True,
            "dtypes": ["float16", "bfloat16"],
        },
        {
            "name": "strided",
            "dims": {"rows": 19, "d": 300},
            "layout": "strided",
            "interpreter": True,
        },
        {
            "name": "transposed",
            "dims": {"rows": 45, "d": 130},
            "layout": "transposed",
            "interpreter": True,
        },
        # Output widths that are powers of two (so multiples of every block size, and the input
        # width too): where a kernel drops its mask. Each runs one CPU dtype and bf16.
        {
            "name": "pow2_64",
            "dims": {"rows": 5, "d": 64},
            "interpreter": True,
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal", "specials"],
        },
        {
            "name": "pow2_1024",
            "dims": {"rows": 3, "d": 1024},
            "interpreter": True,
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal"],
        },
        {
            "name": "pow2_4096",
            "dims": {"rows": 2, "d": 4096},
            "interpreter": True,
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal", "wide"],
        },
        # More rows than a persistent grid of 4 programs per SM (the interpreter answers 132 SMs):
        # rows past the grid must be written too. The interpreter runs programs one by one, ~3 ms
        # each, so one case.
        {
            "name": "rows_past_grid",
            "dims": {"rows": 531, "d": 64},
            "interpreter": True,
            "dtypes": ["float32"],
            "dists": ["normal"],
        },
        # GPU-only sizes run in fewer combinations: each new row length is a new compile.
        {"name": "huge_row", "dims": {"rows": 4, "d": 70001}},
        {"name": "mlp", "dims": {"rows": 2048, "d": 14336}, "dists": ["normal"]},
        {
            "name": "pow2_huge",
            "dims": {"rows": 3, "d": 65536},
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal"],
        },
        # 20011 rows: more than 132 SMs x 64 programs, and a prime, so no grid divides it. As wide
        # as pow2_1024, in its dtypes, so it reuses that size's compiles.
        {
            "name": "rows_past_gpu_grid",
            "dims": {"rows": 20011, "d": 1024},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal", "specials"],
        },
        # The widths the bench adds, in the models' bf16: Llama-3-70B's FFN over 1031 tokens
        # (a prime count), and DeepSeek-V3's experts' over those tokens' 8 expert slots each.
        {
            "name": "llama3_70b_ffn",
            "dims": {"rows": 1031, "d": LLAMA3_70B},
            "dtypes": ["bfloat16"],
            "dists": ["normal"],
        },
        {
            "name": "deepseek_v3_experts",
            "dims": {"rows": 1031 * DEEPSEEK_V3.top_k, "d": DEEPSEEK_V3.expert_intermediate},
            "dtypes": ["bfloat16"],
            "dists": ["normal"],
        },
    ],
    # FFN widths: Llama-3-8B's 14336 (a 4096-token prefill and one decode token), DeepSeek-V3's
    # dense layers' 18432 (a decode batch of 64), Llama-3-70B's 28672 (a 4096-token prefill in
    # the 32768-wide bucket, which held that decode batch only), and DeepSeek-V3's experts'
    # 2048 over 4096 tokens' 8 expert slots each, the activation between a MoE's two GEMMs
    # where they are not fused (vLLM's and SGLang's fused_moe call it there): many narrow rows.
    # 16384 x 4096 is no model's: d = 4096 is nearest Llama-3-70B's 28672 split 8 ways (3584),
    # the width a tensor-parallel server's activation sees.
    "bench": [
        _rows("llama3_8b", 4096, LLAMA3_8B, was="4096x14336"),
        _rows("deepseek_v3", 64, DEEPSEEK_V3.intermediate, was="64x18432"),
        {"name": "16384x4096", "dims": {"rows": 16384, "d": 4096}},
        _rows("llama3_8b", 1, LLAMA3_8B, was="1x14336"),
        _rows("llama3_70b", 4096, LLAMA3_70B),
        _rows("deepseek_v3", 4096 * DEEPSEEK_V3.top_k, DEEPSEEK_V3.expert_intermediate),
    ],
}
