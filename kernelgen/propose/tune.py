"""The `tune` proposer: no LLM. Searches the meta-parameter space the best kernel declares
(TUNE_SPACE: block sizes, num_warps, num_stages, any constexpr it lists) per shape bucket, the way
serving frameworks tune their MoE and GEMM configs, and emits one candidate whose TUNED table
carries the winner of each bucket. Configurations that fail to compile or run out of resources
are skipped. On CPU nothing can be timed: it says so, and proposes the corners of the space only
to have them verified.
"""

from __future__ import annotations

import math

from kernelgen import tuning
from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage
from kernelgen.spec import OpSpec


def _any_key(spec: OpSpec) -> str:
    # A one-entry table applies to every shape: the launcher takes the nearest key.
    return "x".join("1" for _ in spec.data.bucket) or "1"


def corners(space: dict[str, list[int]]) -> list[tuning.Config]:
    """The all-smallest and all-largest configurations: where a kernel that is right for one
    block size only would break."""
    low = {k: min(v) for k, v in space.items()}
    high = {k: max(v) for k, v in space.items()}
    return [low] if low == high else [low, high]


def tune_source(spec: OpSpec, source: str) -> Proposal | None:
    """Time every configuration of the declared space on every benchmark shape (CUDA) and
    return the source with the best configuration per bucket; None when nothing to tune."""
    from kernelgen.bench import tune_variants

    space = tuning.space(source)
    if space is None:
        return None
    configs = tuning.configs(space)
    key = _any_key(spec)
    variants = [tuning.with_tuned(source, {key: cfg}) for cfg in configs]
    result = tune_variants(spec.name, variants)
    per_bucket: dict[str, dict[int, list[float]]] = {}
    shapes = {b.name: b for b in spec.data.bench}
    for variant in result.variants:
        for row in variant.shapes:
            if row.median_us is None or row.shape not in shapes:
                continue
            bucket = spec.bucket_key(shapes[row.shape].dims)
            per_bucket.setdefault(bucket, {}).setdefault(variant.index, []).append(row.median_us)
    table: dict[str, tuning.Config] = {}
    for bucket, times in per_bucket.items():
        # A config must have run on every shape of the bucket; the geomean time picks the winner.
        complete = {i: t for i, t in times.items() if len(t) == max(map(len, times.values()))}
        best = min(complete, key=lambda i: math.fsum(math.log(x) for x in complete[i]))
        table[bucket] = configs[best]
    if not table:
        return None
    failed = sum(1 for v in result.variants if all(r.median_us is None for r in v.shapes))
    name = f"tuned {len(configs)} configs x {len(shapes)} shapes into {len(table)} buckets" + (
        f" ({failed} configs failed to compile or run)" if failed else ""
    )
    return Proposal(source=tuning.with_tuned(source, table), name=name)


class TuneProposer:
    name = "tune"
    model = None

    def __init__(self, spec: OpSpec, device: str, skip: int = 0):
        self.spec = spec
        self.device = device
        self.skip = skip  # proposals already made in an earlier session of this run
        self.usage = Usage()
        self.note: str | None = None

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        space = tuning.space(ctx.best_source)
        if space is None:
            self.note = "the best kernel declares no TUNE_SPACE: nothing to tune"
            return []
        if self.device == "cpu":
            self.note = (
                "tune on CPU cannot time (Triton's interpreter): it verified the "
                "corners of the space only; run on CUDA to tune"
            )
            key = _any_key(self.spec)
            pending = corners(space)[self.skip :][:k]
            self.skip += len(pending)
            return [
                Proposal(
                    source=tuning.with_tuned(ctx.best_source, {key: c}),
                    name=f"config {c} (verify only)",
                )
                for c in pending
            ]
        if self.skip:
            self.note = "the space was searched in an earlier round"
            return []
        self.skip = 1
        tuned = tune_source(self.spec, ctx.best_source)
        if tuned is None:
            self.note = "no configuration of the space ran"
            return []
        self.note = "the space was searched once; nothing more to try"
        return [tuned]

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None
