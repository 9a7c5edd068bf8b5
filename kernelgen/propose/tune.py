"""The `tune` proposer: no LLM. Searches the meta-parameter space the best kernel declares
(TUNE_SPACE: block sizes, num_warps, num_stages, any constexpr it lists) per shape bucket, the way
serving frameworks tune their MoE and GEMM configs, and emits one candidate whose TUNED table
carries the winner of each bucket. Configurations that fail to compile or run out of resources
are skipped.

The kernel as it is (the baseline: the current best, its own TUNED table or DEFAULT_CONFIG) is
timed among the configurations, in the same rounds, by the bench protocol (CUDA-graph time for
kernels under ~50 us). A configuration wins a bucket only when it beats the baseline on every
shape of the bucket by more than the noise of that comparison; a bucket nothing wins keeps the
baseline's configuration, and when no bucket changes nothing is proposed: the tuner never offers
a table that is slower than what it was given on any benchmark shape it measured.

On CPU nothing can be timed: it says so, and proposes the corners of the space only to have them
verified.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from kernelgen import syntax, tuning
from kernelgen.propose.base import Context, Proposal
from kernelgen.records import Usage
from kernelgen.spec import OpSpec

if TYPE_CHECKING:
    from kernelgen.bench.worker import TuneResult, VariantShape

# Times variant sources (baseline first) on every bench shape: bench.tune_variants on this
# host's GPU, or loop_pool.tuner's spread over a pool's workers.
Timer = Callable[[str, list[str]], "TuneResult"]


def _any_key(spec: OpSpec) -> str:
    # A one-entry table applies to every shape: the launcher takes the nearest key.
    return "x".join("1" for _ in spec.data.bucket) or "1"


def corners(space: dict[str, list[int]]) -> list[tuning.Config]:
    """The all-smallest and all-largest configurations: where a kernel that is right for one
    block size only would break."""
    low = {k: min(v) for k, v in space.items()}
    high = {k: max(v) for k, v in space.items()}
    return [low] if low == high else [low, high]


def _tuned_table(source: str) -> dict[str, tuning.Config] | None:
    node = tuning.assignment(syntax.parse(source), "TUNED")
    if node is None or node.value is None:
        return None
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def resolved_config(source: str, bucket: str) -> tuning.Config | None:
    """The configuration `source` runs for a bucket key, by the convention of its launcher
    (tuning.py): DEFAULT_CONFIG while TUNED is empty, else the key nearest in log2 space (the
    first of equals, as min() over the table takes it). None when the module does not say."""
    table = _tuned_table(source)
    if not table:
        return tuning.default_config(source)
    want = [math.log2(int(d)) for d in bucket.split("x")]

    def distance(key: str) -> float:
        have = [math.log2(int(k)) for k in key.split("x")]
        return sum(abs(h - w) for h, w in zip(have, want, strict=True))

    try:
        return table[min(table, key=distance)]
    except (ValueError, TypeError):  # a key that is not "<int>x<int>": not the convention
        return None


class Search(BaseModel):
    """What a search found: the proposal, if any, and a line on why (for the proposer's note)."""

    model_config = ConfigDict(extra="forbid")

    proposal: Proposal | None
    note: str


def _baseline_time(row: VariantShape, base_row: VariantShape | None) -> tuple[float | None, float]:
    """The baseline's time and spread to hold a variant's row against: from the variant's own
    process and rounds when it has one, else the baseline's row (another process, after a
    crash split the variants)."""
    if row.baseline_us is not None:
        return row.baseline_us, row.baseline_spread or 0.0
    if base_row is not None and base_row.median_us is not None:
        return base_row.median_us, base_row.spread or 0.0
    return None, 0.0


def pick(
    result: TuneResult, spec: OpSpec, n_configs: int, baseline_index: int = 0
) -> dict[str, int | None]:
    """Per bucket, the index of the variant that beats the baseline on every shape of the bucket
    by more than the noise there (max of the two spreads) and has the lowest geomean time among
    those that do; None when none does. Variants are numbered as `result` numbers them."""
    rows = {v.index: {r.shape: r for r in v.shapes} for v in result.variants}
    base_rows = rows.get(baseline_index, {})
    buckets: dict[str, list[str]] = {}
    for b in spec.data.bench:
        buckets.setdefault(spec.bucket_key(b.dims), []).append(b.name)
    chosen: dict[str, int | None] = {}
    for bucket, names in buckets.items():
        winners: list[tuple[float, int]] = []
        for i in range(n_configs + 1):
            if i == baseline_index:
                continue
            logs = []
            for n in names:
                row = rows.get(i, {}).get(n)
                if row is None or row.median_us is None:
                    break
                base_us, base_spread = _baseline_time(row, base_rows.get(n))
                noise = max(row.spread or 0.0, base_spread)
                if base_us is None or row.median_us * (1.0 + noise) >= base_us:
                    break  # no time to hold it against, or not faster beyond the noise
                logs.append(math.log(row.median_us))
            else:
                winners.append((math.fsum(logs), i))
        chosen[bucket] = min(winners)[1] if winners else None
    return chosen


def search(
    spec: OpSpec, source: str, baseline: str | None = None, timer: Timer | None = None
) -> Search:
    """Time every configuration of the declared space on every benchmark shape (CUDA), with
    `baseline` (default: `source` as it is) among them, and propose `source` with the winner of
    each bucket; a bucket without a winner keeps the baseline's configuration. `timer` times
    the sources (default: this host's GPU)."""
    space = tuning.space(source)
    if space is None:
        return Search(proposal=None, note="the kernel declares no TUNE_SPACE: nothing to tune")
    base = source if baseline is None else baseline
    configs = tuning.configs(space)
    key = _any_key(spec)
    variants = [tuning.with_tuned(source, {key: cfg}) for cfg in configs]
    # The baseline is source 0, so config j is source j + 1.
    if timer is None:
        from kernelgen.bench import tune_variants

        def timer(op: str, sources: list[str]) -> TuneResult:
            return tune_variants(op, sources, baseline=0)

    result = timer(spec.name, [base, *variants])
    chosen = pick(result, spec, len(configs))
    failed = sum(
        1 for v in result.variants if v.index > 0 and all(r.median_us is None for r in v.shapes)
    )
    if failed == len(configs):
        return Search(proposal=None, note="no configuration of the space ran")
    table: dict[str, tuning.Config] = {}
    changed = 0
    allowed = set(space) | set(tuning.default_config(source) or {})
    for bucket, winner in chosen.items():
        own = resolved_config(base, bucket)
        if winner is not None and configs[winner - 1] != own:
            table[bucket] = configs[winner - 1]
            changed += 1
        elif own is not None and set(own) <= allowed:
            table[bucket] = own
        else:
            # Nothing beat the baseline here and its configuration cannot be written into this
            # module's table: any table would move this bucket to another configuration.
            return Search(
                proposal=None,
                note=f"no configuration beat the current one on bucket {bucket}, whose "
                "configuration the tuner cannot read back",
            )
    if not changed:
        return Search(
            proposal=None,
            note=f"no configuration of {len(configs)} beat the current one beyond the noise on "
            "every shape of any bucket",
        )
    name = (
        f"tuned {len(configs)} configs x {len(spec.data.bench)} shapes: {changed} of "
        f"{len(table)} buckets changed, the rest keep the current config"
        + (f" ({failed} configs failed to compile or run)" if failed else "")
    )
    return Search(
        proposal=Proposal(source=tuning.with_tuned(source, table), name=name),
        note="the space was searched once; nothing more to try",
    )


def tune_source(
    spec: OpSpec, source: str, baseline: str | None = None, timer: Timer | None = None
) -> Proposal | None:
    """`search`'s proposal: None when nothing to tune, nothing ran, or nothing beat the
    baseline (default: `source` as it is) in any bucket."""
    return search(spec, source, baseline, timer).proposal


class TuneProposer:
    name = "tune"
    model = None

    def __init__(self, spec: OpSpec, device: str, skip: int = 0, timer: Timer | None = None):
        self.spec = spec
        self.device = device
        self.timer = timer  # a pool's (--gpus, --ray): the search spread over its workers
        self.skip = skip  # proposals this run made before it was resumed
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
        found = search(self.spec, ctx.best_source, timer=self.timer)
        self.note = found.note
        return [found.proposal] if found.proposal is not None else []

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        return None
