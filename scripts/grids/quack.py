"""QuACK's tests (Dao-AILab/quack, tests/) as grids for kernelgen_ops.

QuACK compares with torch.testing.assert_close against F.softmax and its own rmsnorm_ref in the
input dtype. Left out: backward passes; use_compile (the same grid under torch.compile: the
harness's routed and direct calls are what a user makes); Gemma's weight offset (1 + w);
test_rmsnorm_compile_2d_then_4d's second step (bias and residual: another operator).
"""

from __future__ import annotations

from itertools import product

from grids import Check, Grid, GridCase, Source

REPO = "Dao-AILab/quack"
COMMIT = "c8ec3170057987da0ec99883736f381ea1937cf3"
DTYPES = ("bfloat16", "float16", "float32")
WIDTHS = (192, 256, 760, 1024, 1128, 4096, 32768, 131072, 262144)
SOFTMAX_TOL = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-4}  # (atol, rtol) the same
RMS_ATOL = {"bfloat16": 1e-1, "float16": 1e-2, "float32": 1e-4}  # rtol 1e-3


def _src(path: str, test: str) -> Source:
    return Source(repo=REPO, path=path, test=test, commit=COMMIT)


def _same(atol: float, rtol: float, dtypes=DTYPES) -> dict[str, list[Check]]:
    return {d: [Check(atol=atol, rtol=rtol)] for d in dtypes}


GRIDS = [
    Grid(
        name="quack.softmax.test_softmax",
        peer="quack",
        op="softmax",
        source=_src("tests/test_softmax.py", "test_softmax"),
        checks={d: [Check(atol=t, rtol=t)] for d, t in SOFTMAX_TOL.items()},
        # x = 0.1 * randn(M, N)
        cases=[
            GridCase(shape=[m, n], dtype=dtype, values="randn", params={"scale": 0.1})
            for m, n, dtype in product([1, 199], WIDTHS, DTYPES)
        ],
    ),
    Grid(
        name="quack.softmax.test_softmax_extreme_values",
        peer="quack",
        op="softmax",
        source=_src("tests/test_softmax.py", "test_softmax_extreme_values"),
        checks=_same(1e-3, 1e-3, ("float16", "float32")),
        # all 10, all -10, and column 0 at 10 with the rest at -10
        cases=[
            GridCase(shape=[16, 1024], dtype=dtype, values=values, params=params)
            for dtype, (values, params) in product(
                ["float16", "float32"],
                [("const", {"value": 10.0}), ("const", {"value": -10.0}), ("one_high", {})],
            )
        ],
    ),
    Grid(
        name="quack.softmax.test_softmax_numerical_stability",
        peer="quack",
        op="softmax",
        source=_src("tests/test_softmax.py", "test_softmax_numerical_stability"),
        checks=_same(1e-6, 1e-6, ("float32",)),
        # randn + 100 against randn: the same softmax within 1e-6
        cases=[GridCase(shape=[8, 512], dtype="float32", params={"shift": 100.0})],
    ),
    Grid(
        name="quack.softmax.test_softmax_fwd_empty",
        peer="quack",
        op="softmax",
        source=_src("tests/test_softmax.py", "test_softmax_fwd_empty"),
        checks=_same(0.0, 0.0, ("bfloat16",)),
        cases=[GridCase(shape=[0, 4096], dtype="bfloat16")],
    ),
    Grid(
        name="quack.rms_norm.test_rmsnorm_forward_backward",
        peer="quack",
        op="rms_norm",
        source=_src("tests/test_rmsnorm.py", "test_rmsnorm_forward_backward"),
        checks={d: [Check(atol=a, rtol=1e-3)] for d, a in RMS_ATOL.items()},
        # weight randn(N) in weight_dtype (None: no weight, ones), eps 1e-6; the test skips
        # fp32 at N >= 256K with M >= 8K.
        cases=[
            GridCase(
                shape=[m, n],
                dtype=dtype,
                params={"weight": "randn" if wd else "ones", "weight_dtype": wd, "eps": 1e-6},
            )
            for m, n, dtype, wd in product(
                [1, 199, 8 * 1024], WIDTHS, DTYPES, ["bfloat16", "float32", None]
            )
            if not (n >= 256 * 1024 and dtype == "float32" and m >= 8 * 1024)
        ],
    ),
    Grid(
        name="quack.rms_norm.test_rmsnorm_noncontiguous_grad",
        peer="quack",
        op="rms_norm",
        source=_src("tests/test_rmsnorm.py", "test_rmsnorm_noncontiguous_grad"),
        checks={d: [Check(atol=RMS_ATOL[d], rtol=1e-3)] for d in ("bfloat16", "float32")},
        cases=[
            GridCase(
                shape=[2, 1024, 256],
                dtype=dtype,
                params={"weight": "ones", "weight_dtype": "float32", "eps": 1e-6},
            )
            for dtype in ("bfloat16", "float32")
        ],
    ),
    Grid(
        name="quack.rms_norm.test_rmsnorm_compile_2d_then_4d",
        peer="quack",
        op="rms_norm",
        source=_src("tests/test_rmsnorm.py", "test_rmsnorm_compile_2d_then_4d"),
        checks={"bfloat16": [Check(atol=RMS_ATOL["bfloat16"], rtol=1e-3)]},
        cases=[
            GridCase(
                shape=[32, 256],
                dtype="bfloat16",
                params={"weight": "randn", "weight_dtype": "float32", "eps": 1e-5},
            )
        ],
    ),
]
