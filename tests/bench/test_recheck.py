"""After timing, the bench re-checks each contender's answer: times of a kernel that stopped
computing the operator are not kept."""

from __future__ import annotations

import torch

from kernelgen.bench.worker import recheck
from kernelgen.spec import load_spec


def test_recheck_flags_a_kernel_that_changed_its_answer() -> None:
    spec = load_spec("softmax")
    shape = spec.data.bench[0].model_copy(
        update={"dims": {"rows": 8, "cols": 100}, "dtype": "float32"}
    )
    sets = [[torch.randn(8, 100)]]
    bad = recheck(
        spec,
        shape,
        {
            "honest": lambda x: torch.softmax(x, -1),
            "lazy": lambda x: torch.full_like(x, 0.01),  # what a skipped kernel leaves behind
            "broken": lambda x: (_ for _ in ()).throw(RuntimeError("gone")),
            "wrong_shape": lambda x: torch.softmax(x, -1)[:4],
        },
        sets,
    )
    assert set(bad) == {"lazy", "broken", "wrong_shape"}
    assert "not torch's" in bad["lazy"] and "RuntimeError: gone" in bad["broken"]


def test_recheck_judges_by_the_operators_own_rule() -> None:
    """topk's indices are a set: the same set in another order is torch's answer, one wrong
    index is not (an elementwise check would flag the first and could miss nothing)."""
    spec = load_spec("topk")
    shape = spec.data.bench[0].model_copy(update={"dims": {"B": 4, "N": 64, "k": 8}})
    x = torch.randn(4, 64)
    sets = [[x, 8]]

    def reversed_order(x, k):
        return torch.topk(x, k).indices.flip(-1).to(torch.int32)

    def one_wrong(x, k):
        ids = torch.topk(x, k).indices.to(torch.int32)
        ids[0, 0] = torch.topk(x[0], k + 1).indices[k].to(torch.int32)
        return ids

    bad = recheck(spec, shape, {"reversed": reversed_order, "one_wrong": one_wrong}, sets)
    assert set(bad) == {"one_wrong"}


def test_recheck_flags_a_contender_that_repeats_its_first_answer() -> None:
    """Right on the first input set and not on the last (same key, other data): what a launch
    plan replaying a choice that depended on more than the key would give."""
    spec = load_spec("softmax")
    shape = spec.data.bench[0].model_copy(
        update={"dims": {"rows": 8, "cols": 100}, "dtype": "float32"}
    )
    sets = [[torch.randn(8, 100)] for _ in range(3)]
    first: list[torch.Tensor] = []

    def stale(x: torch.Tensor) -> torch.Tensor:
        if not first:
            first.append(torch.softmax(x, -1))
        return first[0].clone()

    bad = recheck(spec, shape, {"honest": lambda x: torch.softmax(x, -1), "stale": stale}, sets)
    assert set(bad) == {"stale"} and "not torch's" in bad["stale"]
