"""rms_norm(x, weight, eps): x * rsqrt(mean(x^2, -1) + eps) * weight over the last dimension,
computed in fp32 (or wider), returned in x's dtype.

Memory traffic: read x, write y (2 * numel * itemsize) plus the weight once; ~4 flops per element.
"""

import torch

from kernelgen.spec.models import MODELS, named

# The hidden widths the bench normalizes (kernelgen/spec/models.py), and Qwen3's per-head norm.
QWEN3_8B = MODELS["qwen3_8b"]  # hidden 4096 (Llama-3-8B's and Qwen3-235B-A22B's too)
DEEPSEEK_V3 = MODELS["deepseek_v3"].hidden  # 7168
LLAMA3_70B = MODELS["llama3_70b"].hidden  # 8192


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    # At least fp32; float64 when the harness evaluates the ground truth on upcast inputs.
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (xf * inv * weight.to(acc)).to(x.dtype)


def eager(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """The peer for speed: torch's own RMSNorm, as models call it (one fused kernel on CUDA)."""
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, eps)


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["rows"] * dims["cols"]
    return {"bytes": (2 * n + dims["cols"]) * itemsize, "flops": 4 * n}


def _rows(model: str, rows: int, cols: int, was: str | None = None) -> dict:
    return named(model, {"rows": rows, "cols": cols}, was=was)


SPEC = {
    "inputs": [
        {"name": "x", "shape": ["rows", "cols"]},
        # A norm weight sits around 1; it is a parameter, always contiguous.
        {
            "name": "weight",
            "shape": ["cols"],
            "dist": "uniform",
            "offset": 1.0,
            "layout_varies": False,
        },
        # Models use 1e-6 or 1e-5; cases draw eps from a wider range each run, so a kernel that
        # hard-codes it fails: on `small` rows (mean square ~1e-6) for any draw, on `normal` rows
        # whenever the draw is above ~1e-4.
        {"kind": "scalar", "name": "eps", "value": 1e-6, "draw": [1e-8, 1e-2]},
    ],
    "dtypes": ["float32", "float16", "bfloat16"],
    "dists": ["normal", "wide"],
    "reduction": "cols",
    "bucket": ["rows", "cols"],
    # Each run draws more cases from here (kernelgen/spec/domain.py): x in any layout (the q/k
    # norm of a [tokens, heads, dim] slice of a fused qkv), rank up to 4, every value family
    # (an inf makes its row's rsqrt 0, as for `specials` below). The weight stays contiguous.
    "domain": {
        "dims": {
            "cols": {"range": [1, 262144], "cpu_max": 12289},
            "rows": {"range": [1, 32768], "cpu_max": 64},
        },
        "layouts": "all",
        "dists": "all",
        "lead": "rows",
        "max_rank": 4,
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 262208 tokens of a
    # hidden size of 8192, offsets past 2^31 from token 262144 on, rows past a grid axis's end.
    "limits": [
        {
            "name": "tokens",
            "dims": {"rows": 262208, "cols": 8192},
            "dtype": "bfloat16",
            "rows": "rows",
        },
    ],
    "sizes": [
        {"name": "one", "dims": {"rows": 1, "cols": 1}, "interpreter": True},
        {"name": "one_row", "dims": {"rows": 1, "cols": 781}, "interpreter": True},
        {
            "name": "rank1",
            "dims": {"rows": 1, "cols": 77},
            "shapes": {"x": [77]},
            "interpreter": True,
        },
        # small: x ~ 1e-3, so eps weighs in the rsqrt and fp16 squares would underflow.
        # specials: a NaN makes its row NaN; an inf makes the mean square inf, the rsqrt 0, so the
        # row's finite entries give 0 and its infs NaN (inf * 0), as the reference computes it.
        {
            "name": "rank3",
            "dims": {"rows": 6, "cols": 50},
            "shapes": {"x": [2, 3, 50]},
            "interpreter": True,
            "dists": ["normal", "wide", "small", "specials"],
        },
        {
            "name": "odd",
            "dims": {"rows": 37, "cols": 1823},
            "interpreter": True,
            "dists": ["normal", "wide", "small", "specials"],
        },
        {"name": "long_row", "dims": {"rows": 3, "cols": 5003}, "interpreter": True},
        # The interpreter runs one program per row here, ~3 ms each: fp32 many-row coverage is
        # rows_past_grid's (531 rows), so this size runs the half-precision dtypes only.
        {
            "name": "many_rows",
            "dims": {"rows": 257, "cols": 67},
            "interpreter": True,
            "dtypes": ["float16", "bfloat16"],
        },
        {
            "name": "strided",
            "dims": {"rows": 19, "cols": 300},
            "layout": "strided",
            "interpreter": True,
        },
        {
            "name": "transposed",
            "dims": {"rows": 45, "cols": 130},
            "layout": "transposed",
            "interpreter": True,
        },
        # Widths that are powers of two (so multiples of every block size): where a kernel drops
        # its mask or takes an `n % BLOCK == 0` path. Each runs one CPU dtype and bf16.
        {
            "name": "pow2_64",
            "dims": {"rows": 5, "cols": 64},
            "interpreter": True,
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal", "specials"],
        },
        {
            "name": "pow2_1024",
            "dims": {"rows": 3, "cols": 1024},
            "interpreter": True,
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal", "small"],
        },
        {
            "name": "pow2_4096",
            "dims": {"rows": 2, "cols": 4096},
            "interpreter": True,
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal", "wide"],
        },
        # More rows than a persistent grid of 4 programs per SM (the interpreter answers 132 SMs):
        # rows past the grid must be written too. The interpreter runs programs one by one, ~3 ms
        # each, so one case.
        {
            "name": "rows_past_grid",
            "dims": {"rows": 531, "cols": 64},
            "interpreter": True,
            "dtypes": ["float32"],
            "dists": ["normal"],
        },
        # GPU-only sizes run in fewer combinations: each new row length is a new compile.
        {"name": "huge_row", "dims": {"rows": 4, "cols": 70001}, "dtypes": ["float32", "bfloat16"]},
        {"name": "wide_model", "dims": {"rows": 512, "cols": 16384}, "dtypes": ["bfloat16"]},
        {
            "name": "square",
            "dims": {"rows": 4096, "cols": 4096},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal"],
        },
        {
            "name": "pow2_huge",
            "dims": {"rows": 3, "cols": 131072},
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal"],
        },
        # 20011 rows: more than 132 SMs x 64 programs, and a prime, so no grid divides it. As wide
        # as pow2_1024, in its dtypes, so it reuses that size's compiles.
        {
            "name": "rows_past_gpu_grid",
            "dims": {"rows": 20011, "cols": 1024},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal", "specials"],
        },
        # Qwen3's q norm at its bench width: 1031 tokens' 32 heads of 128 (Qwen3-8B), a prime
        # token count, in bf16.
        {
            "name": "qwen3_8b_qk_norm",
            "dims": {"rows": 1031 * QWEN3_8B.heads, "cols": QWEN3_8B.head_dim},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "small"],
        },
    ],
    # Hidden widths: Qwen3-8B's 4096, DeepSeek-V3's 7168 and Llama-3-70B's 8192, at decode (1
    # and 8 tokens: launch-bound), a decode batch of 64, and prefills of 4096 and 16384 tokens
    # (bandwidth). And Qwen3's q/k norm: an RMSNorm per head of 128 (its attention's q_norm
    # and k_norm), here 4096 tokens x Qwen3-8B's 32 query heads: 32x the rows of the hidden's,
    # each 32x narrower, a width no other shape has.
    "bench": [
        _rows("qwen3_8b", 4096, QWEN3_8B.hidden, was="4096x4096"),
        _rows("llama3_70b", 16384, LLAMA3_70B, was="16384x8192"),
        _rows("deepseek_v3", 64, DEEPSEEK_V3, was="64x7168"),
        _rows("qwen3_8b", 1, QWEN3_8B.hidden, was="1x4096"),
        _rows("deepseek_v3", 8, DEEPSEEK_V3, was="8x7168"),
        _rows("qwen3_8b", 4096 * QWEN3_8B.heads, QWEN3_8B.head_dim),
    ],
    # The torch call kernelgen_ops.enable() may send to the kernel (nn.RMSNorm calls it): one
    # normalized dimension, the last, with a weight. eps=None is torch's default: float32's
    # machine epsilon whatever the input dtype, since torch computes these dtypes in float32.
    "routes": [
        {
            "function": "torch.nn.functional.rms_norm",
            "params": "input, normalized_shape, weight=None, eps=None",
            "args": {
                "input": {"takes": "input", "kernel": "x"},
                "normalized_shape": {"takes": "last_shape"},
                "weight": {"takes": "per_column", "kernel": "weight"},
                "eps": {
                    "takes": "number",
                    "kernel": "eps",
                    "value": torch.finfo(torch.float32).eps,
                },
            },
        },
    ],
}
