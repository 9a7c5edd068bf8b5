"""Ground truth for a run, on the judge's side: computed once per (case, seed), reused for every
candidate the run judges.

For each case: two input sets (a, b) drawn from the run's seed, saved as files the candidate's
process loads (their layouts intact: a strided view travels with its padded storage), the float64
reference and torch's own result in the case dtype, and a digest of every input storage so the
judge can tell whether a call wrote into its inputs. None of it ever enters the candidate's
process except the inputs themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelgen.inputs import case_inputs, case_seed
from kernelgen.spec import Case, OpSpec
from kernelgen.verify.protocol import TensorMeta
from kernelgen.verify.tensors import storage_digest

VARIANTS = ("a", "b")


@dataclass
class Inputs:
    file: Path
    ref: Any  # float64 reference on the upcast inputs
    native: Any  # torch's result in the case dtype: the yardstick of the error ratio
    digests: list[str]  # a digest of each tensor input's storage, before any call
    native_errs: list[float] | None = None  # torch's relative error per output, once known


@dataclass
class CaseTruth:
    case: Case
    variants: dict[str, Inputs] = field(default_factory=dict)
    layout: list[TensorMeta | float | int | bool] = field(default_factory=list)


def _upcast(args: list[Any]) -> list[Any]:
    return [
        a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args
    ]


def meta(args: list[Any]) -> list[TensorMeta | float | int | bool]:
    out: list[TensorMeta | float | int | bool] = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(
                TensorMeta(
                    shape=list(a.shape),
                    stride=list(a.stride()),
                    offset=a.storage_offset(),
                    storage=a.untyped_storage().nbytes() // max(1, a.element_size()),
                    dtype=str(a.dtype).removeprefix("torch."),
                )
            )
        else:
            out.append(a)
    return out


class Truths:
    """The run's cases, each computed the first time a candidate reaches it."""

    def __init__(self, spec: OpSpec, seed: int, device: str, folder: Path):
        self.spec, self.seed, self.device, self.folder = spec, seed, device, folder
        folder.mkdir(parents=True, exist_ok=True)
        self._cases: dict[str, CaseTruth] = {}

    def prepare(self, cases: list[Case], threads: int = 8) -> None:
        """Compute what is missing, several cases at once: drawing inputs, saving them and the
        float64 reference are torch work that runs outside the GIL."""
        from concurrent.futures import ThreadPoolExecutor

        missing = [c for c in cases if c.name not in self._cases]
        if len(missing) <= 1:
            for c in missing:
                self.get(c)
            return
        with ThreadPoolExecutor(min(threads, len(missing))) as ex:
            for case, truth in zip(missing, ex.map(self._compute, missing), strict=True):
                self._cases[case.name] = truth

    def get(self, case: Case) -> CaseTruth:
        if case.name not in self._cases:
            self._cases[case.name] = self._compute(case)
        return self._cases[case.name]

    def _compute(self, case: Case) -> CaseTruth:
        truth = CaseTruth(case=case)
        stem = case.name.replace("/", "-")
        for variant in VARIANTS:
            # Drawn on the CPU and saved from there, so the candidate's process maps them to its
            # device with their strides and storage offsets as they are.
            args = case_inputs(
                self.spec, case, case_seed(self.seed, f"{case.name}/{variant}"), "cpu"
            )
            file = self.folder / f"{stem}-{variant}.pt"
            torch.save(args, file)
            on_device = [a.to(self.device) if isinstance(a, torch.Tensor) else a for a in args]
            with torch.no_grad():
                ref = self.spec.reference(*_upcast(on_device))
                native = self.spec.reference(*on_device)
            truth.variants[variant] = Inputs(
                file=file,
                ref=ref,
                native=native,
                # Where the runner computes its own: on the run's device.
                digests=[
                    storage_digest(a, self.device) for a in args if isinstance(a, torch.Tensor)
                ],
            )
            if variant == "a":
                truth.layout = meta(args)
        return truth

    def layouts(self, cases: list[Case]) -> list[tuple[str, list[TensorMeta | float | int | bool]]]:
        """The distinct argument layouts of these cases, each with the first case that has it:
        what Triton specializes on (values never matter to a compile, so cases that differ only
        in values, or in a float scalar, share one)."""
        seen: dict[str, tuple[str, list[TensorMeta | float | int | bool]]] = {}
        for case in cases:
            layout = self.get(case).layout
            key = repr([_compile_key(m) for m in layout])
            seen.setdefault(key, (case.name, layout))
        return list(seen.values())


def _compile_key(m: TensorMeta | float | int | bool) -> object:
    # Triton specializes ints (on 1 and on divisibility by 16) but never a float's value.
    if isinstance(m, TensorMeta):
        return m.model_dump()
    return "float" if isinstance(m, float) else m
