"""topk(x, k): the sparse-attention top-k selector. For each row of x (B, N) fp32, the indices of
its k largest values, in any order; the values themselves are not returned. DeepSeek-V3.2's
lightning indexer picks the 2048 cached tokens each query attends to this way.

The answer is a set: the indices are int32 (B, k), because the sparse attention kernels that read
them (DeepSeek's indexer hands FlashMLA's sparse decode int32 indices) take int32, a row index
fits it (N < 2^31), and it halves the bytes written against torch.topk's int64. Any order is
right, and where values tie at the boundary (the k-th largest value occurs more often than the
k slots left for it) any choice among the tied entries is right: `compare` judges the multiset
of chosen values, not the indices.

x is finite (no NaN or inf: scores of a dot product and a ReLU). The `ties_` sizes draw their
values on a coarse grid, so that many entries share the k-th value and a kernel whose tie-break
differs from torch's is still judged right; the `close_` sizes draw them in a narrow band around
1 (a near-flat row of scores), distinct in fp32 but a few levels in fp16, so a kernel that ranks
rounded values picks a wrong set there.

Memory traffic: x read once, the indices written once (B*N*4 + B*k*4 bytes). A selection does
no arithmetic worth the name: about one comparison per element, counted as B*N flops. Memory-
bound: the speed to reach is reading x once at the copy ceiling.
"""

import torch

from kernelgen.spec import BenchShape, Size
from kernelgen.spec.inputs import lay_out, values
from kernelgen.spec.models import MODELS, named

# The selections the bench times (kernelgen/spec/models.py): DeepSeek-V3.2's indexer keeps
# index_topk 2048 tokens per query; Qwen3-235B-A22B's router keeps 8 of its 128 experts.
INDEXER = MODELS["deepseek_v3.2"]
QWEN3_MOE = MODELS["qwen3_235b_a22b"]

# A `ties_` size rounds its values to multiples of this: N(0, 1) then spans ~15 levels, U(-1, 1)
# 9, so at the CPU cases' k / N (~6%) the boundary level holds tens of entries for fewer slots.
TIE_STEP = 0.5
# A `close_` size's values are 1 + CLOSE_SPREAD * the case distribution: ~1e-7 apart on average
# at the CPU widths (fp32's spacing there), while fp16's spacing at 1 (2^-10) is about the band.
CLOSE_SPREAD = 1e-3


def topk(x: torch.Tensor, k: int) -> torch.Tensor:
    # Exact in any float dtype: the harness upcasts x to float64, which keeps every fp32 value
    # and so every tie.
    return torch.topk(x, k, dim=-1, sorted=False).indices.to(torch.int32)


def eager(x: torch.Tensor, k: int) -> torch.Tensor:
    """The peer for speed: torch.topk unsorted, as the indexer calls it, with the cast to the
    int32 that the attention kernel takes (torch gives int64)."""
    return torch.topk(x, k, dim=-1, sorted=False).indices.to(torch.int32)


def make_inputs(size: Size | BenchShape, dtype: str, dist: str, gen: torch.Generator) -> list:
    """x in the case distribution, on a coarse grid for a `ties_` size and in a narrow band for
    a `close_` one, laid out as the size says; k the size's dim (a count that shapes the output:
    no draw)."""
    b, n, k = (size.dims[d] for d in ("B", "N", "k"))
    v = values([b, n], dist, gen)
    if size.name.startswith("ties_"):
        v = torch.round(v / TIE_STEP) * TIE_STEP
    elif size.name.startswith("close_"):
        v = 1 + CLOSE_SPREAD * v
    layout = size.layout if isinstance(size, Size) else "contiguous"
    return [lay_out(v.to(getattr(torch, dtype)), layout, gen), k]


def compare(out: torch.Tensor, ref: torch.Tensor, case, inputs: list) -> str | None:
    """Each row of `out` is k distinct indices in [0, N) whose values in x, as a multiset, are
    those at `ref`'s: the top-k values, compared exactly (they are the same fp32 numbers). Ties
    and order are therefore free. None when that holds."""
    x = inputs[0]
    if tuple(out.shape) != tuple(ref.shape):
        return f"indices of shape {tuple(out.shape)}, expected {tuple(ref.shape)} (B, k)"
    if out.dtype.is_floating_point or out.dtype.is_complex or out.dtype == torch.bool:
        return f"indices of dtype {out.dtype}, expected an integer dtype ({ref.dtype})"
    if out.numel() == 0:
        return None
    ids = out.long()
    n = x.shape[-1]
    outside = (ids < 0) | (ids >= n)
    if bool(outside.any()):
        r, j = (int(i) for i in outside.nonzero()[0])
        return (
            f"row {r}: index {int(ids[r, j])} at [{r}, {j}] is outside [0, {n}); "
            f"{int(outside.sum())} of {ids.numel()} indices outside"
        )
    ranked = ids.sort(dim=-1).values
    twice = ranked[:, 1:] == ranked[:, :-1]
    if bool(twice.any()):
        r, j = (int(i) for i in twice.nonzero()[0])
        return (
            f"row {r}: index {int(ranked[r, j])} chosen more than once; "
            f"{int(twice.any(dim=-1).sum())} of {ids.shape[0]} rows repeat an index"
        )
    got = x.gather(-1, ids).sort(dim=-1, descending=True).values
    want = x.gather(-1, ref.long()).sort(dim=-1, descending=True).values
    off = got != want
    if bool(off.any()):
        r, j = (int(i) for i in off.nonzero()[0])
        return (
            f"row {r}: the chosen values' {_nth(j + 1)} largest is {float(got[r, j]):.9g}, the "
            f"top-{ids.shape[1]}'s is {float(want[r, j]):.9g} (a wrong set of the right size); "
            f"{int(off.any(dim=-1).sum())} of {ids.shape[0]} rows differ"
        )
    return None


def _nth(i: int) -> str:
    suffix = "th" if 10 <= i % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(i % 10, "th")
    return f"{i}{suffix}"


def cost(dims: dict[str, int], itemsize: int) -> dict[str, int]:
    b, n, k = dims["B"], dims["N"], dims["k"]
    return {"bytes": b * n * itemsize + b * k * 4, "flops": b * n}


def _size(name: str, b: int, n: int, k: int, **extra) -> dict:
    return {"name": name, "dims": {"B": b, "N": n, "k": k}, **extra}


def _topk(model: str, b: int, n: int, k: int, was: str | None = None) -> dict:
    """A bench shape of B rows of N fp32 scores, k kept, named `<model>_<B>x<N>_k<k>`."""
    dims = {"B": b, "N": n, "k": k}
    return named(model, dims, label=f"{b}x{n}_k{k}", was=was, dtype="float32")


SPEC = {
    "inputs": [
        # Index scores: fp32 in the indexer whatever the model's activations are.
        {"name": "x", "shape": ["B", "N"]},
        {"kind": "scalar", "name": "k", "dim": "k"},
    ],
    "dtypes": ["float32"],
    "dists": ["normal", "uniform"],
    "bucket": ["B", "N", "k"],
    # Each run draws more cases from here (kernelgen/spec/domain.py), through make_inputs above
    # (lay_out takes a drawn layout as it is): any N, k up to N, x in any 2-D layout, finite
    # values of every family (the indexer's scores have no NaN or inf). Not `denormal`: a GPU
    # may flush subnormals in a comparison, which ties them, where compare needs the exact set.
    "domain": {
        "dims": {
            "N": {"range": [1, 131072], "cpu_max": 3001},
            "k": {"range": [1, 2048], "cpu_max": 128, "at_most": "N"},
            "B": {"range": [1, 1024], "cpu_max": 8},
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
    },
    # The GPU's limits (kernelgen/spec/limits.py), checked on sampled rows: 65600 queries over
    # 33000 cached tokens, fp32 scores past 2^31 from query 65076 on, rows past a grid axis's
    # end. Past 32768 tokens a row no longer fits one program's registers (64 values a thread
    # at 16 warps), and a kernel splits it over programs: where rows move to a second grid
    # axis. Drawn by make_inputs above, a block of rows at a time.
    "limits": [
        {
            "name": "queries",
            "dims": {"B": 65600, "N": 33000, "k": 2048},
            "dtype": "float32",
            "rows": "B",
        },
    ],
    "sizes": [
        # CPU: the 1x1 corner, k = N (every index), k = 1, N not a power of two, N past one
        # 1024-wide block and a power of two (where a kernel drops its masks), a strided and a
        # column-major x, two sizes of heavy ties and one of near-equal values. Few rows: the
        # interpreter runs a program per row one after another, ~0.1 s each for the seed's 34
        # passes over 1000 values.
        _size("one", 1, 1, 1, interpreter=True),
        _size("all", 3, 77, 77, interpreter=True),
        _size("k1", 5, 300, 1, interpreter=True),
        _size("odd", 7, 1000, 64, interpreter=True),
        _size("long_row", 2, 3001, 50, interpreter=True, dists=["normal"]),
        _size("pow2", 4, 2048, 64, interpreter=True, dists=["uniform"]),
        _size("strided", 6, 500, 33, layout="strided", interpreter=True, dists=["normal"]),
        _size("transposed", 9, 130, 17, layout="transposed", interpreter=True, dists=["normal"]),
        _size("ties_odd", 6, 999, 64, interpreter=True),
        _size("ties_small", 7, 40, 7, interpreter=True, dists=["uniform"]),
        _size("close_odd", 5, 700, 40, interpreter=True),
        # GPU: the bench shapes (a long decode row; prefill rows), ties and near-equal values
        # at bench sizes, a strided x, and more rows than a persistent grid of 4 x 132 programs.
        _size("decode_131072", 1, 131072, 2048),
        _size("prefill_32768", 64, 32768, 2048),
        _size("prefill_8192", 128, 8192, 512),
        _size("ties_32768", 64, 32768, 2048, dists=["normal"]),
        _size("close_8192", 128, 8192, 512, dists=["uniform"]),
        _size("strided_gpu", 33, 9001, 512, layout="strided", dists=["uniform"]),
        _size("many_rows_gpu", 1031, 4096, 64, dists=["normal"]),
        # A router's selection at the bench's 4096 tokens: 128 expert scores a row, 8 kept.
        _size("qwen3_235b_a22b_routing", 4096, QWEN3_MOE.experts, QWEN3_MOE.top_k),
    ],
    # DeepSeek-V3.2's indexer at decode over a 128K context (one query row) and 64 prefill
    # queries over 32K tokens; a MoE router's top-8 of Qwen3-235B-A22B's 128 experts for 4096
    # tokens (HF's Qwen3-MoE calls torch.topk on the fp32 router probabilities): thousands of
    # rows 128 wide, where the indexer's rows are 32K to 128K. 128 x 8192 with k = 512 is no
    # model's we could check: index_topk 512 appears in configs of DeepSeek-V4-Flash copied on
    # Hugging Face, not in one of deepseek-ai's we could read.
    "bench": [
        _topk("deepseek_v3.2", 1, 131072, INDEXER.index_topk, was="1x131072_k2048"),
        _topk("deepseek_v3.2", 64, 32768, INDEXER.index_topk, was="64x32768_k2048"),
        {"name": "128x8192_k512", "dims": {"B": 128, "N": 8192, "k": 512}, "dtype": "float32"},
        _topk("qwen3_235b_a22b", 4096, QWEN3_MOE.experts, QWEN3_MOE.top_k),
    ],
}
