"""Judging one output against the float64 ground truth, and what a failure is.

Each check returns None when it holds, or a `Failure` (category + one-line reason). Outputs may be
tensors or tuples of tensors; every leaf is judged on its own. The judge raises `Rejected` to stop
at a failure; `classify` names the category of what the candidate's call raised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from kernelgen.records import Category
from kernelgen.spec import Tolerance

if TYPE_CHECKING:
    from kernelgen.verify.protocol import Failed

# Below this, relative errors are fp32 rounding noise (an approximate exp, another summation
# order): the error-ratio test bites only when a candidate is clearly worse than torch. The floor
# is in fp32 ulps whatever the dtype, because fp32 is the accumulation precision we demand.
# 32 ulps (3.8e-6), not 4: tl.exp is ex2.approx(x * log2 e), whose product rounds to fp32 first,
# so its relative error grows with |x|; a silu_and_mul with the seed's own formula measured
# 1.05e-6 (9 ulps) on one/float32/wide on the H200 (x ~ N(0, 40^2)) and was rejected. Half
# precision arithmetic errs by 2.4e-4 (fp16) to 2e-3 (bf16), still 60x and more above it.
_RATIO_FLOOR = 32 * torch.finfo(torch.float32).eps


@dataclass
class Failure:
    category: Category
    reason: str


class Rejected(Exception):
    def __init__(self, failure: Failure, case: str | None = None):
        super().__init__(failure.reason)
        self.failure = failure
        self.case = case


def classify(error: Failed) -> Failure:
    """A category for what the candidate's call raised."""
    name, text = error.type, error.message or error.type
    where = f" (line {error.line})" if error.line else ""
    if name == "ContractError":
        return Failure("contract", text)
    if name in ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources") or (
        error.frontend
    ):
        return Failure("compile", f"{name}: {text}{where}")
    if name in ("OutOfMemoryError", "MemoryError") or "can't allocate memory" in text:
        return Failure("oom", text)
    if "illegal memory access" in text or "CUDA error" in text:
        return Failure("crash", text)
    return Failure("crash", f"{name}: {text}{where}")


def leaves(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def structure(out: Any, expected: Any) -> Failure | None:
    """Exact type, dtype, shape and device, leaf by leaf."""
    got, want = leaves(out), leaves(expected)
    if len(got) != len(want) or isinstance(out, (tuple, list)) != isinstance(expected, tuple):
        return Failure(
            "incorrect",
            f"returned {type(out).__name__} of {len(got)}, "
            f"expected {type(expected).__name__} of {len(want)}",
        )
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        label = f"output {i}" if len(want) > 1 else "output"
        if type(g) is not torch.Tensor:
            return Failure("contract", f"{label} is {type(g).__name__}, not a plain torch.Tensor")
        if g.dtype != w.dtype:
            return Failure("incorrect", f"{label} dtype {g.dtype}, expected {w.dtype}")
        if tuple(g.shape) != tuple(w.shape):
            return Failure(
                "incorrect", f"{label} shape {tuple(g.shape)}, expected {tuple(w.shape)}"
            )
        if g.device != w.device:
            return Failure("incorrect", f"{label} on {g.device}, expected {w.device}")
    return None


# The checks read a block of entries at a time. An output at a KernelBench problem's own size
# has a billion entries, and float64 temporaries of the whole (8 GB each, several a check) ran
# the judge out of GPU memory beside its inputs and truth
# (evaluations/logs/h100-20261206-suite-shipped-kernelbench-oom: kb1_89 cumsum).
BLOCK = 1 << 24  # entries: each float64 temporary of a block is 128 MiB


def _blocks(*tensors: torch.Tensor) -> Iterator[tuple[int, list[torch.Tensor]]]:
    """Same-shaped tensors in aligned pieces of their entries in C order, each with the flat
    index of its first entry. A view where the layout allows one, else a copy in the tensor's
    own dtype (a strided output); the float64 temporaries are then the checks' own, a block's."""
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) > 1:  # the judge checks structure first: this is the judge's own bug
        raise ValueError(f"entries of differently shaped tensors compared: {sorted(shapes)}")
    flat = [t.reshape(-1) for t in tensors]
    n = flat[0].numel()
    for start in range(0, n, BLOCK):
        yield start, [f[start : start + BLOCK] for f in flat]


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return index[::-1]


def _where(index: list[int]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def _errors(o: torch.Tensor, r: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """A block in float64, where its reference is finite, and |out - ref| there (0 elsewhere;
    a NaN or infinite difference counts as inf)."""
    o, r = o.double(), r.double()
    finite = torch.isfinite(r)
    err = torch.where(finite, (o - r).abs(), torch.zeros_like(r))
    return o, r, finite, torch.nan_to_num(err, nan=float("inf"), posinf=float("inf"))


def _rel_terms(r: torch.Tensor, finite: torch.Tensor, err: torch.Tensor) -> list[torch.Tensor]:
    """A block's share of rel_err: its errors' sum, its finite reference's magnitude, and how
    many entries that is."""
    scale = torch.where(finite, r.abs(), torch.zeros_like(r)).sum()
    return [err.sum(), scale, finite.sum().double()]


def _rel(err_sum: float, scale: float, n_finite: float) -> float:
    return err_sum / max(scale, 1e-300) if n_finite else 0.0


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """mean |out - ref| / mean |ref| over the entries where the reference is finite."""
    totals = [0.0, 0.0, 0.0]
    for _, (o, r) in _blocks(out, ref):
        _, r, finite, err = _errors(o, r)
        block = torch.stack(_rel_terms(r, finite, err)).tolist()
        totals = [t + b for t, b in zip(totals, block, strict=True)]
    return _rel(*totals)


def stretch(native: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> float:
    """How many times the tolerance torch's own answer in the case dtype needs, at least 1: the
    largest |native - ref| / (atol + rtol|ref|) over the entries where both are finite.

    The base tolerance is torch.testing's, grown with log2 of the reduction, which models a
    tree sum. A GPU GEMM adds its K products in a chain: on the H200, fp32 at K = 4096 put 1.5%
    of the entries of an exact-fp32 FMA kernel past it (err 5.1e-4 against atol 1.2e-4), as a
    sequential fp32 chain does on the CPU (1.48%), while the CPU torch it was fitted on stays
    within. A judge that would reject torch's own answer on its device is miscalibrated there;
    where torch's answer passes, nothing changes."""
    most = 1.0
    for _, (n, r) in _blocks(native, ref):
        r, n = r.double(), n.double()
        ok = torch.isfinite(r) & torch.isfinite(n)
        excess = torch.where(ok, (n - r).abs() / (tol.atol + tol.rtol * r.abs()), 0.0)
        most = max(most, float(excess.max()))
    return most


def allclose_diff(
    a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float
) -> tuple[bool, float, float]:
    """torch.allclose(a, b, rtol, atol), and the largest and the mean |a - b| in float64 (NaN
    where an entry's is), as KernelBench's eval takes them: a block at a time. Raises what
    torch.allclose raises (two dtypes)."""
    close, worst, total = True, [], 0.0
    for _, (x, y) in _blocks(a, b):
        close &= bool(torch.allclose(x, y, atol=atol, rtol=rtol))
        diff = (x.double() - y.double()).abs()
        worst.append(diff.max())
        total += float(diff.sum())
    if not worst:
        return close, 0.0, 0.0
    return close, float(torch.stack(worst).max()), total / a.numel()


def values(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> tuple[Failure | None, float]:
    """NaN and Inf exactly where the reference has them; elsewhere |out-ref| <= atol + rtol|ref|.
    Returns the failure (or None) and the max abs error over finite entries."""
    fail, max_err, _ = measure(out, ref, tol)
    return fail, max_err


def _tally_block(o: torch.Tensor, r: torch.Tensor, tol: Tolerance) -> tuple[torch.Tensor, ...]:
    o, r, finite, err = _errors(o, r)
    o_nan, r_nan, r_inf = torch.isnan(o), torch.isnan(r), torch.isinf(r)
    allowed = tol.atol + tol.rtol * r.abs()
    over = finite & (err > allowed)
    return o_nan, r_nan, r_inf, o, r, finite, err, allowed, over


def measure(
    out: torch.Tensor, ref: torch.Tensor, tol: Tolerance
) -> tuple[Failure | None, float, float]:
    """`values` and `rel_err` in one pass, with one wait for the device: the judge checks every
    call of every case, and each read of a result back to the host is a round trip on a GPU
    that the candidate's process is using too. The reason for a failure is worked out only when
    there is one, in a second pass over the blocks that finds its entry."""
    if ref.numel() == 0:
        return None, 0.0, 0.0
    sums: list[torch.Tensor] = []
    for _, (ob, rb) in _blocks(out, ref):
        o_nan, r_nan, r_inf, o, r, finite, err, _, over = _tally_block(ob, rb, tol)
        counts = [(o_nan != r_nan).sum(), (r_inf & (o != r)).sum(), over.sum()]
        sums.append(
            torch.stack([c.double() for c in counts] + [err.max()] + _rel_terms(r, finite, err))
        )
    per_block = torch.stack(sums).tolist()
    nan_off, inf_off, n_over = (sum(b[i] for b in per_block) for i in range(3))
    max_err = max(b[3] for b in per_block)
    rel = _rel(*(sum(b[i] for b in per_block) for i in (4, 5, 6)))
    if nan_off:
        return _first_nan(out, ref, tol, int(nan_off)), 0.0, rel
    if inf_off:
        return _first_inf(out, ref, tol), 0.0, rel
    if n_over:
        return _worst_over(out, ref, tol, int(n_over)), max_err, rel
    return None, max_err, rel


def _first_nan(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, count: int) -> Failure:
    for start, (ob, rb) in _blocks(out, ref):
        o_nan, r_nan, *_ = _tally_block(ob, rb, tol)
        bad = (o_nan != r_nan).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            index = _where(_unravel(start + i, ref.shape))
            unwritten = bool(o_nan[i])
            what = "NaN" if unwritten else f"{float(ob[i]):.6g}"
            # A NaN where the reference is finite is what an unwritten (NaN-poisoned) output gives.
            hint = " (output never written there?)" if unwritten else ""
            return Failure(
                "incorrect",
                f"{what} at {index} where the reference is {float(rb[i]):.6g}; "
                f"{count} such entries{hint}",
            )
    raise AssertionError("a NaN mismatch counted but not found")


def _first_inf(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> Failure:
    for start, (ob, rb) in _blocks(out, ref):
        _, _, r_inf, o, r, *_ = _tally_block(ob, rb, tol)
        bad = (r_inf & (o != r)).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            return Failure(
                "incorrect",
                f"{float(o[i]):.6g} at {_where(_unravel(start + i, ref.shape))} where the "
                f"reference is {float(r[i])}",
            )
    raise AssertionError("an Inf mismatch counted but not found")


def _excess(o: torch.Tensor, r: torch.Tensor, tol: Tolerance) -> tuple[torch.Tensor, ...]:
    """How many times its tolerance each entry is off, where it is over it (else 0)."""
    _, _, _, o, r, _, err, allowed, over = _tally_block(o, r, tol)
    return torch.where(over, err / allowed, torch.zeros_like(err)), o, r, err


def _worst_over(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, count: int) -> Failure:
    """The entry furthest past its tolerance (the first such in C order): each block's worst in
    one pass, then the entry in the block that holds the largest."""
    worst = torch.stack([_excess(o, r, tol)[0].max() for _, (o, r) in _blocks(out, ref)]).tolist()
    start = worst.index(max(worst)) * BLOCK
    ob, rb = out.reshape(-1)[start : start + BLOCK], ref.reshape(-1)[start : start + BLOCK]
    excess, o, r, err = _excess(ob, rb, tol)
    i = int((excess == excess.max()).nonzero()[0, 0])
    return Failure(
        "incorrect",
        f"{float(o[i]):.6g} at {_where(_unravel(start + i, ref.shape))}, reference "
        f"{float(r[i]):.6g} (|err| {float(err[i]):.3g} > atol {tol.atol:.2g} + rtol "
        f"{tol.rtol:.2g}*|ref|); {count} of {ref.numel()} entries off",
    )


def error_pairs(
    out: Any, ref: Any, inputs: list[Any], error_values: Callable[..., Any] | None
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """What the error ratio measures of an operator with its own compare: the pairs (values,
    their truth) that its reference module's `error_values(out, ref, inputs)` names where it has
    one (act_quant: the dequantized values against x), else each floating-point leaf against the
    truth's. An integer leaf (top-k's indices) has no error to measure."""
    if error_values is not None:
        return list(error_values(out, ref, inputs))
    return [
        (o, r)
        for o, r in zip(leaves(out), leaves(ref), strict=True)
        if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) and o.is_floating_point()
    ]


def pair_errors(pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> list[float]:
    return [rel_err(v, t) for v, t in pairs]


def precision(
    cand_err: float, torch_err: float, dtype: torch.dtype, ratio: float
) -> Failure | None:
    """The candidate may be at most `ratio` times less accurate than torch in the same dtype
    (plus a few fp32 ulps): a loose tolerance must not let a silent downgrade through."""
    floor = _RATIO_FLOOR
    if cand_err <= ratio * torch_err + floor:
        return None
    return Failure(
        "precision",
        f"mean relative error {cand_err:.3g} vs torch's {torch_err:.3g} in {dtype} "
        f"(allowed {ratio:g}x + {floor:.2g}): computed in lower precision?",
    )
