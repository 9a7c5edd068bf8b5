"""fused_moe(x, w1, w2, topk_weights, topk_ids): the routed experts of a MoE layer, SwiGLU experts.

For each token m and each of its k experts e = topk_ids[m, j]:
    h      = x[m] @ w1[e].T                      (2I,)  gate rows first, then up rows (w13)
    act    = silu(h[:I]) * h[I:]                 (I,)
    y[m]  += topk_weights[m, j] * (act @ w2[e].T) (H,)
x (M, H), w1 (E, 2I, H), w2 (E, H, I) in the case dtype (bf16 in the models), topk_weights
(M, k) fp32, topk_ids (M, k) int32, distinct in each row, in [0, E); y (M, H) in x's dtype. This
is SGLang's and vLLM's `fused_experts` with silu-and-mul between the two GEMMs; routing (the
top-k over router scores) is done before, by router_gemm and a top-k.

Memory traffic: x and y once, the routing (8 bytes per (token, slot)), and the weights of the
experts that are touched, each once: min(E, M*k) experts' w1 and w2 (3*I*H elements each). The
other experts' weights need not move at all, which is what makes decode (M of 1 to a few dozen)
cheap: at M=1, E=128, k=8 only 8 of 128 experts are read. The (M*k, I) intermediate need not
reach memory in a fused kernel, so it is not counted. Flops: 2*M*k*3*I*H for the two GEMMs, plus
the activation and the weighted sum. Decode is memory-bound on the weights; past ~170 tokens per
expert (M*k/E; the H200's 712 TFLOP/s over 4.27 TB/s) the GEMMs are compute-bound.

Precision: the judge's default rule (per-element tolerance of the case dtype against float64,
and an error at most 2x that of torch's result in the case dtype, which is this reference
computed in fp32 and rounded once) asks for fp32 accumulation in both GEMMs and an fp32
intermediate. Rounding the intermediate to the case dtype, as SGLang's kernels do between their
GEMMs, errs by up to ~2 rounding units of the case dtype times a token's output scale; near-zero
outputs then miss the per-element tolerance (2-5% of entries at E=8, H=1024, I=448 in fp16 and
bf16), and it is rejected. A kernel that wants tensor cores for the second GEMM must keep that
precision (an fp32 dot, or the intermediate split into two 16-bit halves).

Limits (SPEC.limits, run on the GPU): an expert weight tensor of 2^31 elements or more makes
`expert * stride_e` wrap in int32, and 65536 tokens or more cannot sit on a grid's y or z axis.
The limit case has both, with every token routed among a few experts whose w1 lies wholly past
element 2^31, the last expert among them, so each sampled token reads through a wrapping
offset; its truth is the reference on the sampled tokens alone with the experts they use
(limit_rows), a few experts' weights in float64 where all of them would be 45 GB.
"""

import math

import torch
import torch.nn.functional as F

from kernelgen.spec import BenchShape, Size
from kernelgen.spec.inputs import lay_out, values
from kernelgen.spec.limits import ELEMENTS
from kernelgen.spec.models import MODELS, named

# Routing of a correctness case, named by the first word of its size's name:
#   uniform     each token picks k distinct experts uniformly at random;
#   skewed      a few hot experts (router logits biased by -1.5 log(rank)): most tokens pick the
#               same few, the tail gets few or no tokens;
#   one_expert  every token's first choice is the same expert (with k=1, every token goes to one
#               expert and all others get none);
#   idle        half the experts (at most E-k) receive no token;
#   balanced    token-slots dealt to experts in turn: min(E, M*k) experts touched, each by
#               M*k/E tokens (+-1). Benchmark shapes route this way, so cost() is exact there.
ROUTINGS = ("uniform", "skewed", "one_expert", "idle", "balanced")
# Above this many weight elements (the model shapes), each expert's weights are a window of one
# shared random pool at an offset of its own: distinct experts, at the price of one expert's
# draw instead of E (a 128-expert set is 6e8 values, several seconds to draw on a CPU).
POOL_ABOVE = 1 << 24


def fused_moe(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    # At least fp32; float64 when the harness evaluates the ground truth on upcast inputs. In the
    # case dtype this is torch's yardstick for the error ratio: fp32 throughout, rounded once.
    acc = torch.promote_types(torch.promote_types(x.dtype, w1.dtype), torch.float32)
    inter = w1.shape[1] // 2
    y = torch.zeros(x.shape, dtype=acc, device=x.device)
    for e in topk_ids.unique().tolist():
        token, slot = (topk_ids == e).nonzero(as_tuple=True)
        h = x[token].to(acc) @ w1[e].to(acc).T
        act = F.silu(h[:, :inter]) * h[:, inter:]
        out = act @ w2[e].to(acc).T
        y.index_add_(0, token, out * topk_weights[token, slot].to(acc)[:, None])
    return y.to(x.dtype)


def eager(
    x: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
) -> torch.Tensor:
    """The peer for speed: the per-expert loop of a torch MoE without a fused kernel (HF
    Mixtral's, BASELINES' eager_loop), over the experts that have tokens, one weighted
    index_add per expert into an fp32 sum.

    Its GEMMs run in fp32 on upcast operands, not in the case dtype: the bench re-checks every
    contender against the peer at twice the verifier's tolerance, and an all-bf16 loop (each GEMM
    output and the intermediate rounded) is ~6 bf16 units of a token's output scale off near zero,
    where an honest fp32 kernel would then look wrong. TF32 stays off (torch's default). That
    loop is the reference's own in the case dtype (fp32 throughout, rounded once)."""
    return fused_moe(x, w1, w2, topk_weights, topk_ids)


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    """Exact for balanced routing (the bench shapes); with fewer experts touched, an upper bound."""
    m, e, k, h, i = (dims[d] for d in ("M", "E", "k", "H", "I"))
    touched = min(e, m * k)
    nbytes = 2 * m * h * itemsize + touched * 3 * i * h * itemsize + m * k * (4 + 4)
    # two GEMMs; silu-and-mul (~6 per intermediate element, as silu_and_mul counts); the
    # weighted sum of the k expert outputs.
    flops = m * k * (2 * 3 * i * h + 6 * i + 2 * h)
    return {"bytes": nbytes, "flops": flops}


def routing(name: str) -> str | None:
    """The routing mode a size's name starts with (`skewed_odd` routes skewed), if any."""
    return next((r for r in ROUTINGS if name == r or name.startswith(r + "_")), None)


def size_routing(size: Size | BenchShape) -> str:
    """A size's routing: a fixed size's by its name, a drawn one's by its `routing` dim (an
    index into ROUTINGS), a bench shape's balanced."""
    if isinstance(size, Size) and "routing" in size.dims:
        return ROUTINGS[size.dims["routing"]]
    return routing(size.name) or "balanced"


def make_inputs(size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator) -> list:
    """x in the case dtype and distribution (laid out as the size says, a drawn case's
    placement included), expert weights N(0, 1/fan_in) so that every GEMM output is O(1), and
    the size's routing (size_routing); a limit's (maker dims E_low, E_hot) routes among hot
    experts past E_low (_route_hot)."""
    m, e, k, h, i = (size.dims[d] for d in ("M", "E", "k", "H", "I"))
    dt = getattr(torch, dtype)
    layout = size.layout if isinstance(size, Size) else "contiguous"
    x = lay_out(values([m, h], dist, gen).to(dt), layout, gen)
    w1 = _weights(e, 2 * i, h, dt, gen)
    w2 = _weights(e, h, i, dt, gen)
    if "E_low" in size.dims:
        ids, scores = _route_hot(m, e, k, size.dims["E_low"], size.dims["E_hot"], gen)
    else:
        ids, scores = _route(size_routing(size), m, e, k, gen)
    # Sigmoid gates (as DeepSeek-V3 and Llama 4 score experts), not renormalized: weights in
    # (0, 1) that differ per token and slot, so neither 1 nor 1/k stands in for them.
    topk_weights = torch.sigmoid(scores.gather(1, ids)).float()
    return [x, w1, w2, topk_weights, ids.to(torch.int32)]


def _weights(n: int, rows: int, cols: int, dtype: torch.dtype, gen: torch.Generator):
    scale = 1 / math.sqrt(cols)
    if n * rows * cols <= POOL_ABOVE:
        return (torch.randn(n, rows, cols, generator=gen) * scale).to(dtype)
    per = rows * cols
    slack = max(4096, 8 * n)
    pool = (torch.randn(per + slack, generator=gen) * scale).to(dtype)
    starts = torch.randperm(slack, generator=gen)[:n].tolist()
    return torch.stack([pool[s : s + per].view(rows, cols) for s in starts])


def _route(mode: str, m: int, e: int, k: int, gen: torch.Generator):
    """(ids (M, k) int64, distinct per row; router scores (M, E) that the weights come from)."""
    scores = torch.randn(m, e, generator=gen, dtype=torch.float64)
    if mode == "balanced":
        order = torch.randperm(e, generator=gen)
        turn = torch.randperm(m, generator=gen)[:, None] * k + torch.arange(k)
        return order[turn % e], scores
    bias = torch.zeros(e, dtype=torch.float64)
    pick = torch.randperm(e, generator=gen)
    if mode == "skewed":
        bias[pick] = -1.5 * torch.log1p(torch.arange(e, dtype=torch.float64))
    elif mode == "one_expert":
        bias[pick[0]] = 1e4
    elif mode == "idle":
        bias[pick[: min(e - k, max(1, e // 2))]] = -1e4
    return (scores + bias).topk(k, dim=1).indices, scores


def _route_hot(m: int, e: int, k: int, low: int, hot: int, gen: torch.Generator):
    """A limit's routing: `hot` experts of [low, E), the first and the last among them, and each
    token's k drawn from them alone (a top-k of random scores with the rest masked off). So
    every token reads only experts at or past `low`, and the sampled tokens' float64 truth
    gathers `hot` experts' weights, not E."""
    scores = torch.randn(m, e, generator=gen, dtype=torch.float64)
    inner = low + 1 + torch.randperm(e - low - 2, generator=gen)[: hot - 2]
    bias = torch.full((e,), -1e4, dtype=torch.float64)
    bias[inner] = 0.0
    bias[[low, e - 1]] = 0.0
    return (scores + bias).topk(k, dim=1).indices, scores


def limit_rows(args: list, rows: torch.Tensor) -> list:
    """The call of the tokens at `rows` alone (a limit case's sampled rows,
    kernelgen/verify/limits.py): their x, routing weights and ids, and w1 and w2 of only the
    experts those tokens use, the ids renumbered into them (in the same order, so the reference
    visits them as on the whole call). The reference computes each token from its own row and
    its experts, so its output here is the whole call's at those rows; and the float64 truth
    upcasts a few experts, where the whole w1 and w2 would be 8 bytes for each of billions."""
    x, w1, w2, topk_weights, topk_ids = args
    ids = topk_ids.index_select(0, rows)
    used, local = torch.unique(ids, return_inverse=True)
    return [
        x.index_select(0, rows),
        w1.index_select(0, used),
        w2.index_select(0, used),
        topk_weights.index_select(0, rows),
        local.to(ids.dtype),
    ]


# Interpreter sizes: odd H and I (no multiple of 16), one size of powers of two (where a kernel
# drops its masks), H and I past one 64-wide block, k=1 and k=E, x strided and column-major.
def _cpu(name: str, m: int, e: int, k: int, h: int, i: int, **extra) -> dict:
    dims = {"M": m, "E": e, "k": k, "H": h, "I": i}
    return {"name": name, "dims": dims, "interpreter": True, **extra}


def _gpu(name: str, m: int, e: int, k: int, h: int, i: int, **extra) -> dict:
    dims = {"M": m, "E": e, "k": k, "H": h, "I": i}
    return {"name": name, "dims": dims, "dtypes": ["bfloat16"], "dists": ["normal"], **extra}


def _experts(model: str, tp: int = 1) -> dict[str, int]:
    """A model's routed experts (kernelgen/spec/models.py) as one GPU of `tp` holds them under
    tensor parallelism: every expert, each a 1/tp slice of its intermediate width, which is
    the problem a serving engine's fused_moe sees per GPU (vLLM's tuned configs are named by
    it: E=8,N=1792 for Mixtral-8x7B over 8 GPUs)."""
    dims = MODELS[model]
    return {
        "e": dims.experts,
        "k": dims.top_k,
        "h": dims.hidden,
        "i": dims.expert_intermediate // tp,
    }


QWEN = _experts("qwen3_30b_a3b")  # 128 experts top-8, H 2048, I 768: one GPU holds them all
MIXTRAL = _experts("mixtral_8x7b", tp=8)  # 8 experts top-2, H 4096, I 14336 / 8 = 1792
# DeepSeek-V3 (256 experts top-8, H 7168, I 2048) and Qwen3-235B-A22B (128 experts top-8, H 4096,
# I 1536) over 8 GPUs, as one node of H200s serves them: I of 256 and 192 (vLLM ships H200
# configs for both: E=256,N=256 in fp8, E=128,N=192). Unsharded, DeepSeek-V3's experts are
# 22.5 GB in bf16, each bench input set and each truth variant a copy.
DEEPSEEK_V3_TP8 = _experts("deepseek_v3", tp=8)
QWEN3_235B_TP8 = _experts("qwen3_235b_a22b", tp=8)
# DeepSeek-V3's over 2 GPUs (I of 1024): w1 of 3.76e9 elements, past 2^31 from expert 147 on.
DEEPSEEK_V3_TP2 = _experts("deepseek_v3", tp=2)


def _limit(
    name: str, m: int, *, e: int, k: int, h: int, i: int, hot: int, past: int = ELEMENTS
) -> dict:
    """A limit (SPEC.limits): M tokens through E experts, routed among `hot` of them from
    E_low on, the first expert whose w1 (E, 2I, H) starts at element `past` or later."""
    low = -(-past // (2 * i * h))
    dims = {"M": m, "E": e, "k": k, "H": h, "I": i, "E_low": low, "E_hot": hot}
    return {"name": name, "dims": dims, "dtype": "bfloat16", "rows": "M"}


def _bench(model: str, m: int, tp: int = 1, was: str | None = None) -> dict:
    """M tokens through a model's experts on one of `tp` GPUs, named `<model>_M<m>` (or
    `<model>_tp<tp>_M<m>`)."""
    e = _experts(model, tp)
    dims = {"M": m, "E": e["e"], "k": e["k"], "H": e["h"], "I": e["i"]}
    return named(model, dims, label=(f"tp{tp}_" if tp > 1 else "") + f"M{m}", was=was)


SPEC = {
    "inputs": [
        # Hidden states: bf16 in the models, the case dtype. Triton's interpreter computes bf16
        # wrongly, so the CPU runs the same cases in fp16.
        {"name": "x", "shape": ["M", "H"]},
        # Expert weights are parameters: the case dtype, contiguous, normal values.
        {"name": "w1", "shape": ["E", "2*I", "H"], "dist": "normal", "layout_varies": False},
        {"name": "w2", "shape": ["E", "H", "I"], "dist": "normal", "layout_varies": False},
        # Routing, as the top-k after the router gives it: fp32 weights, int32 ids.
        {"name": "topk_weights", "shape": ["M", "k"], "dtype": "float32", "layout_varies": False},
        {"name": "topk_ids", "shape": ["M", "k"], "dtype": "int32", "layout_varies": False},
    ],
    "dtypes": ["bfloat16", "float16"],
    "dists": ["normal", "uniform"],
    "reduction": "H",
    "bucket": ["M", "E", "H", "I"],
    # Each run draws more cases from here (kernelgen/spec/domain.py), through make_inputs above
    # (lay_out takes a drawn placement as it is): any M, E up to 512 experts (Qwen3-Next's),
    # k up to E, any H and I; `routing` indexes ROUTINGS (uniform, skewed, one_expert, idle,
    # balanced); x in any 2-D layout (the weights and routing stay contiguous). Values the
    # fp16 tolerance can judge: not `large`, `spike` or `negative` (rows shifted by up to 1e3),
    # whose squares through silu(h) * h pass 65504 (outputs of 2.9e5 and 3.8e6 measured), where
    # the reference's own output overflows; not `wide`, whose terms of ~1e4 leave torch's own
    # fp32 answer past the tolerance's absolute term where outputs cancel (60 of 350K entries
    # measured); no NaN or inf (`neg_inf`, `specials`: silu's conventions there are no part of
    # the contract). The weights are the models' scale, drawn by make_inputs whatever the
    # case's family.
    "domain": {
        "dims": {
            "E": {"range": [1, 512], "cpu_max": 12},
            "k": {"range": [1, 16], "cpu_max": 4, "at_most": "E"},
            "M": {"range": [1, 8192], "cpu_max": 16},
            "H": {"range": [1, 8192], "cpu_max": 200},
            "I": {"range": [1, 4096], "cpu_max": 130},
            "routing": {"choices": list(range(len(ROUTINGS))), "maker": True},
        },
        "layouts": ["contiguous", "strided", "transposed", "offset", "expanded"],
        "dists": [
            "normal",
            "uniform",
            "small",
            "sorted_up",
            "sorted_down",
            "constant",
            "ties",
            "denormal",
        ],
        # w1 (E, 2I, H) is the largest input: the fixed CPU sizes' reach 73K elements.
        "cpu_elements": 1 << 17,
        "cuda_elements": 1 << 26,
    },
    "sizes": [
        _cpu("uniform_one_token", 1, 4, 2, 130, 70),
        _cpu("uniform_odd", 7, 5, 2, 100, 37),
        _cpu("one_expert_k1", 11, 3, 1, 50, 19, dists=["normal"]),
        _cpu("one_expert_first", 6, 6, 3, 33, 45, dists=["uniform"]),
        _cpu("skewed", 12, 10, 3, 40, 24, dists=["normal"]),
        _cpu("idle", 7, 12, 3, 90, 30, dists=["uniform"]),
        _cpu("uniform_pow2", 8, 8, 2, 64, 32, dists=["normal"]),
        _cpu("uniform_strided", 5, 4, 2, 48, 20, layout="strided", dists=["normal"]),
        # k = E: every token picks every expert.
        _cpu("uniform_all", 6, 3, 3, 36, 28, layout="transposed", dists=["normal"]),
        # GPU: the model shapes, decode to prefill, and one shape with tails in every dim. Each
        # 128-expert set is 1.2 GB of weights; one such case is enough.
        _gpu("uniform_qwen_128", 128, **QWEN),
        _gpu("uniform_mixtral_1", 1, **MIXTRAL),
        _gpu("one_expert_mixtral_16", 16, **MIXTRAL),
        _gpu("skewed_mixtral_1024", 1024, **MIXTRAL),
        _gpu("uniform_mixtral_4096", 4096, **MIXTRAL, dists=["uniform"]),
        _gpu("idle_odd_gpu", 333, 20, 3, 1031, 271, dtypes=["bfloat16", "float16"]),
        # The bench's 8-GPU slices: DeepSeek-V3's 256 experts with a few hot ones and many
        # idle (2.8 GB of weights), Qwen3-235B-A22B's 128 at an odd M.
        _gpu("skewed_deepseek_v3_tp8_128", 128, **DEEPSEEK_V3_TP8),
        _gpu("uniform_qwen3_235b_tp8_333", 333, **QWEN3_235B_TP8, dists=["uniform"]),
    ],
    # The GPU's limits (kernelgen/spec/limits.py), in one case: 65600 tokens (a prefill batch
    # past a grid axis's 65535) through DeepSeek-V3's experts over 2 GPUs (256 experts top-8, H
    # 7168, I 1024). w1 is 256 x 2048 x 7168 = 3758096384 elements (1.75 x 2^31); expert e
    # starts at e * 14680064, past 2^31 from e = 147 on, so every token routes among 16 experts
    # of 147..255 (147 and 255 among them) and each sampled one reads through an offset an int32
    # `expert * stride_e` wraps. Inputs: w1 7516192768 bytes, w2 3758096384, x 940441600 (65600
    # x 7168 bf16), topk_weights and topk_ids 2099200 each: 12218929152 bytes (11.4 GiB) of the
    # 16 GiB a limit case may take. The call is 2.3e13 flops (2 x 65600 x 8 x 3 x 1024 x 7168):
    # 3 s at the seed's 7-10 TFLOP/s measured at 4096 tokens, 0.1 s at the shipped kernel's
    # ~230. Drawn whole by make_inputs on the GPU (one window pool for all experts' weights), and
    # judged on about 135 tokens: the reference on them alone (limit_rows), 16 experts' weights
    # in float64 (2.8 GB) where all 256 would be 45 GB.
    "limits": [_limit("experts_past_2g", 65600, **DEEPSEEK_V3_TP2, hot=16)],
    # Qwen3-30B-A3B's experts on one GPU and Mixtral-8x7B's over 8, each from one decode token
    # to a 4096-token prefill; DeepSeek-V3's over 8 GPUs at a decode batch of 128 (1024 slots:
    # all 256 experts read for 4 tokens each, the weights' bytes the whole cost) and
    # Qwen3-235B-A22B's over 8 at a 4096-token prefill (256 tokens an expert through an I of
    # 192: compute-bound GEMMs narrower than any other shape's).
    "bench": [
        *(_bench("qwen3_30b_a3b", m, was=f"M{m}_E128k8") for m in (1, 16, 128, 1024, 4096)),
        *(_bench("mixtral_8x7b", m, tp=8, was=f"M{m}_E8k2") for m in (1, 16, 128, 1024, 4096)),
        _bench("deepseek_v3", 128, tp=8),
        _bench("qwen3_235b_a22b", 4096, tp=8),
    ],
}

_unnamed = [s["name"] for s in SPEC["sizes"] if routing(s["name"]) is None]
if _unnamed:
    raise ValueError(f"SPEC.sizes {_unnamed}: a size's name starts with its routing, {ROUTINGS}")
_hot = [
    s["name"]
    for s in SPEC["limits"]
    if not (2 <= s["dims"]["E_hot"] <= s["dims"]["E"] - s["dims"]["E_low"])
    or s["dims"]["k"] > s["dims"]["E_hot"]
]
if _hot:
    raise ValueError(f"SPEC.limits {_hot}: need 2 <= E_hot <= E - E_low and k <= E_hot")
