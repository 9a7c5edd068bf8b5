"""hadamard(x): x @ H_D * D^-0.5 over the last dimension, H_D the Sylvester Hadamard matrix of size
D (a power of two, 64 to 4096 in the models): H_1 = [1], H_2n = [[H_n, H_n], [H_n, -H_n]], so
H[i, j] = (-1)^popcount(i & j). DeepSeek-V4 rotates activations with it before FP8 quantization
(FlagGems 5.0.2 ships a Triton kernel for it); scaled by D^-0.5 it is orthonormal.

Computed here as the fast Walsh-Hadamard transform (log2(D) butterfly stages of adds and
subtracts), in at least fp32 and rounded once: float64 when the harness evaluates the ground
truth on upcast inputs, and in fp32 for torch's own result in a 16-bit case dtype, so a kernel
must keep fp32 sums too (a 16-bit butterfly rounds log2(D) times).

Memory traffic: x read once, the output written once (2 * rows * D * itemsize bytes); D * log2(D)
adds per row. At ~12 flops per element for D = 4096 it is memory-bound on any GPU: the speed to
reach is the copy ceiling.
"""

import functools
import math

import torch

from kernelgen.spec.models import MODELS, named

# DeepSeek-V3.2's lightning indexer rotates its q (index_n_heads 64 of 128 a token) and its k
# (one of 128 a token) with this transform before it quantizes them to fp8
# (deepseek-ai/DeepSeek-V3.2-Exp inference/model.py, rotate_activation).
INDEXER = MODELS["deepseek_v3.2"]


def hadamard(x: torch.Tensor) -> torch.Tensor:
    acc = torch.promote_types(x.dtype, torch.float32)
    d = x.shape[-1]
    y = x.to(acc).reshape(-1, d)
    h = 1
    while h < d:
        # Pairs (a, b) at distance h within blocks of 2h: (a + b, a - b).
        pairs = y.view(-1, d // (2 * h), 2, h)
        y = torch.stack((pairs[:, :, 0] + pairs[:, :, 1], pairs[:, :, 0] - pairs[:, :, 1]), dim=2)
        h *= 2
    return (y.reshape(x.shape) * d**-0.5).to(x.dtype)


def eager(x: torch.Tensor) -> torch.Tensor:
    """The peer for speed: a dense matmul with H_D in x's dtype (cuBLAS, fp32 accumulation), the
    matrix built once per (D, dtype, device), as a model keeps it. TF32 stays off for fp32."""
    d = x.shape[-1]
    return x @ _matrix(d, x.dtype, x.device)


@functools.lru_cache(maxsize=16)
def _matrix(d: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    i = torch.arange(d)
    bits = i[:, None] & i[None, :]
    parity = torch.zeros_like(bits)
    while bool(bits.any()):
        parity ^= bits & 1
        bits = bits >> 1
    return ((1 - 2 * parity).double() * d**-0.5).to(dtype=dtype, device=device)


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["rows"] * dims["D"]
    return {"bytes": 2 * n * itemsize, "flops": n * int(math.log2(dims["D"]))}


SPEC = {
    "inputs": [{"name": "x", "shape": ["rows", "D"]}],
    "dtypes": ["float32", "float16", "bfloat16"],
    # No specials: inf - inf in a butterfly and inf * -1 + inf in a dense product put NaN in
    # different places, so two honest kernels would disagree where the reference is undefined.
    "dists": ["normal", "uniform"],
    "bucket": ["rows", "D"],
    # Each run draws more cases from here (kernelgen/spec/domain.py): D among the powers of two
    # the models use (up to 256 on CPU, where a dense kernel's D = 1024 takes 1.7 s a call),
    # any layout, rank up to 4. Not `negative`: a row shifted by 1e3 sums to 1e3 * sqrt(D) in
    # its first output, past fp16's range at D = 4096. Nor `wide` or `large` while tolerances are
    # absolute: an output that cancels its row's large values errs by fp32's rounding of them,
    # past atol (the seed in fp32 on `wide` rows, D = 256: 1.8e-5). Nor NaN or inf (`dists`).
    "domain": {
        "dims": {
            "D": {"choices": [64, 128, 256, 512, 1024, 2048, 4096], "cpu_max": 256},
            "rows": {"range": [1, 32768], "cpu_max": 48},
        },
        "layouts": ["contiguous", "strided", "transposed", "leading", "offset", "expanded"],
        "dists": [
            "normal",
            "uniform",
            "small",
            "spike",
            "sorted_up",
            "sorted_down",
            "constant",
            "ties",
            "denormal",
        ],
        "lead": "rows",
        "max_rank": 4,
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 128-wide heads
    # (tokens x heads rows, 262k tokens of 64 heads) past 2^31 elements, 16.8M rows.
    "limits": [
        {
            "name": "heads",
            "dims": {"rows": 16777280, "D": 128},
            "dtype": "bfloat16",
            "rows": "rows",
        },
    ],
    "sizes": [
        # CPU: D from 64 up (the models' range), one row, odd row counts, a strided and a
        # transposed x, and more rows than a persistent grid of 4 programs per SM (132 SMs).
        # Powers of two only: the operator is defined for them alone.
        {"name": "one_row", "dims": {"rows": 1, "D": 64}, "interpreter": True},
        # Early in the grid, so a kernel wrong only past D = 256 fails fast. The interpreter
        # takes ~6 ms per [64, 64] step of a dense kernel: D = 1024 is 1.7 s a call there, 4096
        # would be 27 s; the GPU runs 4096.
        {
            "name": "wide",
            "dims": {"rows": 1, "D": 1024},
            "interpreter": True,
            "dtypes": ["float32", "bfloat16"],
            "dists": ["normal"],
        },
        {"name": "odd_rows", "dims": {"rows": 37, "D": 128}, "interpreter": True},
        {
            "name": "rank3",
            "dims": {"rows": 6, "D": 256},
            "shapes": {"x": [2, 3, 256]},
            "interpreter": True,
            "dists": ["normal"],
        },
        {
            "name": "strided",
            "dims": {"rows": 19, "D": 128},
            "layout": "strided",
            "interpreter": True,
            "dists": ["normal"],
        },
        {
            "name": "transposed",
            "dims": {"rows": 45, "D": 64},
            "layout": "transposed",
            "interpreter": True,
            "dists": ["normal"],
        },
        {
            "name": "rows_past_grid",
            "dims": {"rows": 531, "D": 64},
            "interpreter": True,
            "dtypes": ["float16"],
            "dists": ["normal"],
        },
        # GPU: the bench widths, and more rows than 132 SMs x 64 programs (a prime count).
        {"name": "rotate_128", "dims": {"rows": 4096, "D": 128}, "dists": ["normal"]},
        {"name": "rotate_4096", "dims": {"rows": 1000, "D": 4096}, "dists": ["normal"]},
        {
            "name": "rows_past_gpu_grid",
            "dims": {"rows": 20011, "D": 256},
            "dtypes": ["float16", "bfloat16"],
            "dists": ["normal"],
        },
    ],
    # The indexer's q rotations of 64 and 1024 tokens (64 heads of 128 each; the first also
    # 4096 tokens' k), and 4096 x 4096, no model's: no config we read asks for a rotation that
    # wide, 4096 being the hidden of Qwen3-8B and Llama-3-8B, the width rotation-quantized
    # models (QuaRot, SpinQuant) rotate.
    "bench": [
        named(
            "deepseek_v3.2",
            {"rows": 64 * INDEXER.index_heads, "D": INDEXER.index_head_dim},
            was="4096x128",
        ),
        named(
            "deepseek_v3.2",
            {"rows": 1024 * INDEXER.index_heads, "D": INDEXER.index_head_dim},
            was="65536x128",
        ),
        {"name": "4096x4096", "dims": {"rows": 4096, "D": 4096}},
    ],
}
