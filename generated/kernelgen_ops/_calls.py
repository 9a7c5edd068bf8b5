"""The public call of an operator: a repeat call with the same key is one dictionary lookup.

Hand-written and shipped with the library. `kernelgen_ops.<op>(...)` does three things before a
kernel runs: it checks the arguments against the operator's contract (_contracts.check_<op>),
asks the dispatch table whether torch's op or the kernel takes the call (_runtime.use_torch),
and calls the operator module's launcher. Each answer depends only on what the key holds:
- the check reads types, dtypes, devices, shapes, strides, whether a gradient is wanted
  (requires_grad, and grad mode) and negated views, and scalars' values;
- the dispatch reads the mode (set_dispatch) and the dims, a function of the shapes;
- a launch plan (_plans.py) holds for the launcher's key, which the key below contains.
So the first call of a key is made in full and its answer kept: torch's op, the launcher, or
the launcher's plan. A repeat call skips the check, the dims and the lookup in the table, and
replays the plan (one allocation and one compiled launch for softmax). On the H200 the three
steps cost more than torch eager's whole call (scripts/host_overhead.py).

A call whose check raises keeps nothing, so every bad call raises again. A key is never made for
arguments of other types (tensor subclasses such as FakeTensor, lists): those calls take the full
path every time. The answer kept for a key is dropped when the launcher it was made for is no
longer the module's (a test's spy), and the mode is part of what is compared.
"""

from types import ModuleType
from typing import Any

import torch

from . import _plans, _runtime

MAX_KEYS = 256  # per operator; past that, calls of new keys take the full path, uncached
_TORCH = object()  # the answer "torch's op takes the call"
_LAUNCHER = object()  # "the launcher, called as it is" (no plan: off, refused, or CPU)
_grad_enabled = torch.is_grad_enabled


class Call:
    """kernelgen_ops.<op>'s body: the contract, the dispatch and the launcher, per key once."""

    __slots__ = ("op", "_contracts", "_module", "_answers")

    def __init__(self, op: str, contracts: ModuleType, module: ModuleType) -> None:
        # The contract's functions and the launcher are looked up by name on every call that uses
        # them, as the functions they replace did, so a test's monkeypatch of one takes effect.
        self.op, self._contracts, self._module = op, contracts, module
        # key -> (mode, launcher, replays on, answer)
        self._answers: dict[tuple, tuple[str, Any, bool, Any]] = {}

    def __call__(self, *args: Any) -> Any:
        launcher = getattr(self._module, self.op)
        key = _plans.key(args, _grad_enabled())
        if key is not None:
            kept = self._answers.get(key)
            replays = _plans.replays()
            if (
                kept is not None
                and kept[0] == _runtime._mode
                and kept[1] is launcher
                and kept[2] is replays
            ):
                answer = kept[3]
                if answer is _TORCH:
                    return getattr(self._contracts, "torch_" + self.op)(*args)
                if answer is not _LAUNCHER:
                    out = _plans.replay(answer, args)
                    if out is not _plans.NOT_REPLAYED:
                        return out
                return launcher(*args)
        return self._first(key, args, launcher)

    def _first(self, key: tuple | None, args: tuple, launcher: Any) -> Any:
        """The full call; its answer is kept for the key (when there is one and room)."""
        contracts, op = self._contracts, self.op
        getattr(contracts, "check_" + op)(*args)
        mode, replays = _runtime._mode, _plans.replays()
        keep = key is not None and len(self._answers) < MAX_KEYS
        if _runtime.use_torch(op, getattr(contracts, "dims_" + op)(*args), routed=False):
            if keep:
                self._answers[key] = (mode, launcher, replays, _TORCH)
            return getattr(contracts, "torch_" + op)(*args)
        raw = launcher.__wrapped__ if isinstance(launcher, _plans.Planned) else launcher
        namespace = vars(self._module)
        if not (keep and replays and _plans.plannable(namespace, raw)):
            if keep:
                self._answers[key] = (mode, launcher, replays, _LAUNCHER)
            return launcher(*args)
        out, plan = _plans.record(raw, namespace, args)
        self._answers[key] = (mode, launcher, replays, _LAUNCHER if plan is None else plan)
        return out

    def forget(self) -> None:
        """Drop every kept answer (a test that changes what the key does not hold)."""
        self._answers.clear()


def calls() -> list[Call]:
    """Every operator's Call, for tests and scripts that compare the two paths."""
    import kernelgen_ops

    return [v for v in vars(kernelgen_ops).values() if isinstance(v, Call)]
