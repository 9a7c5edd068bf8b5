"""fp8_gemm(a, a_scale, b, b_scale): the block-scaled FP8 GEMM of DeepSeek-V3/V4's linear layers,
out = dequant(a) @ dequant(b).T in bf16 (M, N).

a (M, K) float8_e4m3fn holds activations as act_quant writes them: one fp32 scale per row and
group of 128 columns, a_scale (M, K/128). b (N, K) float8_e4m3fn holds a weight with one fp32
scale per 128 x 128 block, b_scale (ceil(N/128), K/128); N need not be a multiple of 128 (576,
DeepSeek's wkv_a), its last scale row then covers fewer rows. K is a multiple of 128. So

    out[m, n] = sum_k a[m, k] * a_scale[m, k // 128] * b[n, k] * b_scale[n // 128, k // 128]

rounded once to bf16. Inside one 128-wide K block both scales are constant: a kernel may sum the
block's fp8 products (a tensor-core dot) and scale the block's sum, as DeepSeek's kernel does.
a's rows may be padded (a strided view, K contiguous); b and the scales are contiguous.

The ground truth is float64: e4m3 values and fp32 scales are exact there, and its own roundings
(2^-53 an operation) are nothing against bf16's 2^-8. Compared per element by the bound below:
bf16 rounding of the result plus the rounding of operands dequantized to bf16 (the peer's way),
which covers fp32 accumulation many times over.

Memory traffic: a and b once (1 byte an entry), the scales (4 bytes a block), out once (2 bytes
an entry); 2*M*N*K flops. Compute-bound at prefill sizes (M in the thousands); at decode sizes
(M of 16 to 128) reading b dominates and the kernel is memory-bound.
"""

import math

import torch

from kernelgen.spec import Size
from kernelgen.spec.inputs import lay_out, values
from kernelgen.spec.models import MODELS, named

BLOCK = 128
E4M3_MAX = 448.0
# bf16's unit roundoff: 8 significant bits, a result rounded to nearest is within 2^-8 of it.
BF16_U = 2.0**-8
# The bound on |out - float64|, per element: BF16_U * |ref| + BOUND_PER_RMS * R, where
# R = sqrt(sum_k (a_k b_k)^2) over the dequantized products: the size that rounding errors of
# the products sum up to (they have random signs; router_gemm's sqrt(K) for unit products).
#   - Rounding the result to bf16: at most BF16_U * |ref|, the first term, all an exact kernel
#     is off by.
#   - The peer rounds the dequantized a and b to bf16 before a bf16 matmul: each product is off
#     by d_a + d_b (each within 2^-8, RMS 1.7e-3 for random mantissas), 2.4e-3 R RMS in all.
#   - fp32 accumulation in any order: ~2^-24 * sqrt(K) * R, 5e-6 R at K=7168. The H200's fp8
#     tensor cores keep ~13 bits in their sums (DeepSeek-V3's report): summed so within each
#     128-wide block only, as the seed's dot is, that is ~1e-3 R.
# Measured on CPU on make_inputs' values, the error beyond BF16_U * |ref| as a multiple of R,
# K from 128 to 7168, normal and uniform:
#   the peer: at most 1.2e-2 over 2.4M outputs (9.7e-3 uniform); with its scales rounded to
#     bf16 as well, 2.0e-2;
#   exact block dots, fp32 accumulation (the seed): 0; 13-bit sums per block (emulated): 1.6e-3;
#   a bf16 accumulator across K blocks: 1.2e-2 at K=512, 2.7e-2 at 2048, 5.7e-2 at 7168;
#   the reference times 1 + 1e-2 * sin: 3.5e-2; times 1 + 5e-2 * sin: 0.17;
#   a scale taken from the wrong block (the first of a row, the first row of b_scale): 5 or more.
# 2^-5 = 3.1e-2 passes the peer with 2.5x to spare (1.5x with bf16 scales) and fails a scale
# wrong by 2x in any block that carries weight, a bf16 accumulator at the models' K and 5% noise.
BOUND_PER_RMS = 2.0**-5


def fp8_gemm(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    # float64 when the harness evaluates the ground truth on upcast inputs; otherwise (torch's
    # own answer) dequantized and multiplied in fp32, rounded once to bf16.
    wide = torch.float64 if a.dtype == torch.float64 else torch.float32
    out = dequant_a(a, a_scale, wide) @ dequant_b(b, b_scale, wide).T
    return out if wide == torch.float64 else out.to(torch.bfloat16)


def dequant_a(a: torch.Tensor, a_scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """a * its per-(row, 128 columns) scales, in `dtype`."""
    return a.to(dtype) * a_scale.to(dtype).repeat_interleave(BLOCK, dim=1)


def dequant_b(b: torch.Tensor, b_scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """b * its per-128x128-block scales, in `dtype` (the last block row cut to N)."""
    full = b_scale.to(dtype).repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)
    return b.to(dtype) * full[: b.shape[0]]


def eager(
    a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor
) -> torch.Tensor:
    """The peer for speed: dequantize in fp32, round to bf16, one bf16 cuBLAS matmul, as a model
    without an fp8 kernel writes it (torch's _scaled_mm refuses these block scales in 2.11)."""
    a16 = dequant_a(a, a_scale, torch.float32).to(torch.bfloat16)
    b16 = dequant_b(b, b_scale, torch.float32).to(torch.bfloat16)
    return a16 @ b16.T


def bound(ref: torch.Tensor, inputs: list) -> torch.Tensor:
    """The allowed |out - ref| of each element (see BOUND_PER_RMS)."""
    a, a_scale, b, b_scale = inputs
    a64 = dequant_a(a, a_scale, torch.float64)
    b64 = dequant_b(b, b_scale, torch.float64)
    rms = ((a64 * a64) @ (b64 * b64).T).sqrt()
    return BF16_U * ref.abs() + BOUND_PER_RMS * rms


def compare(out: torch.Tensor, ref: torch.Tensor, case, inputs: list) -> str | None:
    """Every element finite (the inputs are, and so is the reference) and within bound() of
    `ref`: the float64 truth, or the first answer or the peer's where the judge compares two
    calls or rechecks a bench. None when that holds."""
    if out.numel() == 0:
        return None
    got, ref = out.double(), ref.double()
    broken = ~torch.isfinite(got)
    if bool(broken.any()):
        m, n = (int(i) for i in broken.nonzero()[0])
        # NaN where nothing was written: the harness fills outputs with NaN before a call.
        hint = " (output never written there?)" if math.isnan(float(got[m, n])) else ""
        return (
            f"{float(got[m, n])} at [{m}, {n}] where {float(ref[m, n]):.8g} is expected; "
            f"{int(broken.sum())} of {out.numel()} entries not finite{hint}"
        )
    err = (got - ref).abs()
    allowed = bound(ref, inputs)
    over = err > allowed
    if not bool(over.any()):
        return None
    excess = torch.where(over, err / allowed.clamp_min(1e-300), 0.0)
    m, n = (int(i) for i in (excess == excess.max()).nonzero()[0])
    return (
        f"{float(got[m, n]):.6g} at [{m}, {n}], expected {float(ref[m, n]):.8g} (|err| "
        f"{float(err[m, n]):.3g} > bound {float(allowed[m, n]):.3g} = 2^-8*|ref| + "
        f"2^-5*sqrt(sum_k (a_k*b_k)^2)); {int(over.sum())} of {out.numel()} entries off"
    )


def quantize(x: torch.Tensor, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x (R, K) to e4m3 with one fp32 scale per `rows` x 128 block, amax / 448 (act_quant's and
    DeepSeek's weight rule): scales (ceil(R / rows), K / 128)."""
    r, k = x.shape
    pad = -r % rows
    blocks = torch.cat([x, x.new_zeros(pad, k)]).view(-1, rows, k // BLOCK, BLOCK)
    amax = blocks.abs().amax(dim=(1, 3))
    scale = (amax / E4M3_MAX).float()
    per_entry = scale.double().repeat_interleave(rows, 0).repeat_interleave(BLOCK, 1)[:r]
    return (x / per_entry).to(torch.float8_e4m3fn), scale


def _spread(shape: tuple[int, int], gen: torch.Generator) -> torch.Tensor:
    """One power of two per block, 2^-3 to 2^3: blocks' scales differ by up to 64x, so a kernel
    that takes one block's scale for another's is off by a factor on values."""
    return torch.exp2(torch.randint(-3, 4, shape, generator=gen).double())


def make_inputs(size, dtype: str, dist: str, gen: torch.Generator) -> list:
    """a and b drawn in the case distribution, each block scaled by its own power of two, then
    quantized as DeepSeek's activations and weights are (amax / 448 per block): every block
    spans e4m3's range, and the block scales carry the spread. b is drawn 2^-6 times smaller (a
    weight's values) so that outputs are of unit size. The case dtype names no input: a and b
    are e4m3, the scales fp32, whatever it is."""
    m, n, k = size.dims["M"], size.dims["N"], size.dims["K"]
    kb = k // BLOCK
    x = values([m, k], dist, gen) * _spread((m, kb), gen).repeat_interleave(BLOCK, 1)
    nb = -(-n // BLOCK)
    w = values([n, k], dist, gen) * 2.0**-6
    w = w * _spread((nb, kb), gen).repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)[:n]
    a, a_scale = quantize(x, 1)
    b, b_scale = quantize(w, BLOCK)
    layout = size.layout if isinstance(size, Size) else "contiguous"
    return [lay_out(a, layout, gen), a_scale, b, b_scale]


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    m, n, k = dims["M"], dims["N"], dims["K"]
    scales = (m + -(-n // BLOCK)) * (k // BLOCK) * 4
    flops = 2 * m * n * k  # e4m3 products on the tensor cores: the fp8 rate
    return {"bytes": m * k + n * k + scales + m * n * 2, "flops": flops, "flops_at": "fp8"}


def _size(name: str, m: int, n: int, k: int, **extra) -> dict:
    return {"name": name, "dims": {"M": m, "N": n, "K": k}, **extra}


def _cpu(name: str, m: int, n: int, k: int, **extra) -> dict:
    return _size(name, m, n, k, interpreter=True, **extra)


# DeepSeek-V3's linear layers, (N, K) of each weight (kernelgen/spec/models.py): the shared
# expert's down projection (its 2048 -> hidden) and fused gate and up projections (hidden ->
# 2 x 2048), the attention's output projection (128 heads x v_head_dim 128 -> hidden) and its
# q down-projection (hidden -> q_lora_rank).
_V3 = MODELS["deepseek_v3"]
DOWN = (_V3.hidden, _V3.expert_intermediate)
GATE_UP = (2 * _V3.expert_intermediate, _V3.hidden)
WO = (_V3.hidden, _V3.heads * _V3.v_head_dim)
WQ_A = (_V3.q_lora_rank, _V3.hidden)


def _v3(m: int, weight: tuple[int, int], was: str | None = None) -> dict:
    """M tokens through one of DeepSeek-V3's weights, timed with fp32 cases (SPEC.dtypes)."""
    n, k = weight
    return named("deepseek_v3", {"M": m, "N": n, "K": k}, was=was, dtype="float32")


SPEC = {
    "inputs": [
        # Activations as act_quant writes them; rows may be padded (a view into a wider buffer).
        {"name": "a", "shape": ["M", "K"], "dtype": "float8_e4m3fn"},
        {"name": "a_scale", "shape": ["M", "K/128"], "dtype": "float32", "layout_varies": False},
        # The weight and its block scales: parameters, contiguous.
        {"name": "b", "shape": ["N", "K"], "dtype": "float8_e4m3fn", "layout_varies": False},
        {
            "name": "b_scale",
            "shape": ["N/128", "K/128"],
            "dtype": "float32",
            "layout_varies": False,
        },
    ],
    # Every input has its own dtype and the output is bf16 whatever the case: the case dtype
    # names no tensor. float32 (the scales' and the accumulator's) keeps the cases on the CPU,
    # where the interpreter's fp8 casts and fp8 dots are the H200's (verify/interpreter.py).
    "dtypes": ["float32"],
    "dists": ["normal", "uniform"],
    "bucket": ["M", "N", "K"],
    # The judge's error ratio (mean relative error against torch's, which dequantizes in fp32
    # and rounds once to bf16) on top of the bound: the bf16 rounding of the output is most of
    # either error. Measured on make_inputs' values (CPU, K 384 to 2048): exact block products
    # or 13-bit sums per block (the H200's fp8 tensor cores) 1.00x; operands dequantized to bf16
    # first (the peer's way) 1.8x-2.0x, which the default 2x would pass or not by the draw.
    "error_ratio": 1.5,
    # Each run draws more cases from here (kernelgen/spec/domain.py), through make_inputs above
    # (lay_out takes a drawn placement as it is): K in whole 128-wide blocks, any M and N (a
    # partial last scale row of b), a's rows dense, padded or past a storage offset (K stays
    # contiguous, as the contract has it: not transposed, not broadcast). Values of every
    # finite family but `denormal`: fp32 subnormals' amax / 448 underflows a block's scale to
    # 0 (quantize divides by it), which no real activation or weight has.
    "domain": {
        "dims": {
            "K": {"range": [128, 16384], "multiple_of": BLOCK, "cpu_max": 2048},
            "N": {"range": [1, 16384], "cpu_max": 256},
            "M": {"range": [1, 8192], "cpu_max": 64},
        },
        "layouts": ["contiguous", "strided", "offset"],
        "dists": [
            "normal",
            "uniform",
            "wide",
            "small",
            "large",
            "spike",
            "negative",
            "sorted_up",
            "sorted_down",
            "constant",
            "ties",
        ],
        # The bench's 4096 x 7168 b and its neighbours.
        "cuda_elements": 1 << 25,
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 299600 tokens of
    # e4m3 activations at K = 7168 against the bench's 4096 x 7168 weight, `a` past 2^31
    # elements from token 299594 on, rows past a grid axis's end. Drawn by make_inputs above,
    # a block of rows at a time (b and its scales are the first block's).
    "limits": [
        {
            "name": "tokens",
            "dims": {"M": 299600, "N": 4096, "K": 7168},
            "dtype": "float32",
            "rows": "M",
        },
    ],
    "sizes": [
        # CPU: one row, one K block, M odd, N not a multiple of 64 or 128 (a partial last scale
        # row), several scale rows along N, K long enough for many scale blocks, multiples of
        # every block (where a kernel drops its masks), a row-padded a.
        _cpu("one_row", 1, 200, 256),
        _cpu("one_block", 5, 128, 128),
        _cpu("odd", 67, 200, 384),
        _cpu("pow2", 128, 256, 512, dists=["uniform"]),
        _cpu("long_k", 3, 72, 2048, dists=["normal"]),
        _cpu("wkv_a", 2, 576, 1024, dists=["normal"]),
        _cpu("strided", 19, 160, 256, layout="strided", dists=["normal"]),
        # GPU: the bench shapes, decode M=1, N = 576 (a partial scale row at model size), M past
        # any tile with tails in every dim, a padded a at model size.
        _size("decode_7168x2048", 16, 7168, 2048),
        _size("batch_7168x2048", 128, 7168, 2048),
        _size("prefill_7168x2048", 4096, 7168, 2048, dists=["normal"]),
        _size("prefill_4096x7168", 4096, 4096, 7168, dists=["normal"]),
        _size("decode_one_4096x7168", 1, 4096, 7168),
        _size("wkv_a_gpu", 1999, 576, 7168, dists=["uniform"]),
        _size("strided_gpu", 333, 7168, 2048, layout="strided", dists=["normal"]),
        # The two weights the bench adds, at the bench's prefill: the longest K (128 scale
        # blocks a row) and the narrowest N.
        _size("prefill_wo", 4096, *WO, dists=["normal"]),
        _size("prefill_wq_a", 4096, *WQ_A, dists=["uniform"]),
    ],
    # DeepSeek-V3's down projection at a decode batch of 16, at 128 tokens and at a 4096-token
    # prefill, and at that prefill its gate and up projections, its attention's output
    # projection (K = 16384, the longest) and q down-projection (N = 1536, 12 column tiles of
    # 128 where the others have 32 to 56): the prefill shapes are where fp8 must beat bf16.
    "bench": [
        _v3(16, DOWN, was="16x7168x2048"),
        _v3(128, DOWN, was="128x7168x2048"),
        _v3(4096, DOWN, was="4096x7168x2048"),
        _v3(4096, GATE_UP, was="4096x4096x7168"),
        _v3(4096, WO),
        _v3(4096, WQ_A),
    ],
}
