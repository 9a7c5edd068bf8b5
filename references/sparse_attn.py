"""sparse_attn(q, k, v, indices, scale): attention of each query token over only the KV positions
its top-k selector chose (DeepSeek's sparse attention, DSA: the lightning indexer's top-2048,
references/topk.py, feeds FlashMLA's sparse kernels).

For token t, query head h (KV head g = h // (Hq // Hkv)) and the valid slots j of its row of
indices (indices[t, j] >= 0), with rows r_j = indices[t, j]:
    s[j]      = scale * q[t, h] . k[r_j, g]
    out[t, h] = sum_j softmax(s)[j] * v[r_j, g]                   (Dv,)
q (T, Hq, D), k (S, Hkv, D) and v (S, Hkv, Dv) in the case dtype (bf16 in the models), indices
(T, topk) int32; out (T, Hq, Dv) in q's dtype. v has a head dim of its own: DeepSeek's MLA
(V3.2's DSA over FlashMLA's sparse kernels) has one latent KV head (Hkv = 1), q and k 576 wide
(512 latent + 64 rope), v 512 wide (the latent part of the same cache row), under 64 or 128
query heads (16 a GPU under tensor parallelism 8 of V3's 128). Dv = D (GQA, MHA) is the other
case the spec draws; the domain keeps Dv <= D.

Invariants of indices, as the selector emits them (TensorRT-LLM's and vLLM's indexer top-k):
- each valid index is in [0, S), and a row's valid indices are distinct (a top-k picks a position
  once), in no particular order;
- -1 marks an unused slot, and unused slots come last in a row: a row with fewer candidates than
  topk (a prefill token near the start of its sequence, a context shorter than topk) holds its
  candidates first, then -1 up to topk. A kernel may stop at a row's first -1. (FlashMLA also
  accepts -1 between valid slots; inputs like that are outside this contract.)
- topk may exceed S (a context shorter than topk): then every row has at least topk - S slots -1.
A row with no valid slot (all -1) returns zeros: the softmax over no position is undefined;
FlashMLA's sparse kernels give such a row lse = +inf, which weights it 0, and zeros add nothing
to the token's residual stream (torch's SDPA is no guide: NaN or 0 by backend). Rows of k and v
that no token selects are not part of the input: a kernel must not read them (make_inputs fills
them with NaN, and the storage row on each side of k and v too, so that a kernel reading index
-1 or S gets NaN, on the CPU as on a GPU, not garbage or an illegal access).

Memory traffic: q (D wide) and out (Dv wide) once, indices once (4 bytes a slot), and every KV
row that some token selected, once: (distinct rows) * Hkv * (D + Dv) * itemsize. k and v are two
tensors here; where a caller's v is a view of k's first Dv columns (MLA's one latent cache) a
row moves D values, not D + Dv (576 of 1088 at MLA's widths). A token's rows serve all its query
heads, and rows shared between tokens need not be read twice (the 128K bench shapes' k is 151 MB
at 576, past the H200's 60 MB L2), so the floor counts distinct rows, not topk rows per token:
exactly topk for one token; for T tokens whose selections are drawn independently (as
make_inputs draws them), the expected count S * (1 - (1 - topk/S)^T): 0.64 S at 64 tokens, all
of S at 2048; draws at the bench shapes came within 0.21% of it. Flops: 2*D + 2*Dv per (valid
slot, query head) for the two products, ~5 for the softmax, Dv per (token, query head) for the
final division. With 128 query heads on one KV head, one decode token does ~128 flops a KV byte:
above the H200's fp32 FMA balance (~14), below its bf16 tensor cores' (~200), so it is
memory-bound only for a kernel that puts both products on the tensor cores; a 2048-token
prefill (each row reused by ~32 tokens, ~4000 flops a distinct byte) is compute-bound.

Precision: fp32 scores, softmax and accumulation, rounded once to the output dtype. `compare`
holds the judge's default rule (per element, the case dtype's tolerance against float64 with
atol grown by log2(topk); NaN and infinities where the reference has them; a mean relative
error at most 2x torch's in the case dtype, which is this reference in fp32 rounded once) and
adds the zeros of empty rows. Rounding the probabilities to bf16 before the PV product
(FlashMLA's tensor-core step) errs by up to ~2^-9 of the size of v, not of the output: at 2048
valid slots that is at the edge of the bf16 tolerance (torch emulation, 4 tokens x 64 heads,
D = 128: 3 of 32768 entries past it under normal values, none under uniform, error ratio 1.6),
at 256 slots well past it (752 of 32768). Rows with few valid slots reject it, as decode_attn's
short requests do: the padded sizes draw each row's count from 1 to topk. A kernel that wants
the tensor cores for PV can split P into two bf16 pieces, as router_gemm's splits its weights.

Limits (SPEC.limits, run on the GPU): a KV pool of 2^31 elements or more (a serving pool of
millions of tokens at MLA's 576 + 512) makes `row * stride` wrap in int32, and 65536 query tokens
or more cannot sit on a grid's y or z axis. The limit case has both, with every row a token
selects past element 2^31 of k and of v, so each sampled token reads through offsets past 2^31;
its truth is the reference on the sampled tokens alone (limit_rows), with only the KV rows they
select.
"""

import math

import torch
import torch.nn.functional as F

from kernelgen.spec import DEFAULT_TOLERANCES, BenchShape, Size, Tolerance
from kernelgen.spec.inputs import large_values, lay_out, spec_scalar, values
from kernelgen.spec.limits import ELEMENTS
from kernelgen.verify import checks

# Rows of the (T, S) random scores whose top-k picks the indices, drawn at once: 2048 x 128K
# scores are 1 GB in fp32 (a GPU case drawn on the CPU); 256 rows keep it to 128 MB.
ROWS_PER_DRAW = 256
ERROR_RATIO = 2.0  # the judge's default: candidate error at most 2x torch's in the case dtype
# Tokens the reference attends at once: their gathered rows are (tokens, topk, Hkv, D + Dv), 36 GB
# in float64 for the whole of DeepSeek's 2048-token prefill at 576 + 512, 2.3 GB for 128 tokens.
TOKENS_PER_STEP = 128


def sparse_attn(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    # At least fp32; float64 when the harness evaluates the ground truth on upcast inputs. In the
    # case dtype this is torch's yardstick for the error ratio: fp32 throughout, rounded once.
    # Tokens are independent: attended TOKENS_PER_STEP at a time to bound the gathered rows.
    acc = torch.promote_types(q.dtype, torch.float32)
    out = torch.empty((q.shape[0], q.shape[1], v.shape[2]), dtype=acc, device=q.device)
    for lo in range(0, q.shape[0], TOKENS_PER_STEP):
        at = slice(lo, lo + TOKENS_PER_STEP)
        out[at] = _attend(q[at].to(acc), k, v, indices[at], scale)
    return out.to(q.dtype)


def _attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, indices: torch.Tensor, scale: float
) -> torch.Tensor:
    """sparse_attn for a few tokens, in q's dtype (the accumulation dtype)."""
    tokens, heads, head_dim = q.shape
    kv_heads, v_dim = k.shape[1], v.shape[2]
    valid = indices >= 0  # (T, topk)
    kk, vv = (_selected(x, indices).to(q.dtype) for x in (k, v))  # (T, topk, Hkv, D or Dv)
    # Query head h = g * group + c reads KV head g: the group's heads folded into one axis.
    qg = q.reshape(tokens, kv_heads, heads // kv_heads, head_dim)
    s = torch.einsum("tgcd,tjgd->tgcj", qg, kk) * scale
    s = s.masked_fill(~valid[:, None, None, :], -math.inf)
    p = torch.softmax(s, dim=-1)  # NaN on a row without a valid slot
    out = torch.einsum("tgcj,tjge->tgce", p, vv).reshape(tokens, heads, v_dim)
    return torch.where(valid.any(dim=-1)[:, None, None], out, 0.0)  # the empty row's zeros


def eager(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    indices: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """The peer for speed: the rows gathered with one indexing op, then SDPA over them with the
    -1 slots masked, as a model without a sparse kernel writes it. The group's query heads are
    folded into SDPA's query length (one KV head serves 64 of them in the bench): enable_gqa may
    repeat K and V per query head, 64x the gathered copy (128 GB a tensor at 2048 tokens).

    fp32 on upcast operands, not the case dtype, as decode_attn's peer: the bench re-checks every
    contender against the peer's answer (at twice the verifier's tolerance), and a peer within
    the verifier's tolerance on every shape keeps that re-check about the contenders. A bf16
    SDPA that rounds its probabilities (the fused backends) would pass it at the bench's 2048
    full rows (the module docstring: at the edge of 1x there), not on short rows. The price: the
    gathered rows upcast to fp32, more bytes than a bf16 user moves, so speedups against this
    peer are kinder than against a bf16 one (not measured on the H200 yet). The -1 slots gather
    row 0 and are zeroed before SDPA: a masked score still multiplies its V row, and rows no
    token selects hold NaN. TF32 stays off (torch's default)."""
    tokens, heads, head_dim = q.shape
    kv_heads = k.shape[1]
    valid = indices >= 0

    def gathered(x: torch.Tensor) -> torch.Tensor:  # (T, Hkv, topk, D or Dv), fp32
        return _selected(x, indices).float().transpose(1, 2)

    out = F.scaled_dot_product_attention(
        q.float().reshape(tokens, kv_heads, heads // kv_heads, head_dim),
        gathered(k),
        gathered(v),
        attn_mask=valid[:, None, None, :],
        scale=scale,
    )
    out = torch.where(valid.any(dim=-1)[:, None, None, None], out, 0.0)
    return out.reshape(tokens, heads, v.shape[2]).to(q.dtype)


def _selected(x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """Each token's selected rows of k or v, (T, topk, Hkv, D or Dv), zeros at its -1 slots."""
    rows = x[indices.clamp_min(0).long()]
    return torch.where((indices >= 0)[:, :, None, None], rows, 0)


def compare(out: torch.Tensor, ref: torch.Tensor, case, inputs: list) -> str | None:
    """The judge's default rule, plus: every entry of a row whose indices are all -1 is 0.

    Against the float64 truth: the case dtype's tolerance per element (atol grown by
    log2(topk), the softmax's length), NaN and infinities exactly where the truth has them, and
    a mean relative error at most 2x that of this reference in the case dtype. Against another
    rounded answer (the first call's, or torch's in the bench's re-check), twice the tolerance
    and no error ratio: both sides are rounded to the output dtype. The rows that select some
    position are judged first, so that a kernel wrong everywhere is told so, not only about its
    empty rows. None when that holds."""
    empty = ~(inputs[3] >= 0).any(dim=-1)  # (T,)
    truth = ref.dtype == torch.float64
    tol = tolerance(case.dtype, case.dims["topk"])
    if not truth:
        tol = Tolerance(rtol=2 * tol.rtol, atol=2 * tol.atol)
    selecting = torch.where(empty[:, None, None], ref.to(out.dtype), out)
    fail, _, rel = checks.measure(selecting, ref.double(), tol)
    if fail is not None:
        return fail.reason
    msg = _empty_rows(out, empty)
    if msg is not None:
        return msg
    if truth:
        native = sparse_attn(*inputs)
        fail = checks.precision(rel, checks.rel_err(native, ref), out.dtype, ERROR_RATIO)
        if fail is not None:
            return fail.reason
    return None


def _empty_rows(out: torch.Tensor, empty: torch.Tensor) -> str | None:
    """Where a token selects no position, the first entry that is not 0 (NaN included)."""
    off = empty[:, None, None] & (out != 0)
    if not bool(off.any()):
        return None
    t, h, d = (int(i) for i in off.nonzero()[0])
    value = float(out[t, h, d])
    rows = int(off.flatten(1).any(dim=-1).sum())
    return (
        f"{'NaN' if math.isnan(value) else f'{value:.6g}'} at [{t}, {h}, {d}], in the output of "
        f"token {t}, which selects no KV position (its indices are all -1): expected 0 (the "
        f"empty softmax's zeros); {int(off.sum())} such entries, in {rows} of "
        f"{int(empty.sum())} empty rows"
    )


def tolerance(dtype: str, topk: int) -> Tolerance:
    """The judge's per-dtype tolerance with atol grown by log2 of the reduction length (what
    OpSpec.tolerance gives with SPEC's reduction "topk")."""
    rtol, atol = DEFAULT_TOLERANCES[dtype]
    return Tolerance(rtol=rtol, atol=atol * max(1.0, math.log2(max(1, topk))))


def distinct_rows(dims: dict[str, int]) -> int:
    """KV rows some token selects: topk for one token (min(topk, S): a row holds each position
    once); for several, the expected count under independent uniform draws,
    S * (1 - (1 - n/S)^T) with n = min(topk, S), rounded."""
    t, s, n = dims["T"], dims["S"], min(dims["topk"], dims["S"])
    if t == 1 or n == s:
        return n
    return min(t * n, round(s * -math.expm1(t * math.log1p(-n / s))))


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    t, hq, hkv, d, dv, topk = (dims[x] for x in ("T", "Hq", "Hkv", "D", "Dv", "topk"))
    slots = t * min(topk, dims["S"])  # the valid slots at most
    rows = distinct_rows(dims) * hkv * (d + dv)  # a k row and a v row each
    nbytes = t * hq * (d + dv) * itemsize + t * topk * 4 + rows * itemsize
    # q.k (2*D) and p.v (2*Dv) per valid slot and query head, ~5 for scale, max, exp and sum;
    # the final division by the sum.
    flops = slots * hq * (2 * d + 2 * dv + 5) + t * hq * dv
    return {"bytes": nbytes, "flops": flops}


def make_inputs(size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator) -> list:
    """T tokens, each selecting its valid positions as the top-k of random scores over
    [S_low, S) (S_low a limit's dim: the rows before it no token selects; 0 elsewhere): distinct,
    in random order, independent between tokens; the rest of its row -1.

    How many are valid: all of min(topk, S) in every row, unless the size's dim `padded` is 1;
    then (in a correctness size) each row draws its count uniformly from [1, min(topk, S)], one
    row is empty (all -1) and another full, where T allows. k (D wide) and v (Dv wide) are views
    into pools of their own with one storage row before and one after them; every row no token
    selects, and those two, hold NaN. Values: q, k and v in the case dtype and distribution
    (wide: see below); scale drawn log-uniformly from its SPEC range for a correctness case, its
    value for a bench shape."""
    dims = size.dims
    t, s, topk = dims["T"], dims["S"], dims["topk"]
    hq, hkv, d = dims["Hq"], dims["Hkv"], dims["D"]
    dt = getattr(torch, dtype)
    drawn = isinstance(size, Size)

    indices = _indices(t, s, topk, _counts(size, gen), gen, dims.get("S_low", 0))
    used = torch.zeros(s, dtype=torch.bool)
    used[indices[indices >= 0].long()] = True
    scale = spec_scalar(next(i for i in SPEC["inputs"] if i["name"] == "scale"), size, gen)
    # wide: q sized so that the scores are N(0, 40^2) whatever the scale and D, as
    # decode_attn's wide: past exp's fp32 range (88.7) without the running max. k and v stay
    # normal, so that fp32 rounding of the products does not decide near-tied scores.
    kv_dist = "normal" if dist == "wide" else dist
    kv = []
    for width in (d, dims["Dv"]):
        pool = torch.full((s + 2, hkv, width), math.nan, dtype=dt)
        x = pool[1 : s + 1]
        x[used] = large_values([int(used.sum()), hkv, width], kv_dist, gen).to(dt)
        kv.append(x)

    layout = size.layout if drawn else "contiguous"
    q = values([t, hq, d], kv_dist, gen)
    if dist == "wide":
        q = q * (40 / (scale * math.sqrt(d)))
    q = lay_out(q.to(dt), layout, gen)
    return [q, *kv, indices, scale]


def _counts(size: Size | BenchShape, gen: torch.Generator) -> torch.Tensor:
    """Valid slots per row: all min(topk, S) of them, or (a padded size) drawn, with one row
    empty and one full."""
    t = size.dims["T"]
    n = min(size.dims["topk"], size.dims["S"])
    if not (isinstance(size, Size) and size.dims.get("padded")):
        return torch.full((t,), n)
    counts = torch.randint(1, n + 1, (t,), generator=gen)
    rows = torch.randperm(t, generator=gen)
    counts[rows[0]] = 0
    if t > 1:
        counts[rows[1]] = n
    return counts


def _indices(
    t: int, s: int, topk: int, counts: torch.Tensor, gen: torch.Generator, low: int = 0
) -> torch.Tensor:
    """(T, topk) int32: row i's first counts[i] slots distinct positions of [low, s) in random
    order (the top-k of uniform scores), then -1. Scores are drawn for [low, s) only: a limit's
    4M-row pool would be 4 GB of scores a block of rows."""
    n = min(topk, s - low)
    out = torch.full((t, topk), -1, dtype=torch.int32)
    for lo in range(0, t, ROWS_PER_DRAW):
        hi = min(t, lo + ROWS_PER_DRAW)
        scores = torch.rand((hi - lo, s - low), generator=gen)
        out[lo:hi, :n] = scores.topk(n, dim=-1).indices.to(torch.int32) + low
    slot = torch.arange(topk, device=out.device)
    return out.masked_fill(slot[None, :] >= counts[:, None].to(out.device), -1)


def limit_rows(args: list, rows: torch.Tensor) -> list:
    """The call of the tokens at `rows` alone (a limit case's sampled rows,
    kernelgen/verify/limits.py): their q and indices, and k and v of only the rows those indices
    select, renumbered in them (-1 kept). The reference computes each token alone, so its output
    on this call is the whole call's at those rows, in float64 and in the case dtype; and the
    float64 truth reads the selected rows of a few hundred tokens, where the whole pool would be
    8 bytes for each of its billions of elements."""
    q, k, v, indices, scale = args
    picked = indices.index_select(0, rows)
    valid = picked >= 0
    kept, local = torch.unique(picked[valid], return_inverse=True)
    if kept.numel() == 0:  # no token selects a row: one row, never read, keeps k and v indexable
        kept = torch.zeros(1, dtype=picked.dtype, device=picked.device)
    renumbered = torch.full_like(picked, -1)
    renumbered[valid] = local.to(picked.dtype)
    return [
        q.index_select(0, rows),
        k.index_select(0, kept.long()),
        v.index_select(0, kept.long()),
        renumbered,
        scale,
    ]


def _limit(
    name: str, t: int, live: int, topk: int, *, hq: int, d: int, dv: int, past: int = ELEMENTS
) -> dict:
    """A limit (SPEC.limits): t tokens of hq query heads on one KV head, selecting topk rows each
    from the `live` rows past S_low, where S_low is the first row whose offset in k and in v
    (row * Hkv * D, row * Hkv * Dv; Dv <= D) is `past` elements or more."""
    low = -(-past // min(d, dv))
    dims = _size(name, t, low + live, topk, hq=hq, hkv=1, d=d, dv=dv)["dims"]
    return {"name": name, "dims": {**dims, "S_low": low}, "dtype": "bfloat16", "rows": "T"}


def _size(
    name: str,
    t: int,
    s: int,
    topk: int,
    *,
    hq: int = 64,
    hkv: int = 1,
    d: int = 128,
    dv: int | None = None,
    padded: bool = False,
    **extra,
) -> dict:
    dims = {"T": t, "S": s, "topk": topk, "Hq": hq, "Hkv": hkv, "D": d}
    dims |= {"Dv": d if dv is None else dv, "padded": int(padded)}
    return {"name": name, "dims": dims, **extra}


def _cpu(name: str, t: int, s: int, topk: int, **extra) -> dict:
    return _size(name, t, s, topk, interpreter=True, **extra)


def _gpu(name: str, t: int, s: int, topk: int, **extra) -> dict:
    extra.setdefault("dtypes", ["bfloat16"])
    extra.setdefault("dists", ["normal"])
    return _size(name, t, s, topk, **extra)


# DeepSeek-V3.2's sparse MLA, as its indexer feeds FlashMLA's sparse kernels: one latent KV head,
# q and k 576 wide (512 latent + 64 rope), v the 512 latent columns, 2048 positions a token.
MLA = {"hkv": 1, "d": 576, "dv": 512}
DSA_TOPK = 2048


def _mla(name: str, t: int, s: int, hq: int, **extra) -> dict:
    return _gpu(name, t, s, DSA_TOPK, hq=hq, **MLA, **extra)


SPEC = {
    "inputs": [
        # bf16 in the models, the case dtype. Triton's interpreter computes bf16 wrongly, so the
        # CPU runs the same sizes in fp16 (and fp32 on three). q may be a strided view (a slice
        # of a fused projection); k and v are one contiguous pool each.
        {"name": "q", "shape": ["T", "Hq", "D"]},
        {"name": "k", "shape": ["S", "Hkv", "D"], "layout_varies": False},
        {"name": "v", "shape": ["S", "Hkv", "Dv"], "layout_varies": False},
        {"name": "indices", "shape": ["T", "topk"], "dtype": "int32", "layout_varies": False},
        # Models use a head dim's ^-0.5 (0.088 at 128; MLA's is its 192-wide q.k before the
        # latent absorption, with YaRN's factor at long context): all inside the drawn range.
        # Cases draw it, so a hard-coded scale fails; the bench keeps 128^-0.5.
        {"kind": "scalar", "name": "scale", "value": 128**-0.5, "draw": [0.03, 0.5]},
    ],
    "dtypes": ["bfloat16", "float16"],
    "dists": ["normal", "uniform"],
    "reduction": "topk",
    "bucket": ["T", "topk"],
    # Each run draws more cases from here (kernelgen/spec/domain.py), through make_inputs above
    # (lay_out takes a drawn placement as it is): Hq whole groups of Hkv (one: MHA), any head
    # dim up to MLA's 576, v's at most q's and k's (equal, as in GQA and MHA, or narrower, as in
    # MLA), any S, topk past S too, any T; `padded` 1 draws each row's count of valid slots,
    # with an empty and a full row. q in any layout, the q heads of a fused projection among
    # them (`heads`); k, v and the indices stay as make_inputs lays them out.
    # Values: not `spike`, `negative` (per-row shifts up to 1e3) or `constant` (rows constant
    # along D: scores of D * scale * q * k): their scores reach hundreds to 1e6, where fp32
    # rounding of the products decides near-tied softmax weights, an error of the problem and
    # not of a kernel (torch's own fp32 answer missed the tolerance on 9 of 27 spike, 4 of 35
    # negative and 1 of 7 constant cases; make_inputs keeps k normal under `wide` for the same
    # reason); not `large` (every softmax one-hot; `wide` covers exp's overflow); not
    # `neg_inf` (NaN nearly everywhere; `specials` tests NaN and inf).
    "domain": {
        "dims": {
            "D": {"range": [1, 576], "cpu_max": 64},
            "Dv": {"range": [1, 576], "cpu_max": 64, "at_most": "D"},
            "Hkv": {"range": [1, 16], "cpu_max": 2},
            "Hq": {"range": [1, 128], "cpu_max": 8, "multiple_of": "Hkv"},
            "S": {"range": [1, 131072], "cpu_max": 1000},
            "topk": {"range": [1, 2048], "cpu_max": 160},
            "T": {"range": [1, 4096], "cpu_max": 5},
            "padded": {"choices": [0, 1], "maker": True},
        },
        "heads": "Hq",
        "layouts": ["contiguous", "strided", "transposed", "leading", "offset", "expanded"],
        "dists": [
            "normal",
            "uniform",
            "wide",
            "small",
            "sorted_up",
            "sorted_down",
            "ties",
            "denormal",
            "specials",
        ],
        # q up to 2048 tokens x 64 heads x 256: the fixed sizes hold the MLA prefill's 151M.
        "cuda_elements": 1 << 25,
    },
    "sizes": [
        # CPU, small heads, the seed's blocks of slots in mind: one decode token; DeepSeek's one
        # latent KV head under 4 query heads with v narrower than q and k, topk 100 (a partial
        # block), an empty, a full and a partial row; GQA with 2 KV heads and q strided; one
        # query head per KV head, topk a whole block, a head dim no power of two and q
        # column-major; a context shorter than topk; MLA's own widths, 576 and 512, so that the
        # CPU verdict's compile for sm_90 builds the kernel at them (a kernel that holds whole
        # 576-wide tiles runs out of shared memory there). wide: scores N(0, 40^2), where a
        # softmax without its running max overflows; specials: NaN and infinities in selected
        # rows, which must reach the output as they reach the reference's.
        _cpu(
            "one_token",
            1,
            200,
            50,
            hq=4,
            hkv=2,
            d=16,
            dtypes=["bfloat16", "float16", "float32"],
            dists=["normal"],
        ),
        _cpu(
            "latent_head",
            3,
            500,
            100,
            hq=4,
            hkv=1,
            d=32,
            dv=24,
            padded=True,
            dists=["normal", "wide"],
        ),
        _cpu(
            "gqa_strided",
            3,
            700,
            130,
            hq=4,
            hkv=2,
            d=16,
            padded=True,
            layout="strided",
            dists=["uniform", "specials"],
        ),
        _cpu(
            "mha_odd_head_dim",
            4,
            300,
            64,
            hq=2,
            hkv=2,
            d=24,
            layout="transposed",
            dtypes=["bfloat16", "float16", "float32"],
            dists=["normal"],
        ),
        _cpu("short_context", 5, 40, 80, hq=2, hkv=1, d=16, padded=True, dists=["uniform"]),
        _cpu(
            "dsv32_mla_dims",
            2,
            100,
            40,
            hq=4,
            **MLA,
            padded=True,
            dtypes=["bfloat16", "float16", "float32"],
            dists=["normal"],
        ),
        # GPU, at DeepSeek-V3.2's dims: one decode token under 128 query heads (all of them on
        # one GPU: data-parallel attention); 64 decode tokens under 64 heads (FlashMLA's other
        # head count; padded rows) and under 128; a 2048-token prefill at the end of a 128K
        # context; padded rows with a context shorter than topk; 16 heads (V3.2's 128 under
        # tensor parallelism 8) with more tokens than any persistent grid. One GQA shape at
        # D = Dv = 128 with q strided: the only one with several KV heads, which MLA never has,
        # so that a rewrite tuned for one latent head cannot slow that path unseen.
        _mla(
            "dsv32_decode_h128",
            1,
            131072,
            128,
            dtypes=["bfloat16", "float16"],
            dists=["normal", "wide"],
        ),
        _mla("dsv32_batch64_h64", 64, 131072, 64, padded=True, dists=["normal", "uniform"]),
        _mla("dsv32_batch64_h128", 64, 131072, 128),
        _mla("dsv32_prefill_h128", 2048, 131072, 128),
        _mla("dsv32_short_context_h64", 100, 1500, 64, padded=True, dists=["uniform"]),
        _mla("dsv32_tp8_h16", 3001, 8192, 16, padded=True),
        _gpu(
            "gqa_64x64K",
            64,
            65536,
            2048,
            hq=32,
            hkv=8,
            padded=True,
            layout="strided",
            dists=["normal", "specials"],
        ),
    ],
    # The GPU's limits (kernelgen/spec/limits.py), in one case: a 65600-token prefill chunk
    # (past a grid axis's 65535) of DeepSeek-V3.2's MLA under tensor parallelism 8 (16 query
    # heads on one latent head, q and k 576 wide, v 512), whose 131072-token context lies in a
    # serving pool of 4325376 rows past its first 4194304 (those hold other requests' tokens:
    # NaN here). Row 4194304 is where `row * stride` passes 2^31 in v (512 a row; in k, at 576,
    # from row 3728271), so every row a token selects, for every sampled token and not only
    # those around a boundary, is read through offsets an int32 product wraps, in k and in v.
    # topk 512, a quarter of DSA's 2048, keeps the call to seconds for a naive kernel: 1.17e12
    # flops (cost()), and 1.17e12 bytes for one whose every query head gathers its token's rows
    # itself (the seed), where a tensor-core kernel reading a row once per token moves 73 GB.
    # Inputs: k 4982833152 bytes (4325376 x 576 bf16, 2.49e9 elements), v 4429185024 (x 512,
    # 2.21e9), q 1209139200 (65600 x 16 x 576), indices 134348800 (65600 x 512 int32):
    # 10755506176 bytes (10.0 GiB) of the 16 GiB a limit case may take; out 1074790400. Drawn
    # whole by make_inputs on the GPU (indices point across the pool), and judged on about 135
    # tokens: the reference on them alone (limit_rows), ~54K distinct selected rows in float64.
    "limits": [_limit("pool_past_2g", 65600, 131072, 512, hq=16, d=576, dv=512)],
    # The GPU sizes' dims with every row full: decode, a batch, a prefill, and the GQA shape.
    "bench": [
        {"name": name, "dims": _size(name, t, s, DSA_TOPK, hq=hq, **dims)["dims"]}
        for name, t, s, hq, dims in (
            ("dsv32_decode_h128", 1, 131072, 128, MLA),
            ("dsv32_batch64_h64", 64, 131072, 64, MLA),
            ("dsv32_batch64_h128", 64, 131072, 128, MLA),
            ("dsv32_prefill_h128", 2048, 131072, 128, MLA),
            ("gqa_64x64K", 64, 65536, 32, {"hkv": 8}),
        )
    ],
}

_bad = [
    s["name"]
    for s in SPEC["sizes"] + SPEC["bench"] + SPEC["limits"]
    if not (s["dims"]["Hq"] % s["dims"]["Hkv"] == 0 and s["dims"]["topk"] >= 1)
]
if _bad:
    raise ValueError(f"SPEC sizes/bench/limits {_bad}: need Hq a multiple of Hkv and topk >= 1")
