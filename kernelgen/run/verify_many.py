"""`kernelgen verify OP FILE...`: several candidates judged at once, one worker per GPU
(`--gpus`, `--ray`; workers.py), each judging its files in sandboxes of its own. Without either,
the files are judged one after another, each exactly as `kernelgen verify OP FILE` judges it."""

from __future__ import annotations

import random
from pathlib import Path

from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import Verdict
from kernelgen.spec import load_spec


def verify_files(
    op: str,
    files: list[Path],
    *,
    device: str,
    seed: int | None = None,
    timeout_s: float | None = None,
    sanitize: bool = False,
    gpu_target: str | None = None,
    gpus: str | None = None,
    ray: str | None = None,
) -> list[Verdict]:
    """One verdict per file, in the order given."""
    from kernelgen.verify import verify_candidate

    load_spec(op)  # unknown operator -> UsageError listing the known ones
    for f in files:
        if not f.is_file():
            raise UsageError(f"{f}: no such file")
    if gpus is None and ray is None:
        return [
            verify_candidate(
                op,
                f,
                device=device,
                seed=seed,
                timeout_s=timeout_s,
                sanitize=sanitize,
                gpu_target=gpu_target,
            )
            for f in files
        ]
    from kernelgen import paths
    from kernelgen.run.station import StationConfig
    from kernelgen.run.workers import WorkerLost, open_pool

    config = StationConfig(
        op=op,
        device=device,  # type: ignore[arg-type]
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        root=str(paths.root()),
        gpu_target=gpu_target,
        deadline_s=timeout_s,
        sanitize=sanitize,
        calibrate=False,  # as a lone verify: the deadlines at their caps
    )
    pool = open_pool(config, gpus=gpus, ray=ray)
    try:
        futures = [
            pool.submit(
                pool.job(
                    "judge",
                    candidate=f"{i}-{f.stem}",
                    source=f.read_text(errors="replace"),
                    filename=f.name,
                )
            )
            for i, f in enumerate(files)
        ]
        verdicts: list[Verdict] = []
        judged_as: dict[str, str] = {}  # the worker's copy -> the user's file
        for f, future in zip(files, futures, strict=True):
            try:
                outcome = future.result()
            except WorkerLost as e:
                raise KernelgenError(f"{f}: {e}") from None
            if outcome.error is not None or outcome.verdict is None:
                raise KernelgenError(f"worker {outcome.worker}: {outcome.error}")
            judged_as[outcome.verdict.candidate] = str(f)
            verdicts.append(outcome.verdict.model_copy(update={"candidate": str(f)}))
    finally:
        pool.close()
    return [
        v.model_copy(update={"duplicate_of": judged_as.get(v.duplicate_of, v.duplicate_of)})
        if v.duplicate_of
        else v
        for v in verdicts
    ]
