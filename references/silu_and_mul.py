"""silu_and_mul(x): for x[..., 2d], silu(x[..., :d]) * x[..., d:], of shape [..., d].

The gated activation of SwiGLU MLPs. Memory traffic: read 2d, write d per row
(3 * rows * d * itemsize bytes); ~6 flops per output element (exp, add, div, two muls).
"""

import torch
import torch.nn.functional as F


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return F.silu(x[..., :d]) * x[..., d:]


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["rows"] * dims["d"]
    return {"bytes": 3 * n * itemsize, "flops": 6 * n}


SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "2*d"]}],
    "dtypes": ["float32", "float16", "bfloat16"],
    "dists": ["normal", "wide"],
    "bucket": ["rows", "d"],
    "sizes": [
        {"name": "one", "dims": {"rows": 1, "d": 1}, "interpreter": True},
        {"name": "one_row", "dims": {"rows": 1, "d": 781}, "interpreter": True},
        {
            "name": "rank1",
            "dims": {"rows": 1, "d": 77},
            "shapes": {"x": [154]},
            "interpreter": True,
        },
        {
            "name": "rank3",
            "dims": {"rows": 6, "d": 50},
            "shapes": {"x": [2, 3, 100]},
            "interpreter": True,
        },
        {"name": "odd", "dims": {"rows": 37, "d": 1823}, "interpreter": True},
        {"name": "long_row", "dims": {"rows": 3, "d": 5003}, "interpreter": True},
        {"name": "many_rows", "dims": {"rows": 257, "d": 67}, "interpreter": True},
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
        {"name": "huge_row", "dims": {"rows": 4, "d": 70001}},
        {"name": "mlp", "dims": {"rows": 2048, "d": 14336}, "dists": ["normal"]},
    ],
    "bench": [
        {"name": "4096x14336", "dims": {"rows": 4096, "d": 14336}},
        {"name": "64x18432", "dims": {"rows": 64, "d": 18432}},
        {"name": "16384x4096", "dims": {"rows": 16384, "d": 4096}},
        {"name": "1x14336", "dims": {"rows": 1, "d": 14336}},
    ],
}
