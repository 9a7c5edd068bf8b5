"""Liger-Kernel's tests (linkedin/Liger-Kernel, test/transformers/) as grids for kernelgen_ops.

Liger compares with torch.allclose or assert_verbose_allclose at (atol, rtol) per dtype, fp32
and bf16, against torch modules in the same dtype. Left out: backward passes; Gemma's RMSNorm
(offset 1: x_hat * (1 + w), another operator) and the "none" casting mode's module, which
computes in the input dtype; the MLP tests' projections (the grid keeps the SiLU-and-mul step,
on gate and up of the MLP's intermediate shape, drawn N(0, 1)). test_liger_softmax_functional
runs the grid of test_liger_softmax.
"""

from __future__ import annotations

from itertools import product

from grids import Check, Grid, GridCase, Source

REPO = "linkedin/Liger-Kernel"
COMMIT = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"


def _src(path: str, test: str) -> Source:
    return Source(repo=REPO, path=path, test=test, commit=COMMIT)


def _checks(by_dtype: dict[str, tuple[float, float]]) -> dict[str, list[Check]]:
    return {d: [Check(atol=atol, rtol=rtol)] for d, (atol, rtol) in by_dtype.items()}


RMS = {"float32": (1e-4, 1e-6), "bfloat16": (2e-1, 2e-2)}
SWIGLU = {"float32": (1e-0, 1e-5), "bfloat16": (1e4, 1e-2)}

GRIDS = [
    Grid(
        name="liger.softmax.test_liger_softmax",
        peer="liger",
        op="softmax",
        source=_src("test/transformers/test_softmax.py", "test_liger_softmax"),
        checks=_checks({"float32": (1e-5, 1e-5), "bfloat16": (5e-2, 5e-2)}),
        cases=[
            GridCase(shape=list(shape), dtype=dtype)
            for shape, dtype in product(
                [(2, 8), (4, 16), (1, 1023), (3, 7, 256), (1, 4096), (1, 2, 4096)],
                ["float32", "bfloat16"],
            )
        ],
    ),
    Grid(
        name="liger.rms_norm.test_correctness",
        peer="liger",
        op="rms_norm",
        source=_src("test/transformers/test_rms_norm.py", "test_correctness"),
        checks=_checks(RMS),
        # LlamaRMSNorm against LigerRMSNorm, both with their weight initialized to ones (with
        # elementwise_affine or without, the same answer), eps 1e-6.
        cases=[
            GridCase(shape=list(shape), dtype=dtype, params={"weight": "ones", "eps": 1e-6})
            for shape, dtype in product([(2, 128, 512), (5, 123, 123)], RMS)
        ],
    ),
    Grid(
        name="liger.rms_norm.test_correctness_functional",
        peer="liger",
        op="rms_norm",
        source=_src("test/transformers/test_rms_norm.py", "test_correctness_functional"),
        checks=_checks(RMS),
        # W = randn(hd) with elementwise_affine, None (ones) without; eps 1e-6.
        cases=[
            GridCase(shape=list(shape), dtype=dtype, params={"weight": weight, "eps": 1e-6})
            for shape, dtype, weight in product([(2, 2, 8), (9, 7, 41)], RMS, ["randn", "ones"])
        ],
    ),
    Grid(
        name="liger.silu_and_mul.test_correctness_llamamlp",
        peer="liger",
        op="silu_and_mul",
        source=_src("test/transformers/test_swiglu.py", "test_correctness_llamamlp"),
        checks=_checks(SWIGLU),
        # (bsz, seq_len, intermediate_size) of (bsz, seq_len, hidden, intermediate).
        cases=[
            GridCase(shape=[bsz, seq, inter], dtype=dtype)
            for (bsz, seq, _hidden, inter), dtype in product(
                [(2, 256, 256, 512), (6, 42, 123, 431)], SWIGLU
            )
        ],
    ),
    Grid(
        name="liger.silu_and_mul.test_correctness_functional",
        peer="liger",
        op="silu_and_mul",
        source=_src("test/transformers/test_swiglu.py", "test_correctness_functional"),
        checks=_checks(SWIGLU),
        cases=[
            GridCase(shape=list(shape), dtype=dtype)
            for shape, dtype in product([(2, 8, 8), (9, 7, 41)], SWIGLU)
        ],
    ),
]
