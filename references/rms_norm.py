"""rms_norm(x, weight, eps): x * rsqrt(mean(x^2, -1) + eps) * weight over the last dimension,
computed in fp32 (or wider), returned in x's dtype.

Memory traffic: read x, write y (2 * numel * itemsize) plus the weight once; ~4 flops per element.
"""

import torch


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
        {"kind": "scalar", "name": "eps", "value": 1e-6},
    ],
    "dtypes": ["float32", "float16", "bfloat16"],
    "dists": ["normal", "wide"],
    "reduction": "cols",
    "bucket": ["rows", "cols"],
    "sizes": [
        {"name": "one", "dims": {"rows": 1, "cols": 1}, "interpreter": True},
        {"name": "one_row", "dims": {"rows": 1, "cols": 781}, "interpreter": True},
        {
            "name": "rank1",
            "dims": {"rows": 1, "cols": 77},
            "shapes": {"x": [77]},
            "interpreter": True,
        },
        {
            "name": "rank3",
            "dims": {"rows": 6, "cols": 50},
            "shapes": {"x": [2, 3, 50]},
            "interpreter": True,
        },
        {"name": "odd", "dims": {"rows": 37, "cols": 1823}, "interpreter": True},
        {"name": "long_row", "dims": {"rows": 3, "cols": 5003}, "interpreter": True},
        {"name": "many_rows", "dims": {"rows": 257, "cols": 67}, "interpreter": True},
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
        # GPU-only sizes run in fewer combinations: each new row length is a new compile.
        {"name": "huge_row", "dims": {"rows": 4, "cols": 70001}, "dtypes": ["float32", "bfloat16"]},
        {"name": "wide_model", "dims": {"rows": 512, "cols": 16384}, "dtypes": ["bfloat16"]},
        {
            "name": "square",
            "dims": {"rows": 4096, "cols": 4096},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal"],
        },
    ],
    "bench": [
        {"name": "4096x4096", "dims": {"rows": 4096, "cols": 4096}},
        {"name": "16384x8192", "dims": {"rows": 16384, "cols": 8192}},
        {"name": "64x7168", "dims": {"rows": 64, "cols": 7168}},
        {"name": "1x4096", "dims": {"rows": 1, "cols": 4096}},
        {"name": "8x7168", "dims": {"rows": 8, "cols": 7168}},
    ],
}
