"""Judges sharing one GPU and host (a suite's jobs, its shards, cold verdicts side by side): the
environment of each, with its part of what a judge alone takes."""

from __future__ import annotations

import os

from kernelgen.gpulock import COMPILERS_ENV, TRUTH_SHARE_ENV
from kernelgen.verify.ahead import workers
from kernelgen.verify.truth import RESIDENT_SHARE


def judges_share(jobs: int) -> dict[str, str]:
    """The environment of one of `jobs` judges sharing this GPU and host: its part of the truths'
    share of GPU memory (KERNELGEN_TRUTH_SHARE) and of the host's compile runners
    (KERNELGEN_COMPILE_WORKERS). Cold judges side by side each with 12 compile runners and a
    third of the GPU's memory for truths ran 48 compiles on 16 cores and past the H200's memory
    at the limit cases; a judge alone gets nothing (its defaults)."""
    if jobs <= 1:
        return {}
    share = float(os.environ.get(TRUTH_SHARE_ENV) or RESIDENT_SHARE)
    return {TRUTH_SHARE_ENV: f"{share / jobs:.4f}", COMPILERS_ENV: str(max(1, workers() // jobs))}
