"""act_quant(x): per-token-group FP8 quantization, group 128, as DeepSeek-V3/V4 quantize the
activations that enter an FP8 GEMM. x (M, K) -> (q (M, K) float8_e4m3fn, scales (M, K/128) fp32):
per group of 128 consecutive entries of a row, scale = amax / 448 (448: e4m3's largest finite) and
q = x / scale rounded to e4m3, so that q * scale gives x back within one e4m3 step.

An all-zero group has scale 0 and q 0 (0 / 0 would be NaN).

The rule the shipped kernel (generated/kernelgen_ops/act_quant.py) follows, as DeepSeek-V3's
act_quant_kernel (inference/kernel.py) does: per group, amax = max |x| in fp32 (exact), s = amax /
448 rounded to fp32, y = x / s rounded to fp32, and q = y converted to e4m3 to nearest, ties to
even, saturating at 448 (the H200's cvt.rn.satfinite). The quantity rounded to e4m3 is the fp32
quotient y, not x / s: where x / s lies within half an fp32 unit of the midpoint between two e4m3
values, y is that midpoint and the even code wins whichever side x / s lies on: one step from x / s
rounded once from float64 where x / s lies on the odd side (torch emulation on CPU, 4 x 4096 x 7168
N(0, 1) values: 0.13% of bf16 entries, 0.014% of fp16). tests/test_act_quant_rule.py builds such
ties and shows the kernel bit-identical to DeepSeek's rule on them, and different from one rounding
exactly there. On the H200 both divisions, in DeepSeek's kernel as in the shipped one, are Triton's
`/` (div.full.f32: within 2 ulps of y, not correctly rounded). Where the shipped kernel leaves
DeepSeek's rule: DeepSeek-V3's kernel clamps amax at 1e-4 since 2025-08 (before, an all-zero group's
0 / 0 gave NaN codes), so a group whose amax is below 1e-4 gets scale 1e-4 / 448 there and amax /
448 here, and an all-zero group scale 1e-4 / 448 there and 0 here.

This reference: the scale amax / 448 rounded once to fp32, from float64 (exact for 16-bit and
fp32 x), and q = x / that scale cast to e4m3 by torch, whose cast from float64 rounds to fp32
first (c10's Float8_e4m3fn is built from a float): its q is the rule's above, not x / scale
rounded once. The comparison holds a kernel to neither at a tie: it allows either neighbour
where x / scale is within TIE_WINDOW of one, and nowhere else. Its scales must be amax / 448 to
fp32 rounding: a scale of another rule (a power of two, one per row) can dequantize to values
close to x, and is still not the scale an FP8 GEMM downstream was built for.

Memory traffic: x read once, q written once (1 byte an entry), the scales (4 bytes a group): the
operator is memory-bound; the speed to reach is the copy ceiling.
"""

import torch

from kernelgen.spec.inputs import lay_out, values
from kernelgen.spec.models import MODELS, named

# What DeepSeek quantizes before an FP8 GEMM (kernelgen/spec/models.py): V3's hidden (7168
# wide, 56 groups a row), and V3.2's indexer q (64 heads of 128 a token, one group a row,
# deepseek-ai/DeepSeek-V3.2-Exp inference/model.py).
HIDDEN = MODELS["deepseek_v3"].hidden
INDEXER = MODELS["deepseek_v3.2"]

GROUP = 128
E4M3_MAX = 448.0
# Where x / scale lies within this relative distance of the midpoint between two e4m3 values,
# either is right: an fp32 quotient is within 2^-24 of x / scale, Triton's `/` (div.full.f32,
# not correctly rounded) within 2 ulps, x * (1 / scale) within about 1.5, a scale one fp32
# unit off moves it by 2^-23; 2^-19 holds all of them 8x over. Away from a tie, every one
# rounds to the same e4m3 value, the nearest: the one a kernel must write.
TIE_WINDOW = 2.0**-19


def act_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    groups = x.double().reshape(m, k // GROUP, GROUP)
    amax = groups.abs().amax(dim=-1, keepdim=True)
    scale = (amax / E4M3_MAX).float()
    wide = scale.double()
    q = torch.where(wide > 0, groups / wide, 0.0)  # 0 / 0 where not taken
    return q.reshape(m, k).to(torch.float8_e4m3fn), scale.reshape(m, k // GROUP)


def eager(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The peer for speed: the quantization as torch code in a model writes it, in fp32."""
    m, k = x.shape
    groups = x.float().reshape(m, k // GROUP, GROUP)
    scale = groups.abs().amax(dim=-1, keepdim=True) / E4M3_MAX
    q = torch.where(scale > 0, groups / scale, 0.0).to(torch.float8_e4m3fn)
    return q.view(m, k), scale.view(m, k // GROUP)


def compare(out, ref, case, inputs: list) -> str | None:
    """Scales equal to `ref`'s within one fp32 unit (a kernel may multiply by 1/448); each q the
    e4m3 value nearest x / scale (its own scale), either neighbour where x / scale is within
    TIE_WINDOW of the midpoint between two e4m3 values; no NaN anywhere, so an all-zero group's
    q is 0. `ref` is the float64 truth, or the first answer or the peer's where the judge
    compares two calls or rechecks a bench."""
    q, scale = out
    _, scale_ref = ref
    s, s_ref = scale.double(), scale_ref.double()
    s_err = (s - s_ref).abs()
    s_bad = ~(s_err <= s_ref.abs() * 2.0**-23)  # NaN is bad too
    if bool(s_bad.any()):
        m, g = (int(i) for i in s_bad.nonzero()[0])
        return (
            f"scale {float(s[m, g]):.9g} of row {m} group {g}, expected amax / 448 = "
            f"{float(s_ref[m, g]):.9g}; {int(s_bad.sum())} of {s.numel()} scales off"
        )
    exact = quotients(inputs[0], s)
    below, above = (_e4m3(exact * (1 + side * TIE_WINDOW)) for side in (-1, 1))
    v = q.double()
    q_bad = ~((v == below) | (v == above))
    if bool(q_bad.any()):
        m, j = (int(i) for i in q_bad.nonzero()[0])
        return (
            f"q {float(v[m, j]):.6g} at [{m}, {j}], expected {float(_e4m3(exact[m, j])):.6g}: "
            f"x / scale = {float(exact[m, j]):.9g} rounded to the nearest e4m3 (either "
            f"neighbour within 2^-19 of a tie); {int(q_bad.sum())} of {v.numel()} off"
        )
    return None


def quotients(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x / scale in float64, each entry by its group's scale, 0 in an all-zero group."""
    m, k = x.shape
    wide = scale.double().repeat_interleave(GROUP, dim=1)
    return torch.where(wide > 0, x.double() / wide, 0.0).view(m, k)


def _e4m3(v: torch.Tensor) -> torch.Tensor:
    """v rounded to e4m3 by torch, back in float64: to fp32, then to nearest e4m3, ties to even
    (a float64 v within 2^-24 of a midpoint may take the even side; TIE_WINDOW is far wider)."""
    return v.to(torch.float8_e4m3fn).double()


def error_values(out, ref, inputs: list) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """What the judge's error ratio measures (kernelgen/verify/checks.py): q dequantized by its
    scales, against x. A tie taken either way errs by the same half step; a quantizer that
    rounds towards zero errs about twice as much as one that rounds to nearest, one a step off
    three times and more."""
    q, scale = out
    x = inputs[0]
    m, k = x.shape
    deq = q.double().view(m, k // GROUP, GROUP) * scale.double()[..., None]
    return [(deq.view(m, k), x.double())]


def make_inputs(size, dtype: str, dist: str, gen: torch.Generator) -> list:
    """x in the case's distribution with each group scaled by its own power of two, 2^-8 to
    2^6: groups' scales differ by orders of magnitude, so a kernel sharing one scale between
    groups cannot pass on values alone. A group whose largest value would pass half the
    dtype's largest finite (a late spike, large values in fp16) takes a smaller power, so x
    stays finite; fp16's range holds the others' (wide's too) as drawn. About one group in 16
    is all zero (at least one per case of more than one group, none in a case of one, which
    would have nothing else): the group whose scale is 0. Laid out as the size says (a drawn
    case's placement included)."""
    m, k = size.dims["M"], size.dims["K"]
    x = values([m, k], dist, gen, dtype).view(m, k // GROUP, GROUP)
    power = torch.randint(-8, 7, (m, k // GROUP, 1), generator=gen).double()
    amax = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-300)
    fits = torch.floor(torch.log2(torch.finfo(getattr(torch, dtype)).max / 2 / amax))
    x = x * torch.exp2(torch.minimum(power, fits))
    zero = torch.rand(m, k // GROUP, generator=gen) < 1 / 16
    zero.view(-1)[torch.randint(0, zero.numel(), (1,), generator=gen)] = True
    if zero.numel() == 1:
        zero[:] = False
    x = x.masked_fill(zero[..., None], 0.0).view(m, k)
    layout = getattr(size, "layout", "contiguous")
    return [lay_out(x.to(getattr(torch, dtype)), layout, gen)]


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    n = dims["M"] * dims["K"]
    return {"bytes": n * itemsize + n + n // GROUP * 4, "flops": 2 * n}


def _gpu(name: str, m: int, k: int, **extra) -> dict:
    return {"name": name, "dims": {"M": m, "K": k}, **extra}


SPEC = {
    "inputs": [{"name": "x", "shape": ["M", "K"]}],
    # bf16 in the models; the interpreter runs the same cases in fp16 and fp32 (its bf16
    # arithmetic is wrong, its fp8 casts are the GPU's: kernelgen/verify/interpreter.py).
    "dtypes": ["bfloat16", "float16", "float32"],
    # No specials: a NaN's group has a NaN amax by torch's rule and a finite one by tl.max's.
    "dists": ["normal", "uniform", "wide"],
    "bucket": ["M", "K"],
    # The error ratio on error_values (q * scale against x): rounding to nearest errs the same
    # as the reference whichever way its ties go (1.000x on the CPU cases); rounding towards
    # zero 1.93x-2.02x, a step away from zero 3.9x-4.2x. The default 2x would be a coin flip.
    "error_ratio": 1.25,
    # Each run draws more cases from here (kernelgen/spec/domain.py), through make_inputs above
    # (lay_out takes a drawn placement as it is): K in whole groups (one, a prime count, the
    # bench's 56 and either side), any M (past 64 rows the shipped launcher tiles 4 rows a
    # program), x in any 2-D layout. Finite values of every family but two: `denormal` (fp32
    # subnormals' amax / 448 underflows the fp32 scale to 0, and a GPU may flush them) and
    # NaN or inf (`neg_inf`, `specials`: the scale of such a group has no rule, above).
    "domain": {
        "dims": {
            "K": {"range": [128, 16384], "multiple_of": GROUP, "cpu_max": 7168},
            "M": {"range": [1, 32768], "cpu_max": 256},
        },
        "layouts": ["contiguous", "strided", "transposed", "offset", "expanded"],
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
        # Half the default: the interpreter runs a program per row and 4 groups, and 4 draws
        # of 2^16 elements took half as long again as the fixed CPU grid.
        "cpu_elements": 1 << 15,
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 299600 tokens at
    # DeepSeek-V3's hidden size, x past 2^31 elements from token 299594 on, rows past a grid
    # axis's end. Drawn by make_inputs above, a block of rows at a time.
    "limits": [
        {
            "name": "tokens",
            "dims": {"M": 299600, "K": 7168},
            "dtype": "bfloat16",
            "rows": "M",
        },
    ],
    "sizes": [
        # CPU: K a multiple of 128 by definition; one group, one row, odd row counts, a strided
        # and a column-major x, more rows than a persistent grid of 4 programs per SM.
        {"name": "one_group", "dims": {"M": 1, "K": 128}, "interpreter": True},
        {"name": "odd_rows", "dims": {"M": 37, "K": 384}, "interpreter": True},
        {"name": "wide_row", "dims": {"M": 3, "K": 7168}, "interpreter": True, "dists": ["normal"]},
        {
            "name": "strided",
            "dims": {"M": 19, "K": 256},
            "layout": "strided",
            "interpreter": True,
            "dists": ["normal"],
        },
        {
            "name": "transposed",
            "dims": {"M": 45, "K": 256},
            "layout": "transposed",
            "interpreter": True,
            "dists": ["normal"],
        },
        {
            "name": "rows_past_grid",
            "dims": {"M": 531, "K": 128},
            "interpreter": True,
            "dtypes": ["float16"],
            "dists": ["normal"],
        },
        # GPU: the bench shapes' widths, and more rows than any persistent grid (a prime count).
        _gpu("decode_7168", 16, 7168),
        _gpu("prefill_7168", 4096, 7168, dists=["normal"]),
        _gpu("rows_past_gpu_grid", 20011, 256, dtypes=["bfloat16", "float16"], dists=["normal"]),
        _gpu("strided_gpu", 333, 7168, layout="strided", dtypes=["bfloat16"], dists=["normal"]),
        # The indexer's q of 65 tokens: rows of one group each.
        _gpu(
            "deepseek_v3.2_index_q",
            65 * INDEXER.index_heads,
            INDEXER.index_head_dim,
            dtypes=["bfloat16"],
            dists=["normal"],
        ),
    ],
    # DeepSeek-V3's hidden at a decode batch of 16 and prefills of 4096 and 16384 tokens, and
    # DeepSeek-V3.2's indexer q of 1024 tokens: 65536 rows of one group, where a kernel that
    # maps a row to a program has one group's work per program.
    "bench": [
        named("deepseek_v3", {"M": 16, "K": HIDDEN}, was="16x7168"),
        named("deepseek_v3", {"M": 4096, "K": HIDDEN}, was="4096x7168"),
        named("deepseek_v3", {"M": 16384, "K": HIDDEN}, was="16384x7168"),
        named("deepseek_v3.2", {"M": 1024 * INDEXER.index_heads, "K": INDEXER.index_head_dim}),
    ],
}
