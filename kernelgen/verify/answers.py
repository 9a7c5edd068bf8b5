"""The checks of one candidate's answers, on the judge's side: what a reply's record says the call
ran (provenance), its outputs read back and judged against the float64 truth (structure, values,
precision, inputs untouched, no aliasing), and its agreement with the candidate's first answer.

Each check raises `Rejected` at the first failure; verdict.py makes the calls and says which call a
failure belongs to.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import torch

from kernelgen.records import CallCosts, CaseResult
from kernelgen.spec import Case, OpSpec
from kernelgen.verify import checks
from kernelgen.verify.checks import Failure, Rejected
from kernelgen.verify.protocol import Reply
from kernelgen.verify.tensors import borrow, overlaps
from kernelgen.verify.truth import CaseTruth, Inputs


class Answers:
    """Judges the answers of one candidate. Gathers the candidate's Triton kernels seen launching
    (the profiler's check and the verdict name them) and the judge's side of the call costs."""

    def __init__(self, spec: OpSpec, device: str, judge_device: str):
        self.spec, self.device = spec, device
        self.judge_device = judge_device  # where outputs are read back to, beside the truth
        self.kernels: set[str] = set()
        self.costs = CallCosts()

    def check_log(self, reply: Reply, guarded: bool) -> None:
        log = reply.log
        if not guarded:
            return
        if log is None:
            raise Rejected(Failure("provenance", "the guarded call came back without its record"))
        self.kernels.update(log.launches)
        if log.threads:
            raise Rejected(Failure("provenance", f"started threads {log.threads}"))
        if log.forbidden:
            ops = ", ".join(sorted(set(log.forbidden)))
            raise Rejected(Failure("provenance", f"torch computed in the launcher: aten {ops}"))
        if not log.launches:
            other = f" (launched only {sorted(set(log.foreign))})" if log.foreign else ""
            raise Rejected(
                Failure("provenance", f"no Triton kernel of the candidate launched{other}")
            )

    def check_output(
        self, reply: Reply, out_file: Path, truth: CaseTruth, variant: str, case: Case
    ) -> tuple[Any, CaseResult]:
        inputs = truth.variants[variant]
        sampled = inputs.sampled
        expected = inputs.native if sampled is None else sampled.whole(inputs.native)
        fail = structure(reply, expected, self.device)
        if fail:
            raise Rejected(fail)
        mark = time.monotonic()
        # A limit case is judged on its sampled rows: only those are copied out of a lent output.
        pick = None if sampled is None else sampled.take
        try:
            if reply.shared is not None:  # lent by the runner: copied here, the loan ended
                loaded = [borrow(x, pick) if x is not None else None for x in reply.shared]
            else:
                loaded = torch.load(out_file, map_location=self.judge_device, weights_only=True)
                if pick is not None:
                    loaded = [pick(x) if isinstance(x, torch.Tensor) else x for x in loaded]
            out = tuple(loaded) if reply.tuple_out else loaded[0]
        except Exception as e:  # the file or handle is the candidate process's: anything goes
            raise Rejected(Failure("crash", f"its outputs could not be read back: {e}")) from None
        self.costs.add("judge_read", time.monotonic() - mark)
        if sampled is None:
            result = self.judge_values(out, inputs, case)
        else:
            result = self.judge_sampled(out, inputs, case)
        if reply.input_digests != inputs.digests:
            raise Rejected(Failure("mutation", "an input changed during the call"))
        for leaf in reply.leaves:
            if leaf.span is not None and any(overlaps(leaf.span, s) for s in reply.inputs):
                raise Rejected(Failure("aliasing", "the output shares memory with an input"))
        return out, result

    def judge_sampled(self, out: Any, inputs: Inputs, case: Case) -> CaseResult:
        """A limit case's rows against the truth on them. A wrong value is named by its row in
        the whole output: the first sampled row that fails alone."""
        sampled = inputs.sampled
        assert sampled is not None
        n = int(sampled.rows.numel())
        try:
            result = self.judge_values(out, inputs, case)
        except Rejected as r:
            failure = r.failure
            row = (
                self._first_wrong_row(out, inputs, case)
                if failure.category == "incorrect"
                else None
            )
            reason = row or f"{failure.reason} (on {n} of {sampled.total} rows)"
            raise Rejected(Failure(failure.category, reason)) from None
        return result.model_copy(update={"note": f"checked on {n} of {sampled.total} rows"})

    def _first_wrong_row(self, out: Any, inputs: Inputs, case: Case) -> str | None:
        sampled = inputs.sampled
        assert sampled is not None
        for i, row in enumerate(sampled.rows.tolist()):
            alone = dataclasses.replace(
                inputs,
                ref=sampled.pick(inputs.ref, i),
                native=sampled.pick(inputs.native, i),
                native_errs=None,
                native_stretch=inputs.native_stretch,  # the case's tolerance names its row
                sampled=sampled.one(i),
            )
            try:
                self.judge_values(sampled.pick(out, i), alone, case)
            except Rejected as r:
                return f"row {row} of {sampled.total}: {r.failure.reason}"
        return None

    def judge_values(self, out: Any, inputs: Inputs, case: Case) -> CaseResult:
        ref64 = inputs.ref
        if self.spec.compare is not None:
            msg = self.spec.judge(out, ref64, case, _args(inputs))
            if msg:
                raise Rejected(Failure("incorrect", msg))
            return self.judge_ratio(out, inputs, case)
        tol = self.spec.tolerance(case.dtype, case.dims)
        worst, cand_err, torch_err = 0.0, 0.0, 0.0
        if inputs.native_errs is None:  # the same for every candidate of the run
            inputs.native_errs = [
                checks.rel_err(n, r)
                for n, r in zip(checks.leaves(inputs.native), checks.leaves(ref64), strict=True)
            ]
        if inputs.native_stretch is None:
            inputs.native_stretch = [
                checks.stretch(n, r, tol) if isinstance(n, torch.Tensor) else 1.0
                for n, r in zip(checks.leaves(inputs.native), checks.leaves(ref64), strict=True)
            ]
        ratio = self.spec.data.error_ratio
        for o, r, n_err, s in zip(
            checks.leaves(out), checks.leaves(ref64), inputs.native_errs, inputs.native_stretch,
            strict=True,
        ):  # fmt: skip
            # Where torch's own answer needs more than the base tolerance, the candidate gets
            # the error ratio times what torch needed (checks.stretch), as the precision rule.
            fail, max_err, rel = checks.measure(o, r, tol if s == 1.0 else tol.scaled(ratio * s))
            if fail and s > 1.0 and fail.category == "incorrect":
                fail = Failure(
                    fail.category,
                    f"{fail.reason} (the base tolerance times {ratio:g} x {s:.3g}: torch's own "
                    f"answer in {case.dtype} needs {s:.3g}x it here)",
                )
            if fail:
                raise Rejected(fail)
            worst = max(worst, max_err)
            cand_err = max(cand_err, rel)
            torch_err = max(torch_err, n_err)
            fail = checks.precision(cand_err, torch_err, o.dtype, self.spec.data.error_ratio)
            if fail:
                raise Rejected(fail)
        return CaseResult(
            name=case.name,
            status="passed",
            max_abs_err=worst,
            rel_err=cand_err,
            torch_rel_err=torch_err,
        )

    def judge_ratio(self, out: Any, inputs: Inputs, case: Case) -> CaseResult:
        """The error ratio of an operator with its own compare, on what its reference says the
        error is measured on (checks.error_pairs): a compare's allowance (act_quant's e4m3
        step, router_gemm's bound) must not let a biased or downgraded kernel through."""
        hook = getattr(self.spec.module, "error_values", None)
        if inputs.native_errs is None:  # the same for every candidate of the run
            native = checks.error_pairs(inputs.native, inputs.ref, _args(inputs), hook)
            inputs.native_errs = checks.pair_errors(native)
        pairs = checks.error_pairs(out, inputs.ref, _args(inputs), hook)
        if not pairs:
            return CaseResult(name=case.name, status="passed")
        cand_err = max(checks.pair_errors(pairs))
        torch_err = max(inputs.native_errs, default=0.0)
        fail = checks.precision(cand_err, torch_err, pairs[0][0].dtype, self.spec.data.error_ratio)
        if fail:
            raise Rejected(fail)
        return CaseResult(
            name=case.name, status="passed", rel_err=cand_err, torch_rel_err=torch_err
        )

    def agree(self, first: Any, again: Any, case: Case, what: str, inputs: Inputs) -> None:
        if self.spec.compare is not None:
            # The operator's own rule, the first answer standing for the truth: two honest
            # calls of a top-k may list the same set in another order.
            msg = self.spec.judge(again, first, case, _args(inputs))
            if msg:
                raise Rejected(Failure("stale", f"{what} disagrees with the first: {msg}"))
            return
        tol = self.spec.tolerance(case.dtype, case.dims)
        for o1, o2 in zip(checks.leaves(first), checks.leaves(again), strict=True):
            fail, _ = checks.values(o2, o1, tol)  # upcast a block at a time
            if fail:
                raise Rejected(Failure("stale", f"{what} disagrees with the first: {fail.reason}"))

    def profiled(self, reply: Reply, out: Any, result: CaseResult) -> None:
        names = set(reply.cuda_kernels or [])
        # Triton names a CUDA kernel exactly after its function: match names whole, so a kernel
        # called `_k` cannot vouch for every torch kernel with "_k" in its name.
        foreign = sorted(n for n in names if n not in self.kernels and not _layout_kernel(n))
        if foreign:
            raise Rejected(
                Failure(
                    "provenance",
                    f"CUDA kernels that are not the candidate's ran: {', '.join(foreign)[:200]}",
                )
            )
        if not names:
            raise Rejected(Failure("provenance", "the profiler saw no kernel run"))


def _args(inputs: Inputs) -> list[Any]:
    """The arguments the truth was computed on: a limit case's at its sampled rows."""
    return inputs.args if inputs.sampled is None else inputs.sampled.args


def structure(reply: Reply, expected: Any, device: str) -> Failure | None:
    """Exact type, dtype, shape and device, leaf by leaf, from what the runner saw."""
    want = checks.leaves(expected)
    got = reply.leaves
    if len(got) != len(want) or reply.tuple_out != isinstance(expected, tuple):
        kind = "tuple" if reply.tuple_out else "a single value"
        return Failure(
            "incorrect",
            f"returned {kind} of {len(got)}, expected {type(expected).__name__} of {len(want)}",
        )
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        label = f"output {i}" if len(want) > 1 else "output"
        if g.type != "Tensor":
            return Failure("contract", f"{label} is {g.type}, not a plain torch.Tensor")
        wdtype = str(w.dtype).removeprefix("torch.")
        if g.dtype != wdtype:
            return Failure("incorrect", f"{label} dtype torch.{g.dtype}, expected {w.dtype}")
        if list(g.shape) != list(w.shape):
            return Failure(
                "incorrect", f"{label} shape {tuple(g.shape)}, expected {tuple(w.shape)}"
            )
        if g.device is None or torch.device(g.device).type != device:
            return Failure("incorrect", f"{label} on {g.device}, expected {device}")
    return None


def _layout_kernel(name: str) -> bool:
    low = name.lower()
    return "copy" in low or "fill" in low
