"""A grid case as kernelgen_ops' call: its arguments, laid out as the peer's test lays them out
where the library takes that layout, and the torch call the peer's test makes where the library
routes it (kernelgen_ops.enable()).

Values are drawn on the run's device from a generator seeded by the case, in the peer's value
family (GridCase.values): randn (times `scale`, plus `shift`), randn_neg_inf (FlagGems: the
negative entries -inf), uniform on [lo, hi), rand on [0, 1), const, one_high (QuACK: 10 in column
0, -10 elsewhere), arange_shuffled (FlagGems' topk: each row a permutation of 0..N-1),
normal_std (N(0, std^2)), randn_half_x10 (sgl-kernel: N(0, 1), an entry times 10 where its own
N(0, 1) draw is below 0.001), fp8_uniform (U(-448, 448) cast to e4m3, scales U(0, 0.01)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from grids import GridCase

LIBRARY_PAGE = 64  # the page size kernelgen_ops.decode_attn takes today (_contracts)


class TooLarge(Exception):
    """The case's inputs hold more elements than the run allows."""


@dataclass
class Call:
    """One call of kernelgen_ops.<op> on one case."""

    args: list[Any]
    layout: str = "contiguous"
    dims: dict[str, int] = field(default_factory=dict)  # kernelgen's dims, for its tolerance
    case_dtype: str = "float32"  # kernelgen's case dtype, for its tolerance
    # The torch call the peer's test makes, routed under kernelgen_ops.use(); its answer in the
    # direct call's arrangement.
    routed: Callable[[], Any] | None = None
    unview: Callable[[Any], Any] = lambda out: out


def _dt(name: str) -> torch.dtype:
    return getattr(torch, name)


def draw(
    shape: list[int], case: GridCase, gen: torch.Generator, device: str, family: str | None = None
) -> torch.Tensor:
    """The case's values in float32 (the dtype cast comes after)."""
    family = family or case.values
    p = case.params
    kw: dict[str, Any] = {"generator": gen, "device": device, "dtype": torch.float32}
    if family in ("randn", "randn_neg_inf", "randn_half_x10"):
        x = torch.randn(shape, **kw)
        if family == "randn_neg_inf":
            x = torch.where(x < 0, float("-inf"), x)
        elif family == "randn_half_x10":
            x = torch.where(torch.randn(shape, **kw) < 0.001, x * 10, x)
        return x * float(p.get("scale", 1.0)) + float(p.get("shift", 0.0))  # type: ignore[arg-type]
    if family == "normal_std":
        return torch.randn(shape, **kw) * float(p["std"])  # type: ignore[arg-type]
    if family == "uniform":
        lo, hi = float(p["lo"]), float(p["hi"])  # type: ignore[arg-type]
        return torch.rand(shape, **kw) * (hi - lo) + lo
    if family == "rand":
        return torch.rand(shape, **kw)
    if family == "const":
        return torch.full(shape, float(p["value"]), device=device)  # type: ignore[arg-type]
    if family == "one_high":
        x = torch.full(shape, -10.0, device=device)
        x[..., 0] = 10.0
        return x
    if family == "arange_shuffled":
        rows, n = shape
        order = torch.stack([torch.randperm(n, generator=gen, device=device) for _ in range(rows)])
        return order.float()
    raise ValueError(f"scripts/grids: unknown value family {family!r}")


def _budget(n: int, max_elements: int | None) -> None:
    if max_elements is not None and n > max_elements:
        raise TooLarge(f"{n} input elements, over the run's {max_elements}")


def softmax(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    shape = case.shape or []
    _budget(math.prod(shape), limit)
    x = draw(shape, case, gen, device).to(_dt(case.dtype))
    dim = int(case.params.get("dim", -1))  # type: ignore[arg-type]
    last = dim in (-1, len(shape) - 1)
    view = x if last else x.movedim(dim, -1)
    layout = "contiguous" if last else f"dim {dim} of {tuple(shape)} moved last: a strided view"
    cols = shape[-1] if last else shape[dim]
    rows = math.prod(shape) // max(cols, 1) if shape else 1
    return [
        Call(
            args=[view],
            layout=layout,
            dims={"rows": rows, "cols": cols},
            case_dtype=case.dtype,
            routed=lambda: F.softmax(x, dim=dim),
            unview=(lambda out: out) if last else (lambda out: out.movedim(dim, -1)),
        )
    ]


def rms_norm(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    shape = case.shape or []
    _budget(math.prod(shape), limit)
    p = case.params
    x = draw(shape, case, gen, device).to(_dt(case.dtype))
    n = shape[-1]
    wdt = _dt(str(p.get("weight_dtype") or case.dtype))
    kind = p.get("weight", "ones")
    if kind == "ones":
        w = torch.ones(n, device=device)
    else:
        w = draw([n], case, gen, device, family=str(kind))
    weight = w.to(wdt)
    eps = float(p.get("eps", 1e-6))  # type: ignore[arg-type]
    layout = "contiguous" if wdt == x.dtype else f"weight in {str(wdt).removeprefix('torch.')}"
    return [
        Call(
            args=[x, weight, eps],
            layout=layout,
            dims={"rows": math.prod(shape) // max(n, 1), "cols": n},
            case_dtype=case.dtype,
            routed=lambda: F.rms_norm(x, (n,), weight, eps),
        )
    ]


def silu_and_mul(
    case: GridCase, gen: torch.Generator, device: str, limit: int | None
) -> list[Call]:
    shape = case.shape or []
    _budget(2 * math.prod(shape), limit)
    gate = draw(shape, case, gen, device).to(_dt(case.dtype))
    up = draw(shape, case, gen, device).to(_dt(case.dtype))
    # The peers take gate and up as two tensors; kernelgen takes them side by side in the last
    # dimension ([gate | up]), as a fused gate_up projection writes them. A 0-d pair is one of
    # each.
    x = torch.cat([gate, up], dim=-1) if shape else torch.stack([gate, up])
    d = shape[-1] if shape else 1
    return [
        Call(
            args=[x],
            layout="gate and up side by side in the last dimension",
            dims={"rows": math.prod(shape) // max(d, 1) if shape else 1, "d": d},
            case_dtype=case.dtype,
        )
    ]


def topk(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    shape = case.shape or []
    _budget(math.prod(shape), limit)
    x = draw(shape, case, gen, device).to(_dt(case.dtype))
    k = int(case.params["k"])  # type: ignore[arg-type]
    largest = bool(case.params.get("largest", True))
    layout = "contiguous" if largest else "largest=False: the top-k of -x"
    return [
        Call(
            args=[x if largest else -x, k],
            layout=layout,
            dims={"B": shape[0], "N": shape[1], "k": k},
            case_dtype=case.dtype,
        )
    ]


def decode_attn(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    """The peer's paged cache as it lays it out (its page size, K and V apart or interleaved in
    one tensor, its table), and where its page is not the library's, the same requests again
    with their tokens in 64-token pages: the peer's dims on the layout the library takes."""
    p = case.params
    lens = list(p["kv_lens"]) if "kv_lens" in p else [int(p["kv_len"])] * int(p["batch"])  # type: ignore[arg-type,call-overload]
    page, hq, hkv, d = (int(p[k]) for k in ("page", "hq", "hkv", "d"))  # type: ignore[arg-type]
    dv = int(p.get("dv") or d)  # type: ignore[arg-type]
    dt = _dt(case.dtype)
    b = len(lens)
    need = [-(-n // page) for n in lens]
    width = max(need)
    if p.get("table") == "random":
        pages = int(p["pages"])  # type: ignore[arg-type]
        table = torch.randint(0, pages, (b, width), generator=gen, device=device)
    else:
        pages = sum(need)
        start = torch.tensor([0, *need[:-1]], device=device).cumsum(0)
        table = start[:, None] + torch.arange(width, device=device)[None, :]
        table = torch.where(table < (start + torch.tensor(need, device=device))[:, None], table, 0)
    _budget(pages * page * hkv * (d + dv) + b * hq * d, limit)
    q = draw([b, hq, d], case, gen, device).to(dt)
    if p.get("cache") == "kv_interleaved":
        kv = draw([pages, 2, page, hkv, d], case, gen, device).to(dt)
        k_cache, v_cache = kv[:, 0], kv[:, 1]
        where = f"K and V interleaved in one [pages, 2, {page}, Hkv, D] tensor"
    else:
        k_cache = draw([pages, page, hkv, d], case, gen, device).to(dt)
        v_cache = draw([pages, page, hkv, dv], case, gen, device).to(dt)
        where = "K and V apart"
    table = table.to(torch.int32)
    seq_lens = torch.tensor(lens, dtype=torch.int32, device=device)
    scale = d**-0.5
    dims = {"B": b, "L": max(lens), "page": page, "hq": hq, "hkv": hkv, "d": d}
    calls = [
        Call(
            args=[q, k_cache, v_cache, table, seq_lens, scale],
            layout=f"{page}-token pages, {where}, {p.get('table', 'consecutive')} table",
            dims=dims,
            case_dtype=case.dtype,
        )
    ]
    if page != LIBRARY_PAGE and dv == d:
        calls.append(_repaged(calls[0], lens, page, hq, hkv, d, dims, case.dtype))
    return calls


def _repaged(
    call: Call, lens: list[int], page: int, hq: int, hkv: int, d: int, dims: dict, dtype: str
) -> Call:
    """The same requests' tokens, in the same order, in consecutive 64-token pages."""
    q, k_cache, v_cache, table, seq_lens, scale = call.args
    need = [-(-n // LIBRARY_PAGE) for n in lens]
    width = max(need)
    caches = []
    for cache in (k_cache, v_cache):
        out = cache.new_zeros((sum(need), LIBRARY_PAGE, hkv, cache.shape[-1]))
        first = 0
        for r, n in enumerate(lens):
            t = torch.arange(n, device=cache.device)
            tokens = cache[table[r, t // page].long(), t % page]
            out.view(-1, hkv, cache.shape[-1])[first * LIBRARY_PAGE : first * LIBRARY_PAGE + n] = (
                tokens
            )
            first += need[r]
        caches.append(out)
    start = torch.tensor([0, *need[:-1]], device=q.device).cumsum(0)
    new = start[:, None] + torch.arange(width, device=q.device)[None, :]
    ends = (start + torch.tensor(need, device=q.device))[:, None]
    new = torch.where(new < ends, new, 0).to(torch.int32)
    return Call(
        args=[q, caches[0], caches[1], new, seq_lens, scale],
        layout=f"repaged: the same tokens in {LIBRARY_PAGE}-token pages (the peer's are {page})",
        dims={**dims, "page": LIBRARY_PAGE},
        case_dtype=dtype,
    )


def fused_moe(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    p = case.params
    m, inter, hidden, e, k = (int(p[n]) for n in ("m", "inter", "hidden", "experts", "topk"))  # type: ignore[arg-type]
    _budget(m * hidden + 3 * e * inter * hidden + m * e, limit)
    dt = _dt(case.dtype)
    x = draw([m, hidden], case, gen, device).to(dt)
    w1 = draw([e, 2 * inter, hidden], case, gen, device).to(dt)
    w2 = draw([e, hidden, inter], case, gen, device).to(dt)
    score = draw([m, e], case, gen, device).to(dt)
    # The peer's routing: softmax over the scores in fp32, top-k, not renormalized.
    weights, ids = torch.topk(torch.softmax(score, dim=-1, dtype=torch.float32), k)
    return [
        Call(
            args=[x, w1, w2, weights.contiguous(), ids.to(torch.int32).contiguous()],
            dims={"M": m, "E": e, "k": k, "H": hidden, "I": inter},
            case_dtype=case.dtype,
        )
    ]


def act_quant(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    shape = case.shape or []
    _budget(math.prod(shape), limit)
    x = draw(shape, case, gen, device).to(_dt(case.dtype))
    return [Call(args=[x], dims={"M": shape[0], "K": shape[1]}, case_dtype=case.dtype)]


def fp8_gemm(case: GridCase, gen: torch.Generator, device: str, limit: int | None) -> list[Call]:
    p = case.params
    m, n, k = (int(p[d]) for d in ("m", "n", "k"))  # type: ignore[arg-type]
    _budget(m * k + n * k, limit)
    e4m3 = torch.float8_e4m3fn
    top = torch.finfo(e4m3).max
    kw: dict[str, Any] = {"generator": gen, "device": device}
    a = ((torch.rand(m, k, **kw) - 0.5) * 2 * top).clamp(-top, top).to(e4m3)
    b = ((torch.rand(n, k, **kw) - 0.5) * 2 * top).clamp(-top, top).to(e4m3)
    k_tiles, n_tiles = -(-k // 128), -(-n // 128)
    a_scale = torch.rand(m, k_tiles, **kw) * 1e-2
    b_scale = torch.rand(n_tiles, k_tiles, **kw) * 1e-2
    # kernelgen's case dtype for fp8_gemm names no tensor (its spec: float32); the output is bf16.
    return [Call(args=[a, a_scale, b, b_scale], dims={"M": m, "N": n, "K": k})]


BUILDERS = {
    "softmax": softmax,
    "rms_norm": rms_norm,
    "silu_and_mul": silu_and_mul,
    "topk": topk,
    "decode_attn": decode_attn,
    "fused_moe": fused_moe,
    "act_quant": act_quant,
    "fp8_gemm": fp8_gemm,
}


def build(op: str, case: GridCase, seed: int, device: str, limit: int | None) -> list[Call]:
    """The case's calls, drawn from `seed` on `device`; TooLarge before anything is allocated
    where the inputs would pass `limit` elements."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return BUILDERS[op](case, gen, device, limit)
