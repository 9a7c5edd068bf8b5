"""Judges sharing one GPU and host (a suite's jobs, its shards, cold verdicts side by side): the
environment of each, with its part of what a judge alone takes."""

from __future__ import annotations

import os

from kernelgen.gpulock import COMPILERS_ENV, LOCK_ENV, TRUTH_SHARE_ENV, host_lock
from kernelgen.verify.ahead import workers
from kernelgen.verify.truth import RESIDENT_SHARE


def judges_share(jobs: int) -> dict[str, str]:
    """The environment of one of `jobs` judges sharing this GPU and host: its part of the truths'
    share of GPU memory (KERNELGEN_TRUTH_SHARE) and of the host's compile runners
    (KERNELGEN_COMPILE_WORKERS), and the host's GPU lock (KERNELGEN_GPU_LOCK, the one named
    already or gpulock.host_lock()), through which one judge at a time holds a limit case.
    Six suite shards with a judge's defaults ran the H200 out of memory at the limit cases
    (evaluations/logs/h200-20261205-router-gemm-block-sums-cold-suite), four cold judges drawing
    them at once an H100 (evaluations/logs/h100-20261205-sparse-attn-promote-cold-verdicts), and
    four cold judges would each start 12 compile runners on its 16 cores. A judge alone gets
    nothing: its defaults."""
    if jobs <= 1:
        return {}
    share = float(os.environ.get(TRUTH_SHARE_ENV) or RESIDENT_SHARE)
    return {
        TRUTH_SHARE_ENV: f"{share / jobs:.4f}",
        COMPILERS_ENV: str(max(1, workers() // jobs)),
        LOCK_ENV: os.environ.get(LOCK_ENV) or str(host_lock()),
    }
