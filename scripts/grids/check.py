"""An answer of kernelgen_ops against the operator's float64 reference, twice: at the peer's
tolerance (the grid's Checks) and at kernelgen's own (kernelgen.verify's rule for the operator:
its per-dtype tolerance grown with the reduction, its own compare where the reference has one,
and the error ratio against torch's answer in the case dtype). Each returns None where the
answer holds, else one line saying where it does not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from grids import Check
from kernelgen.spec import Case, OpSpec, Size
from kernelgen.verify import checks
from kernelgen.verify.answers import Answers
from kernelgen.verify.checks import Rejected
from kernelgen.verify.truth import Inputs


def _at(index: torch.Tensor) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]"


def _allclose(c: Check, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    o, r = out.double(), ref.double()
    o_nan, r_nan = torch.isnan(o), torch.isnan(r)
    nan_off = (o_nan != r_nan) if c.equal_nan else (o_nan | r_nan)
    if bool(nan_off.any()):
        where = nan_off.nonzero()[0]
        return (
            f"{float(o[tuple(where)])} at {_at(where)} where the reference is "
            f"{float(r[tuple(where)])}; {int(nan_off.sum())} such entries"
            + ("" if c.equal_nan else " (the peer's check takes no NaN)")
        )
    finite = ~r_nan
    same = (o == r) | ~finite  # inf where the reference has the same inf
    err = torch.where(finite & ~same, (o - r).abs(), torch.zeros_like(o))
    err = torch.nan_to_num(err, nan=float("inf"))
    allowed = c.atol + c.rtol * torch.nan_to_num(r.abs(), nan=0.0)
    over = err > allowed
    if not bool(over.any()):
        return None
    worst = torch.where(over, err - allowed, float("-inf")).flatten().argmax()
    where = torch.tensor(torch.unravel_index(worst, o.shape)) if o.dim() else torch.tensor([])
    at = tuple(int(i) for i in where)
    return (
        f"{float(o[at]):.6g} at {_at(where)}, reference {float(r[at]):.6g} (|err| "
        f"{float(err[at]):.3g} > atol {c.atol:g} + rtol {c.rtol:g}*|ref|); "
        f"{int(over.sum())} of {o.numel()} entries off"
    )


def _relmean(c: Check, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    o, r = out.double(), ref.double()
    scale = float(r.abs().mean()) if r.numel() else 0.0
    rel = float((o - r).abs().mean()) / scale if scale else 0.0
    if rel < (c.limit or 0.0) or (r.numel() == 0):
        return None
    return f"mean |err| / mean |ref| = {rel:.3g}, the peer's limit {c.limit:g}"


def _fp8_codes(c: Check, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    if out.dtype != torch.float8_e4m3fn or ref.dtype != torch.float8_e4m3fn:
        return f"codes of {out.dtype} against {ref.dtype}; expected float8_e4m3fn"
    diff = (out.view(torch.uint8).to(torch.int16) - ref.view(torch.uint8).to(torch.int16)).abs()
    large, tiny, n = int((diff >= 2).sum()), int((diff == 1).sum()), diff.numel()
    small = c.small_numel is not None and n <= c.small_numel
    allowed = (c.small_limit if small else c.limit) or 0.0
    if large == 0 and (n == 0 or tiny / n < allowed):
        return None
    return (
        f"{large} e4m3 codes off by 2 steps or more, {tiny} of {n} off by one "
        f"({tiny / max(n, 1):.3%}; the peer allows under {allowed:.1%})"
    )


def _same_set(c: Check, out: torch.Tensor, ref: torch.Tensor) -> str | None:
    if tuple(out.shape) != tuple(ref.shape):
        return f"indices of shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
    o, r = out.long().sort(dim=-1).values, ref.long().sort(dim=-1).values
    off = (o != r).any(dim=-1)
    if not bool(off.any()):
        return None
    row = int(off.nonzero()[0])
    return f"row {row} picks {o[row].tolist()[:8]}, the reference {r[row].tolist()[:8]}"


_KINDS = {
    "allclose": _allclose,
    "relmean": _relmean,
    "fp8_codes": _fp8_codes,
    "same_set": _same_set,
}


def peer(checks_: list[Check], out: Any, ref: Any) -> str | None:
    """The peer's checks, one per output, against the float64 reference."""
    got, want = checks.leaves(out), checks.leaves(ref)
    if len(got) != len(want) or len(got) != len(checks_):
        return f"{len(got)} outputs, the reference {len(want)}, the peer's checks {len(checks_)}"
    for i, (c, o, r) in enumerate(zip(checks_, got, want, strict=True)):
        if not isinstance(o, torch.Tensor):
            return f"output {i} is {type(o).__name__}, not a tensor"
        if c.kind != "same_set" and tuple(o.shape) != tuple(r.shape):
            return f"output {i} of shape {tuple(o.shape)}, expected {tuple(r.shape)}"
        problem = _KINDS[c.kind](c, o, r)
        if problem:
            return f"output {i}: {problem}" if len(got) > 1 else problem
    return None


def kernelgen(
    spec: OpSpec,
    out: Any,
    args: list[Any],
    ref: Any,
    native: Any,
    dims: dict[str, int],
    case_dtype: str,
    device: str,
) -> str | None:
    """kernelgen.verify's judgement of the answer (structure, then values and precision, as
    verify/answers.py judges a candidate's), with `native` torch's answer in the case dtype."""
    fail = checks.structure(out, native)
    if fail is not None:
        return f"{fail.category}: {fail.reason}"
    case = Case(
        name="grid",
        size=Size(name="grid", dims=dims),
        dtype=case_dtype,  # type: ignore[arg-type]
        dist="normal",
    )
    inputs = Inputs(args=args, where=Path(os.devnull), ref=ref, native=native, digests=[])
    try:
        Answers(spec, device, device).judge_values(out, inputs, case)
    except Rejected as r:
        return f"{r.failure.category}: {r.failure.reason}"
    return None
