"""Limit cases (SPEC.limits, kernelgen/spec/limits.py) on the judge's side: the cases, their
inputs drawn on the judge's device, the rows their truth is computed on, and the candidate's
output gathered at those rows.

A limit case's inputs are GBs, and the makers draw in float64 (8 bytes a value, 4 times a bf16
input's), as would the reference on all of them. So they are drawn where the judge runs (the
GPU), by the operator's own maker (or the default one) a block of rows at a time (2^25 values of
its widest input: 256 MB in float64, where 2^31 are 16 GiB), each block from its own seed derived
from the run's; the candidate runs on all of them;
and the truth is the reference, in float64 and in the case dtype (for the error ratio), on a few
hundred rows: the first and last, those around where an offset into a row-indexed tensor passes
2^31 and 2^32 elements and where a row's program id passes 65535, and rows drawn at random from
the run's seed. The operators with limits are row-wise (a row's output depends on its inputs'
row and on the inputs without rows), so the reference on the gathered rows is the reference's
output at those rows.

An operator whose rows index another input (decode_attn: a block table into a paged KV cache, 4
GiB and more) brings `limit_rows(args, rows)` in its reference module: the call of those rows
alone, with the other inputs cut down to what the rows reach (the pages their table rows name).
Its output must be the whole call's at those rows, in float64 and in the case dtype alike, so
torch's answer is taken on it too (on the whole batch it would be the reference over every
request). Such inputs cannot be drawn a block of rows at a time beside a first block's copy of
the rest, so its limit cases are drawn whole, in one call of its maker on the device, which keeps
its own memory in check.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kernelgen import gpulock
from kernelgen.errors import SpecError
from kernelgen.spec import DEFAULT_TOLERANCES, BenchShape, Case, OpSpec, Size, TensorInput
from kernelgen.spec import resolve_dim as _resolve
from kernelgen.spec.inputs import case_seed, make_inputs
from kernelgen.spec.limits import ELEMENTS, ROWS
from kernelgen.verify.protocol import TensorMeta
from kernelgen.verify.tensors import copies, meta, upcast

# Rows drawn at random besides the boundary ones: with the boundaries they are 64-256 in all
# (a kernel wrong on a band of rows shows on the ones around it; one wrong on scattered rows,
# here by chance).
SAMPLES = 128
# Elements of the widest row input per call of the maker: its float64 draws of a block are then
# a few hundred MB, where the whole tensor's would be 16 GiB and more.
BLOCK_ELEMENTS = 1 << 25
# Elements of the widest row input per call of the reference for torch's answer (_native): 512
# MiB of bf16, 2 GiB in float64, and 37449 rows of router_gemm's K = 7168.
NATIVE_ELEMENTS = 1 << 28
# One limit case's truth at a time: the truth's threads draw several cases at once, and two limit
# cases' inputs, their makers' float64 blocks and torch's answers at once would be GBs more than
# either needs. Across the host's judges, gpulock.limit_case.
_DRAWING = threading.Lock()

# (args, rows) -> the arguments of those rows alone: a reference's `limit_rows`, or the default
# (the row inputs at the rows, the others whole).
Gather = Callable[[list[Any], torch.Tensor], list[Any]]


def limit_cases(spec: OpSpec) -> list[Case]:
    """One case per SPEC limit, named `limit/NAME:dims/dtype/dist`. GPU-only: the interpreter
    would take hours on one, so on CPU they are reported not run."""
    fixed = tuple(
        sorted(
            {
                i.dtype
                for i in spec.data.inputs
                if isinstance(i, TensorInput) and i.dtype in DEFAULT_TOLERANCES
            }
        )
    )
    cases = []
    for limit in spec.data.limits:
        dims = ",".join(f"{k}={v}" for k, v in limit.dims.items())
        size = Size(name=f"limit/{limit.name}:{dims}", dims=limit.dims)
        cases.append(
            Case(
                name=f"{size.name}/{limit.dtype}/{limit.dist}",
                size=size,
                dtype=limit.dtype,
                dist=limit.dist,
                fixed_dtypes=fixed,  # type: ignore[arg-type]
                limit=limit.rows,
            )
        )
    return cases


def _row_inputs(spec: OpSpec, rows: str) -> list[int]:
    """The arguments (positions) whose shape starts with the rows dim."""
    return [
        i
        for i, item in enumerate(spec.data.inputs)
        if isinstance(item, TensorInput) and item.shape[:1] == [rows]
    ]


def _own_gather(spec: OpSpec) -> Gather | None:
    return getattr(spec.module, "limit_rows", None)


def _gatherer(spec: OpSpec, rows: str) -> Gather:
    own = _own_gather(spec)
    if own is not None:
        return own
    at = _row_inputs(spec, rows)
    return lambda args, picked: _gather(args, at, picked)


def draw(spec: OpSpec, case: Case, seed: int, device: str) -> list[Any]:
    """The case's inputs on `device`, a block of rows at a time: each block made by make_inputs
    (the reference's own maker where it has one) on the device, from a seed of its own; the
    inputs without rows (weights) and the scalars are the first block's. Where the reference
    gathers its own rows (`limit_rows`), the whole case in one call. The same seed draws the
    same inputs on the same device."""
    assert case.limit is not None
    dims, rows = case.dims, case.limit
    if _own_gather(spec) is not None:
        whole = BenchShape(name=case.size.name, dims=dims, dtype=case.dtype)
        return make_inputs(
            spec, whole, case.dtype, case.dist, case_seed(seed, f"{case.name}/a"), device
        )
    total = dims[rows]
    at = _row_inputs(spec, rows)
    items = spec.data.inputs
    width = max(
        math.prod(_resolve(d, dims) for d in items[i].shape[1:])  # type: ignore[union-attr]
        for i in at
    )
    per = max(1, BLOCK_ELEMENTS // max(1, width))
    args: list[Any] = []
    for n, start in enumerate(range(0, total, per)):
        count = min(per, total - start)
        block = BenchShape(
            name=f"{case.size.name}@{start}", dims={**dims, rows: count}, dtype=case.dtype
        )
        part = make_inputs(
            spec, block, case.dtype, case.dist, case_seed(seed, f"{case.name}/a/{n}"), device
        )
        if not args:
            args = [
                torch.empty((total, *a.shape[1:]), dtype=a.dtype, device=device) if i in at else a
                for i, a in enumerate(part)
            ]
        for i in at:
            args[i][start : start + count].copy_(part[i])
    return args


def layout(spec: OpSpec, case: Case) -> list[Any] | None:
    """The layout of the case's inputs as `draw` lays them out (shapes, strides, dtypes,
    scalars), without their GBs: one row drawn on the CPU, the row inputs then as dense as
    `draw` makes them at the case's rows. A fresh judge compiles the case's specializations
    ahead from it, with the others', where it would otherwise compile them in its judging runner
    one after the other when it reaches the case (an autotuned kernel: each config). None for
    a case drawn whole by its reference's maker (`limit_rows`): its inputs are laid out as the
    maker lays out GBs, compiled when reached."""
    assert case.limit is not None
    if _own_gather(spec) is not None:
        return None
    dims, rows = case.dims, case.limit
    one = BenchShape(name=f"{case.size.name}@0", dims={**dims, rows: 1}, dtype=case.dtype)
    part = make_inputs(spec, one, case.dtype, case.dist, 0, "cpu")
    at = _row_inputs(spec, rows)
    return [
        TensorMeta(
            shape=[dims[rows], *a.shape[1:]],
            stride=list(torch.empty((0, *a.shape[1:])).stride()),
            offset=0,
            storage=dims[rows] * math.prod(a.shape[1:]),
            dtype=str(a.dtype).removeprefix("torch."),
        )
        if i in at
        else m
        for i, (a, m) in enumerate(zip(part, meta(part), strict=True))
    ]


def sample_rows(
    total: int, widths: list[int], rng: random.Random, count: int = SAMPLES
) -> list[int]:
    """The rows checked: the first and last two; either side of each row where an offset into
    a tensor of these row widths (elements per row) reaches 2^31 or 2^32, and of program id
    65536 (a grid axis's end); `count` more at random. All of them when there are few."""
    picked = {0, 1, total - 2, total - 1, ROWS - 1, ROWS, ROWS + 1}
    for w in widths:
        for edge in (ELEMENTS, 2 * ELEMENTS):
            r = edge // max(1, w)
            picked |= {r - 1, r, r + 1}
    picked = {r for r in picked if 0 <= r < total}
    if total <= len(picked) + count:
        return list(range(total))
    picked |= set(rng.sample(range(total), count))
    return sorted(picked)


@dataclass
class Sampled:
    """The rows a limit case is checked on, and the inputs at them."""

    rows: torch.Tensor  # int64, sorted, on the judge's device
    total: int  # rows of the whole case
    args: list[Any]  # the call of the rows alone: by default the row inputs at them, the rest whole
    gather: Gather  # how `args` were gathered from the whole case's

    def take(self, out: Any) -> Any:
        """An output's sampled rows (a tuple's leaves each)."""
        if isinstance(out, (tuple, list)):
            return tuple(leaf.index_select(0, self.rows) for leaf in out)
        return out.index_select(0, self.rows)

    def whole(self, sampled: Any) -> Any:
        """What a whole output looks like (shapes and dtypes, no memory): a sampled one's
        leaves with all the rows."""

        def one(t: torch.Tensor) -> torch.Tensor:
            return torch.empty((self.total, *t.shape[1:]), dtype=t.dtype, device="meta")

        if isinstance(sampled, tuple):
            return tuple(one(t) for t in sampled)
        return one(sampled)

    def one(self, i: int) -> Sampled:
        """The i-th sampled row alone, to say which row a failure is on."""
        pick = torch.tensor([i], device=self.rows.device)
        return Sampled(
            rows=self.rows[i : i + 1],
            total=self.total,
            args=self.gather(self.args, pick),
            gather=self.gather,
        )

    @staticmethod
    def pick(out: Any, i: int) -> Any:
        """The i-th row of an output already gathered at the sampled rows."""
        if isinstance(out, (tuple, list)):
            return tuple(leaf[i : i + 1] for leaf in out)
        return out[i : i + 1]


def truth(spec: OpSpec, case: Case, seed: int, device: str) -> tuple[list[Any], Sampled, Any, Any]:
    """The case's inputs (whole, on `device`), the sampled rows, the float64 reference on them,
    and torch's answer in the case dtype at them. One at a time in the process and on the host."""
    assert case.limit is not None
    with _DRAWING, gpulock.limit_case(f"the truth of {case.name}", spec.name):
        return _truth(spec, case, seed, device)


def _truth(spec: OpSpec, case: Case, seed: int, device: str) -> tuple[list[Any], Sampled, Any, Any]:
    assert case.limit is not None
    args = draw(spec, case, seed, device)
    if device == "cuda":
        torch.cuda.empty_cache()  # the makers' blocks: memory the candidate's process needs
    at = _row_inputs(spec, case.limit)
    gather = _gatherer(spec, case.limit)
    total = case.dims[case.limit]
    widths = [math.prod(args[i].shape[1:]) for i in at]
    with torch.no_grad():
        probe = spec.reference(*gather(args, torch.zeros(1, dtype=torch.long, device=device)))
    leaves = list(probe) if isinstance(probe, (tuple, list)) else [probe]
    for n, leaf in enumerate(leaves):
        if not isinstance(leaf, torch.Tensor) or leaf.dim() == 0 or leaf.shape[0] != 1:
            raise SpecError(
                f"{spec.path}: SPEC.limits: the reference's output {n} on one row has no row dim "
                f"first ({getattr(leaf, 'shape', type(leaf).__name__)}); limits need row-wise "
                "outputs"
            )
        widths.append(math.prod(leaf.shape[1:]))
    rng = random.Random(case_seed(seed, f"{case.name}/rows"))
    rows = torch.tensor(sample_rows(total, widths, rng), dtype=torch.long, device=device)
    sampled = Sampled(rows=rows, total=total, args=gather(args, rows), gather=gather)
    with torch.no_grad():
        ref = spec.reference(*upcast(sampled.args))
        # torch's own answer, the error ratio's yardstick, on the whole input and then taken at
        # the rows: on the rows alone a GEMM is another problem, for which cuBLAS picks another
        # algorithm. On the H200 router_gemm's torch error was 2.4e-7 on 138 gathered rows of
        # 299600, 7.3e-7 on 4096 whole ones. A reference that gathers its own rows computes
        # each alone: its answer on them is its answer at them (limit_rows' contract).
        if _own_gather(spec) is not None:
            native = spec.reference(*copies(sampled.args))
        else:
            native = _native(spec, args, at, sampled)
    if device == "cuda":
        torch.cuda.empty_cache()
    return args, sampled, ref, native


def _native(spec: OpSpec, args: list[Any], at: list[int], sampled: Sampled) -> Any:
    """torch's answer at the sampled rows, from the reference on the whole input a block of
    NATIVE_ELEMENTS at a time. Whole, a reference that computes in float64 (act_quant's) held
    three 16 GiB tensors at once at 2^31 elements, and ran a judge sharing an H100 out of memory.
    A block is still tens of thousands of rows, the problem cuBLAS sees in the whole call; a
    row-wise operator's rows are the same in any block."""
    width = max(math.prod(args[i].shape[1:]) for i in at)
    per = max(1, NATIVE_ELEMENTS // max(1, width))
    rows = sampled.rows
    parts: list[Any] = []
    for start in range(0, sampled.total, per):
        mine = rows[(rows >= start) & (rows < start + per)] - start
        if mine.numel() == 0:
            continue
        block = [a[start : start + per] if i in at else a for i, a in enumerate(args)]
        out = spec.reference(*copies(block))
        if isinstance(out, (tuple, list)):
            parts.append(tuple(leaf.index_select(0, mine) for leaf in out))
        else:
            parts.append(out.index_select(0, mine))
        del out, block
    if isinstance(parts[0], tuple):
        return tuple(torch.cat(leaves) for leaves in zip(*parts, strict=True))
    return torch.cat(parts)


def _gather(args: list[Any], at: list[int], rows: torch.Tensor) -> list[Any]:
    return [a.index_select(0, rows) if i in at else a for i, a in enumerate(args)]
