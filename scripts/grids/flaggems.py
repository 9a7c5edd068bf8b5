"""FlagGems' accuracy tests (FlagOpen/FlagGems, tests/) as grids for kernelgen_ops.

FlagGems compares with flag_gems.testing.assert_close: rtol by dtype (RESOLUTION: fp16 1e-3,
bf16 0.016, fp32 1.3e-6) and atol 1e-4 times reduce_dim (1 where the test passes none), on
FLOAT_DTYPES (fp16, fp32, bf16), the reference upcast to float64 where the test asks for it.
Left out: backward passes (kernelgen_ops has none); flash_attn_varlen_func's prefill cases
(query lengths above 1: not a decode step) and its soft cap, ALiBi and sliding window (another
attention); topk's values (kernelgen's topk returns the indices only: the grid checks those).
"""

from __future__ import annotations

from itertools import product

from grids import Check, Grid, GridCase, Source

REPO = "FlagOpen/FlagGems"
COMMIT = "532ff438c70343d7aec9becdabb76a71225a0553"
DTYPES = ("float16", "float32", "bfloat16")  # FLOAT_DTYPES
RESOLUTION = {"float16": 1e-3, "float32": 1.3e-6, "bfloat16": 0.016}


def _gems(equal_nan: bool = False) -> dict[str, list[Check]]:
    """gems_assert_close(res, ref, dtype) with its defaults: atol 1e-4, reduce_dim 1."""
    return {d: [Check(atol=1e-4, rtol=RESOLUTION[d], equal_nan=equal_nan)] for d in RESOLUTION}


def _src(path: str, test: str) -> Source:
    return Source(repo=REPO, path=path, test=test, commit=COMMIT)


GRIDS = [
    Grid(
        name="flaggems.softmax.test_accuracy_softmax",
        peer="flaggems",
        op="softmax",
        source=_src("tests/test_reduction_ops.py", "test_accuracy_softmax"),
        checks=_gems(equal_nan=True),
        # DIM_LIST [0, 1]; neg_inf: torch.where(x < 0, -inf, x).
        cases=[
            GridCase(
                shape=list(shape),
                dtype=dtype,
                values="randn_neg_inf" if neg_inf else "randn",
                params={"dim": dim},
            )
            for shape, dtype, dim, neg_inf in product(
                [(1, 256), (4096, 256), (200, 2560, 3)], DTYPES, [0, 1], [True, False]
            )
        ],
    ),
    Grid(
        name="flaggems.rms_norm.test_accuracy_rmsnorm",
        peer="flaggems",
        op="rms_norm",
        source=_src("tests/test_norm_ops.py", "test_accuracy_rmsnorm"),
        checks=_gems(),
        # REDUCTION_SHAPES; the input is shape[:2], x and the weight U(-0.1, 0.1), eps 1e-5.
        cases=[
            GridCase(
                shape=list(shape[:2]),
                dtype=dtype,
                values="uniform",
                params={"lo": -0.1, "hi": 0.1, "weight": "uniform", "eps": 1e-5},
            )
            for shape, dtype in product([(1, 2), (4096, 256), (200, 40999, 3)], DTYPES)
        ],
    ),
    Grid(
        name="flaggems.silu_and_mul.test_accuracy_silu_and_mul",
        peer="flaggems",
        op="silu_and_mul",
        source=_src("tests/test_binary_pointwise_ops.py", "test_accuracy_silu_and_mul"),
        checks=_gems(),
        # POINTWISE_SHAPES: gate and up, each of the shape, as two tensors.
        cases=[
            GridCase(shape=list(shape), dtype=dtype)
            for shape, dtype in product(
                [(), (1,), (1024, 1024), (20, 320, 15), (16, 128, 64, 60), (16, 7, 57, 32, 29)],
                DTYPES,
            )
        ],
    ),
    Grid(
        name="flaggems.topk.test_topk",
        peer="flaggems",
        op="topk",
        source=_src("tests/test_special_ops.py", "test_topk"),
        # gems_assert_equal on the indices of distinct values: the same set per row.
        checks={d: [Check(kind="same_set")] for d in DTYPES},
        # Each row a shuffled arange(hiddensize).
        cases=[
            GridCase(
                shape=[batch, hidden],
                dtype=dtype,
                values="arange_shuffled",
                params={"k": 5, "largest": largest},
            )
            for batch, hidden, largest, dtype in product([4, 8], [128, 256], [True, False], DTYPES)
        ],
    ),
    Grid(
        name="flaggems.decode_attn.test_flash_attn_varlen_func_swap_qg",
        peer="flaggems",
        op="decode_attn",
        source=_src("tests/test_attention_ops.py", "test_flash_attn_varlen_func_swap_qg"),
        checks={d: [Check(atol=2e-2, rtol=1e-2)] for d in ("float16", "bfloat16")},
        # One query token per sequence (kv lengths 1328, 18, 463), 32-token pages drawn at
        # random from 2048 (torch.randint: pages may repeat), soft_cap None only.
        cases=[
            GridCase(
                dtype=dtype,
                params={
                    "kv_lens": [1328, 18, 463],
                    "hq": 8,
                    "hkv": 2,
                    "d": 128,
                    "page": 32,
                    "pages": 2048,
                    "table": "random",
                    "cache": "separate",
                },
            )
            for dtype in ("float16", "bfloat16")
        ],
    ),
]
