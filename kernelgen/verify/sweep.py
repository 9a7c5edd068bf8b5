"""The judge's side of the autotune sweep: which config each call pins, how a call's configs are
named in a verdict, and the bound on what a sweep may cost.

The runner (configs.py) finds the candidate's autotuned kernels at load and reports each one's
declared configs (protocol.Space); a call pins configs by the names it reported, and every launch
of a pinned kernel in that call runs its pinned config, whatever the launch count or order. Each
case's four calls run a base config of each kernel; then each other config of each kernel runs
alone, one call each, so every config is judged on every case. On CPU, where the interpreter
ignores warps and stages, configs that differ only there are one program, judged once.

One kernel's config at a time, the others at the case's base, not the product of the kernels'
spaces: K1 + K2 - 2 calls more per case rather than K1 x K2 - 1. A config's meta-parameters
reach only its own kernel's launches, so a wrong config shows beside any partner; what this
leaves unseen is a pair that is wrong only together (two kernels that agree on a layout only
when neither runs its base), a coupling the candidate would have to build on purpose.
"""

from __future__ import annotations

from kernelgen.verify.checks import Failure
from kernelgen.verify.protocol import Space

# The configs of all autotuned kernels together that the judge sweeps: each one costs a call
# per case (62 interpreter cases for softmax on CPU, 117 on CUDA). Above it the candidate is
# rejected, never judged on fewer configs than it declares: the tuner would time them all.
MAX_CONFIGS = 32


def over_budget(spaces: list[Space]) -> Failure | None:
    total = sum(len(s.configs) for s in spaces)
    if total <= MAX_CONFIGS:
        return None
    each = ", ".join(f"{s.kernel}: {len(s.configs)}" for s in spaces)
    return Failure(
        "contract",
        f"{total} autotune configs ({each}): each is judged alone on every case, at most "
        f"{MAX_CONFIGS} in all; declare fewer",
    )


def configs_run(space: Space, device: str) -> list[int]:
    """The configs a sweep runs: all on CUDA; on CPU one per interpreted program (configs that
    differ only in warps or stages run alike there: the same program gives the same answer)."""
    return [
        i for i in range(len(space.configs)) if device == "cuda" or space.interpreted_as[i] == i
    ]


def case_pins(
    spaces: list[Space], device: str, index: int
) -> tuple[dict[str, int], list[dict[str, int]]]:
    """The pins of the index-th case: the base, which its four calls run (each kernel's configs
    in turn from case to case: every config gets the four calls somewhere, and the slowest one
    in the interpreter is not the one that runs four times on every case), and one call for
    each other config of each kernel, alone (the other kernels at their base)."""
    base = {}
    for s in spaces:
        run = configs_run(s, device)
        base[s.kernel] = run[index % len(run)]
    alone = [
        {**base, s.kernel: i} for s in spaces for i in configs_run(s, device) if i != base[s.kernel]
    ]
    return base, alone


def note(spaces: list[Space], pin: dict[str, int]) -> str:
    """The configs a call ran, for a failure's reason ('' for a candidate without autotune);
    a kernel not pinned runs its first."""
    return "; ".join(
        f"{s.kernel} config {i + 1} of {len(s.configs)} ({s.configs[i]})"
        for s in spaces
        for i in [pin.get(s.kernel, 0)]
    )
