"""Ground truth for a run, on the judge's side: computed once per (case, seed), reused for every
candidate the run judges.

For each case: two input sets (a, b) drawn from the run's seed and kept on the run's device with
their layouts intact (a strided view keeps its padded storage), the float64 reference and torch's
own result in the case dtype, and a digest of every input storage so the judge can tell whether a
call wrote into its inputs. On CUDA the inputs are lent to the candidate's process call by call
(protocol.Shared); elsewhere, and for compute-sanitizer, they are saved as files it loads. None
of it ever enters the candidate's process except the inputs themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelgen import gpulock
from kernelgen.spec import Case, OpSpec
from kernelgen.spec.inputs import case_inputs, case_seed, drawn_on
from kernelgen.verify import limits
from kernelgen.verify.protocol import Shared, TensorMeta
from kernelgen.verify.tensors import (
    copies,
    give_back_cache,
    lend,
    meta,
    storage_digest,
    upcast,
    whole,
)

VARIANTS = ("a", "b")
# Intra-op threads per torch op while the truth is drawn. The draw runs several cases at once,
# and with torch's default (a thread per core) 8 x 16 threads held back the runner starting
# beside it on the H200's 16 cores: ready 12.2 s after its spawn beside silu_and_mul's truth,
# 8.4 s with 4 threads (7.8 s alone), the truth itself as fast (5.6 s against 5.3;
# scripts/probe_start.py, evaluations/logs/h200-20261202-runner-start-agent-topk-tune).
TRUTH_INTRA_OP = 4
# One GPU draw at a time in the process: a draw holds float64 values of the whole case (twice
# its bytes and more, as bf16) for the milliseconds it takes, and the truth's threads at once
# would hold several cases' worth, which the truths' budget does not count.
_GPU_DRAW = threading.Lock()


@dataclass
class Inputs:
    args: list[Any]  # on the run's device, each tensor's storage whole
    where: Path  # the file the inputs are saved to, when a runner loads them from one
    ref: Any  # float64 reference on the upcast inputs
    native: Any  # torch's result in the case dtype: the yardstick of the error ratio
    digests: list[str]  # a digest of each tensor input's storage, before any call
    native_errs: list[float] | None = None  # torch's relative error per output, once known
    # how far past the base tolerance torch's own answer goes, per output (1: within), once known
    native_stretch: list[float] | None = None
    # A limit case's: the rows `ref` and `native` are of, and the inputs at them
    sampled: limits.Sampled | None = None

    @property
    def file(self) -> Path:
        """The inputs as a torch.save file, written the first time one is asked for (on CUDA
        only compute-sanitizer's runners load files)."""
        if not self.where.exists():
            partial = self.where.with_suffix(".part")
            torch.save(self.args, partial)
            partial.replace(self.where)
        return self.where

    def lend(self) -> list[Shared | float | int | bool]:
        """The arguments for one call, tensors lent by CUDA IPC: a fresh loan per call."""
        return [lend(a) if isinstance(a, torch.Tensor) else a for a in self.args]


@dataclass
class CaseTruth:
    case: Case
    variants: dict[str, Inputs] = field(default_factory=dict)
    layout: list[TensorMeta | float | int | bool] = field(default_factory=list)


@contextlib.contextmanager
def _intra_op(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(min(n, before))
    try:
        yield
    finally:
        torch.set_num_threads(before)


# On a GPU the truths kept between candidates stay within this share of its memory, the rest
# being the candidate's and the bench's. At KernelBench's own sizes a run's cases outgrow the
# device: relu's 4096 x 393216 fp32 is 6.4 GB an input set and about 26 GB a variant with its
# float64 truth, and with every case kept and eight drawn at once the judge held 108 GB of the
# H200's 140 when its reference ran out of memory
# (evaluations/logs/h200-20261205-kernelbench-pilot).
RESIDENT_SHARE = 0.35
# A case's truth in bytes per byte its call moves (Cost.bytes: its inputs and outputs): two
# input sets, each with torch's answer and the float64 one (twice an fp32 output), and the
# float64 copies of the inputs while the reference runs.
TRUTH_PER_BYTE = 8


def estimate(spec: OpSpec, dims: dict[str, int], dtype: str) -> int:
    """A case's truth in bytes, before it is drawn: TRUTH_PER_BYTE of what its call moves."""
    try:
        return TRUTH_PER_BYTE * spec.cost(dims, dtype).bytes
    except Exception:  # noqa: BLE001 - a cost model that cannot say: measured once kept
        return 0


def too_large(spec: OpSpec, dims: dict[str, int], dtype: str, budget: int | None) -> bool:
    """Whether a case's truth is past a judge's budget (none on the CPU: never)."""
    return budget is not None and estimate(spec, dims, dtype) > budget


def _nbytes(truth: CaseTruth) -> int:
    total = 0
    for inputs in truth.variants.values():
        tensors = [a for a in inputs.args if isinstance(a, torch.Tensor)]
        total += sum(a.untyped_storage().nbytes() for a in tensors)
        for out in (inputs.ref, inputs.native):
            leaves = out if isinstance(out, (tuple, list)) else [out]
            tensors = [t for t in leaves if isinstance(t, torch.Tensor)]
            total += sum(t.untyped_storage().nbytes() for t in tensors)
    return total


def _file_stem(case_name: str) -> str:
    """A case's name as a file name: a drawn case's name spells every input's layout and outgrew
    the 255 bytes a file name may have (three transposed inputs of attention: OSError 36), so a
    long one keeps its start and a digest of the whole."""
    stem = case_name.replace("/", "-")
    if len(stem.encode()) <= 160:
        return stem
    return f"{stem[:120]}-{hashlib.sha256(stem.encode()).hexdigest()[:16]}"


def device_budget(device: str) -> int | None:
    """RESIDENT_SHARE of the GPU's memory, or KERNELGEN_TRUTH_SHARE's share where several judges
    share one GPU (scripts/gpu/verifier.sh's suite shards)."""
    if not device.startswith("cuda") or not torch.cuda.is_available():
        return None  # the CPU's cases are the interpreter's sizes (tests fake a CUDA run on it)
    share = float(os.environ.get(gpulock.TRUTH_SHARE_ENV) or RESIDENT_SHARE)
    return int(share * torch.cuda.get_device_properties(torch.device(device)).total_memory)


class Truths:
    """The run's cases, each computed the first time a candidate reaches it and kept for the
    next candidates, as many as `budget` bytes hold: past it the least recently judged are
    dropped, and drawn again from the same seed (the same values) when a candidate reaches them."""

    def __init__(self, spec: OpSpec, seed: int, device: str, folder: Path):
        self.spec, self.seed, self.device, self.folder = spec, seed, device, folder
        folder.mkdir(parents=True, exist_ok=True)
        self._cases: OrderedDict[str, CaseTruth] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._lock = threading.Lock()
        self.budget = device_budget(device)
        self.dropped = 0  # truths dropped to stay within the budget

    def prepare(
        self,
        cases: list[Case],
        threads: int = 8,
        done: Callable[[Case, CaseTruth], None] | None = None,
    ) -> None:
        """Compute what is missing, several cases at once: drawing inputs and the float64
        reference are torch work that runs outside the GIL. `done` is told of every case as it
        is ready: those computed already first, the others in the order they finish."""
        missing = [c for c in cases if c.name not in self._cases]
        if done is not None:
            for case in cases:
                if case.name in self._cases:
                    done(case, self._cases[case.name])
        if not missing:
            return
        with self._gpu("drawing truths"):
            self._draw(missing, threads, done)

    def _draw(
        self,
        missing: list[Case],
        threads: int,
        done: Callable[[Case, CaseTruth], None] | None,
    ) -> None:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        # Together only the cases that `threads` at once keep within the budget; the others
        # one at a time, each making room for itself.
        share = None if self.budget is None else self.budget // threads
        fits = {c.name: share is None or self._estimate(c) <= share for c in missing}
        together = [c for c in missing if fits[c.name]]
        alone = [c for c in missing if not fits[c.name]]
        if together:
            self._make_room(sum(self._estimate(c) for c in together))
            with _intra_op(TRUTH_INTRA_OP), ThreadPoolExecutor(min(threads, len(together))) as ex:
                futures = {ex.submit(self._compute, c): c for c in together}
                for future in as_completed(futures):
                    case, truth = futures[future], future.result()
                    self._keep(case, truth)
                    if done is not None:
                        done(case, truth)
        for case in alone:
            truth = self.get(case)
            if done is not None:
                done(case, truth)

    def get(self, case: Case) -> CaseTruth:
        with self._lock:
            if case.name in self._cases:
                self._cases.move_to_end(case.name)
                return self._cases[case.name]
        self._make_room(self._estimate(case))
        with self._gpu("drawing a truth"):
            truth = self._compute(case)
        self._keep(case, truth)
        return truth

    def _gpu(self, what: str) -> contextlib.AbstractContextManager[float]:
        """The GPU lock, shared (kernelgen/gpulock.py): the references run on the judge's GPU,
        beside other judges and never beside a timing."""
        if not self.device.startswith("cuda"):
            return contextlib.nullcontext(0.0)
        return gpulock.shared(what, self.spec.name)

    def oversized(self, case: Case) -> bool:
        """A case whose truth the budget cannot hold (a KernelBench problem at its own size:
        17 GB a call, its truth some 70 GB): drawn and judged as a limit case is, when reached,
        one judge of the host at a time (verdict.judge_limits), with one input set, and trimmed
        to the budget once judged. Several judges drawing theirs at once would run the GPU out
        of memory."""
        return case.limit is None and too_large(self.spec, dict(case.dims), case.dtype, self.budget)

    def _estimate(self, case: Case) -> int:
        return estimate(self.spec, dict(case.dims), case.dtype)

    def _keep(self, case: Case, truth: CaseTruth) -> None:
        with self._lock:
            self._cases[case.name] = truth
            self._sizes[case.name] = _nbytes(truth)

    def release(self) -> None:
        """Drop every truth and give their GPU memory back to the device: a process that outlives
        its judge (a suite shard, cold verdict after cold verdict) otherwise keeps the largest
        truths it ever drew in torch's cache, memory the next candidate's process cannot have
        (the suite's six shards on the H200 ran their candidates out of memory)."""
        with self._lock:
            self._cases.clear()
            self._sizes.clear()
        if self.device.startswith("cuda") and torch.cuda.is_available():
            torch.cuda.empty_cache()

    def trim(self) -> None:
        """Drop the least recently judged truths until the rest fit the budget, once a candidate
        is judged: a limit case's inputs (4-12 GiB) pass a judge's share when several judges
        share the GPU, and are not kept while this one waits for its next candidate."""
        self._make_room(0)

    def _make_room(self, need: int) -> None:
        if self.budget is None:
            return
        with self._lock:
            before = self.dropped
            while self._cases and sum(self._sizes.values()) + need > self.budget:
                name, _ = self._cases.popitem(last=False)
                del self._sizes[name]
                self.dropped += 1
        if self.dropped > before and torch.cuda.is_available():
            # Freed blocks cached by this process are memory the candidate's process cannot have.
            torch.cuda.empty_cache()

    def _compute(self, case: Case) -> CaseTruth:
        if case.limit is not None:
            return self._limit(case)
        truth = CaseTruth(case=case)
        stem = _file_stem(case.name)
        # A case the interpreter runs is drawn on the CPU (the same values on any device), and
        # moved with its strides and storage offsets as they are; a GPU-only one on the judge's
        # GPU (kernelgen/spec/inputs.py says why).
        where = drawn_on(case.size, self.device)
        # A case too large to keep has one input set, as a limit case has (verdict.py says
        # what its calls leave out): relu's own size held 51 GB with two.
        variants = ("a",) if self.oversized(case) else VARIANTS
        for variant in variants:
            seed = case_seed(self.seed, f"{case.name}/{variant}")
            if where == "cpu":
                args = case_inputs(self.spec, case, seed, "cpu")
            else:
                with _GPU_DRAW:
                    args = case_inputs(self.spec, case, seed, where)
                    # The draw's float64 blocks, cached: memory the candidate's process needs.
                    torch.cuda.empty_cache()
            on_device = [whole(a, self.device) if isinstance(a, torch.Tensor) else a for a in args]
            inputs = Inputs(
                args=on_device,
                where=self.folder / f"{stem}-{variant}.pt",
                ref=None,
                native=None,
                # Where the runner computes its own: on the run's device.
                digests=[storage_digest(a) for a in on_device if isinstance(a, torch.Tensor)],
            )
            if self.device == "cpu":  # the runner loads them from the file (no IPC on the CPU)
                _ = inputs.file
            # The reference runs on copies: whatever it does to its arguments, the inputs the
            # candidate gets (and their digests) are the ones drawn. One set of copies at a
            # time: the float64 ones are freed before torch's own answer takes its copies.
            with torch.no_grad():
                inputs.ref = self.spec.reference(*upcast(on_device))
                inputs.native = self.spec.reference(*copies(on_device))
            if self.device.startswith("cuda"):
                # The float64 copies and torch's copies are freed now but cached by torch, and
                # the candidate's process cannot have them: at KernelBench's avg-pool size (a 16
                # GiB input) the judge held 65.6 GiB, the input and those two caches, and the
                # runner's own 16 GiB copy of the input ran the H100 out of memory, alone on it
                # (evaluations/logs/h100-20261206-kernelbench-faster-candidates-redo-settle).
                give_back_cache(self.device)
            truth.variants[variant] = inputs
            if variant == "a":
                truth.layout = meta(args)
        return truth

    def _limit(self, case: Case) -> CaseTruth:
        """A limit case: one input set (its calls are few: verdict.py), drawn on the judge's
        device; the truth on its sampled rows (limits.py)."""
        args, sampled, ref, native = limits.truth(self.spec, case, self.seed, self.device)
        inputs = Inputs(
            args=args,
            where=self.folder / f"{_file_stem(case.name)}-a.pt",
            ref=ref,
            native=native,
            digests=[storage_digest(a) for a in args if isinstance(a, torch.Tensor)],
            sampled=sampled,
        )
        if self.device == "cpu":
            _ = inputs.file
        return CaseTruth(case=case, variants={"a": inputs}, layout=meta(args))
