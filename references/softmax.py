"""softmax(x): softmax over the last dimension of a tensor of any rank >= 1.

y[..., j] = exp(x[..., j] - max(x[..., :])) / sum_k exp(x[..., k] - max(x[..., :]))

Memory traffic: read x once, write y once (2 * numel * itemsize bytes); about 5 flops per element.
"""

import torch

from kernelgen.spec.models import MODELS, named

# Vocabularies of the models whose sampling steps are bench shapes (kernelgen/spec/models.py).
QWEN3 = MODELS["qwen3_8b"].vocab  # 151936, every Qwen3's
LLAMA3 = MODELS["llama3_70b"].vocab  # 128256
DEEPSEEK_V3 = MODELS["deepseek_v3"].vocab  # 129280
MIXTRAL = MODELS["mixtral_8x7b"].vocab  # 32000, as Llama-2's and Mistral-7B's


def softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["rows"] * dims["cols"]
    return {"bytes": 2 * n * itemsize, "flops": 5 * n}


def _vocab(model: str, rows: int, vocab: int, was: str | None = None) -> dict:
    return named(model, {"rows": rows, "cols": vocab}, was=was)


SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "cols"]}],
    "dtypes": ["float32", "float16", "bfloat16"],
    # neg_inf: masked attention scores; wide: values far from 0, where skipping the max overflows.
    "dists": ["normal", "wide", "neg_inf"],
    "reduction": "cols",
    "bucket": ["rows", "cols"],
    # Each run draws more cases from here (kernelgen/spec/domain.py): widths up to a vocabulary,
    # rows past a persistent grid, any layout (the q or k heads of a fused qkv, a broadcast row),
    # rank up to 4 ([batch, heads, queries, keys] scores), every value family: softmax is defined
    # on all of them (NaN rows where the reference has them, as for `specials` below).
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
    # The GPU's limits (kernelgen/spec/limits.py), each one case checked on sampled rows: 65600
    # rows of 32768 scores (rows past a grid axis's 65535, offsets past 2^31 from row 65536 on),
    # and 14200 rows of a 151936-wide vocabulary (2^31 reached inside row 14134).
    "limits": [
        {
            "name": "rows",
            "dims": {"rows": 65600, "cols": 32768},
            "dtype": "bfloat16",
            "rows": "rows",
        },
        {
            "name": "vocab",
            "dims": {"rows": 14200, "cols": 151936},
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
        # specials: torch.softmax of a row holding a NaN or a +inf is NaN throughout (inf - inf in
        # x - max), of an all -inf row NaN throughout (-inf - -inf); exp(x - max) / sum computed as
        # written gives the same. A kernel that writes zeros for a fully masked row (the
        # attention convention) is another operator.
        {
            "name": "rank3",
            "dims": {"rows": 6, "cols": 50},
            "shapes": {"x": [2, 3, 50]},
            "interpreter": True,
            "dists": ["normal", "wide", "neg_inf", "specials"],
        },
        {
            "name": "odd",
            "dims": {"rows": 37, "cols": 1823},
            "interpreter": True,
            "dists": ["normal", "wide", "neg_inf", "specials"],
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
            "dists": ["normal", "neg_inf"],
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
        {
            "name": "huge_row",
            "dims": {"rows": 4, "cols": 70001},
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal", "neg_inf"],
        },
        {
            "name": "vocab",
            "dims": {"rows": 64, "cols": QWEN3},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "wide"],
        },
        # The 128K vocabularies the bench shapes below add (a 131072-wide bucket): many rows
        # of DeepSeek-V3's, and one row of Llama-3's, the decode step a kernel may split
        # across programs.
        {
            "name": "deepseek_v3_vocab",
            "dims": {"rows": 64, "cols": DEEPSEEK_V3},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "wide"],
        },
        {
            "name": "llama3_70b_decode",
            "dims": {"rows": 1, "cols": LLAMA3},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "neg_inf"],
        },
        {
            "name": "square",
            "dims": {"rows": 4096, "cols": 4096},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal", "neg_inf"],
        },
        {
            "name": "pow2_huge",
            "dims": {"rows": 3, "cols": 131072},
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal"],
        },
        # Many rows of medium and of long length (GPU): kernels often pick a strategy by rows as
        # well as by width (a loop per row once there are two rows per SM, split-row below), and
        # a path taken only at a benchmark shape would otherwise be checked only by the bench's
        # recheck, on normal values.
        {
            "name": "many_medium_rows",
            "dims": {"rows": 300, "cols": 20000},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "neg_inf"],
        },
        {
            "name": "many_long_rows",
            "dims": {"rows": 300, "cols": 40000},
            "dtypes": ["bfloat16"],
            "dists": ["normal", "neg_inf"],
        },
        # 20011 rows: more than 132 SMs x 64 programs, and a prime, so no grid divides it. As wide
        # as pow2_1024, in its dtypes, so it reuses that size's compiles.
        {
            "name": "rows_past_gpu_grid",
            "dims": {"rows": 20011, "cols": 1024},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal", "specials"],
        },
    ],
    # Sampling over a model's vocabulary (one decode step: 1 row; a batch of 16; 256 rows of
    # a prefill's logits), and attention-score rows, which are no model's dims: 4096 x 4096
    # (scores of 4096 queries over 4096 keys), 32768 x 1024 and 1024 x 32768 (32768 is
    # Qwen3's native context, its max_position_embeddings being 40960). The vocabularies are
    # Qwen3's 152K (a 262144-wide bucket), DeepSeek-V3's and Llama-3's 128K (131072-wide:
    # without a shape there the dispatch table answers them from 152K's rows, a doubling away)
    # and Mixtral's 32K.
    "bench": [
        {"name": "4096x4096", "dims": {"rows": 4096, "cols": 4096}},
        {"name": "32768x1024", "dims": {"rows": 32768, "cols": 1024}},
        {"name": "1024x32768", "dims": {"rows": 1024, "cols": 32768}},
        _vocab("qwen3_8b", 256, QWEN3, was="256x151936"),
        _vocab("mixtral_8x7b", 1, MIXTRAL, was="1x32000"),
        _vocab("qwen3_8b", 16, QWEN3, was="16x151936"),
        # A decode batch over a 32k vocabulary. Without it the dispatch table's nearest bucket
        # was 16x151936's and sent this shape to the kernel, where the library bench (H200,
        # 2026-12-03) measured it 2.8 us per call over eager in host time.
        _vocab("mixtral_8x7b", 16, MIXTRAL, was="16x32000"),
        # One sequence's decode step over a 152k vocabulary. Without it no bucket was near
        # enough (16x151936's is 4 doublings of rows away) and a routed call kept torch's op,
        # 40.0 us on the device against the kernel's 5.1 (library bench, H200, 2026-12-04).
        _vocab("qwen3_8b", 1, QWEN3, was="1x151936"),
        # The 128K bucket: a prefill's logits (bandwidth) and a decode step (launch-bound,
        # where the dispatch table decides between the kernel and torch's op).
        _vocab("deepseek_v3", 256, DEEPSEEK_V3),
        _vocab("llama3_70b", 1, LLAMA3),
    ],
    # The torch calls kernelgen_ops.enable() may send to the kernel (nn.Softmax calls F.softmax):
    # softmax over the last dimension, in the input's dtype, into a new tensor.
    "routes": [
        {
            "function": "torch.softmax",
            "params": "input, dim, dtype=None, *, out=None",
            "args": {
                "input": {"takes": "input", "kernel": "x"},
                "dim": {"takes": "last_dim"},
                "dtype": {"takes": "none"},
                "out": {"takes": "none"},
            },
        },
        {
            "function": "torch.nn.functional.softmax",
            "params": "input, dim=None, _stacklevel=3, dtype=None",
            "args": {
                "input": {"takes": "input", "kernel": "x"},
                "dim": {"takes": "last_dim"},
                "_stacklevel": {"takes": "any"},
                "dtype": {"takes": "none"},
            },
        },
        {
            "function": "torch.Tensor.softmax",
            "params": "self, dim, dtype=None",
            "args": {
                "self": {"takes": "input", "kernel": "x"},
                "dim": {"takes": "last_dim"},
                "dtype": {"takes": "none"},
            },
        },
    ],
}
