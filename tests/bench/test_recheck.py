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
