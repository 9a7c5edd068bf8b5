"""The public call of an operator: a repeat call with the same key is one dictionary lookup.

Hand-written and shipped with the library. `kernelgen_ops.<op>(...)` does three things before a
kernel runs: it checks the arguments against the operator's contract (_contracts.check_<op>),
asks the dispatch table whether torch's op or the kernel takes the call (_runtime.use_torch),
and calls the operator module's launcher. Each answer depends only on what the key holds:
- the check reads types, dtypes, devices, shapes, strides, whether a gradient is wanted
  (requires_grad, and grad mode) and negated views, and scalars' values;
- the dispatch reads the mode (set_dispatch) and the dims, a function of the shapes;
- a launch plan (_plans.py) holds for the launcher's key, which the key below contains (the
  current device included, where the process sees more than one).
So the first call of a key is made in full and its answer kept: torch's op, the launcher, or
the launcher's plan. A repeat call skips the check, the dims and the lookup in the table, and
replays the plan (one allocation and one compiled launch for softmax).

A repeat call is all host time at decode sizes, where [H] holds the library to torch eager's
host time + 2 us, and on the H200's host every Python step counts (a tensor's .shape costs 0.13
us there; scripts/host_floor.py). So the repeat path is a function generated per pattern of
argument kinds (tensor or scalar per position): the key is one tuple expression over the
arguments, the answer one lookup, and a hit calls what it kept with no loop, no list and no
further frame of this module. The public function calls `Call.fast`, the function generated for
the first pattern seen; a call of another pattern goes through `Call.__call__`, which finds (or
generates) the function for its own.

A call whose check raises keeps nothing, so every bad call raises again. A key is never made for
arguments of other types (tensor subclasses such as FakeTensor, lists): those calls take the full
path every time. The answer kept for a key is dropped when the launcher it was made for is no
longer the module's (a test's spy), and the mode is part of what is compared.
"""

from types import ModuleType
from typing import Any

import torch

from . import _launch, _plans, _runtime

MAX_KEYS = 256  # per operator; past that, calls of new keys take the full path, uncached
MAX_PATTERNS = 8  # per operator: kinds of arguments with a generated function of their own
_TORCH = object()  # the answer "torch's op takes the call"
_LAUNCHER = object()  # "the launcher, called as it is" (no plan: off, refused, or CPU)
_TENSORS = (torch.Tensor, torch.nn.Parameter)  # a Parameter is a plain tensor here
_SCALARS = frozenset(_plans._SCALARS)

# What a key holds per argument: a tensor's layout and what the contract reads of it; a
# scalar's type (1, 1.0 and True are equal keys otherwise) and value.
_TENSOR_PARTS = (
    "{a}.shape, {a}.stride(), {a}.dtype, {a}.device, {a}.data_ptr() & 15, "
    "{a}.requires_grad, {a}.is_neg()"
)
_SCALAR_PARTS = "type({a}), {a}"


def _kinds(args: tuple) -> str | None:
    """'T' per tensor and 'S' per scalar argument; None where a key cannot be made."""
    kinds = []
    for a in args:
        kind = type(a)
        if kind in _TENSORS:
            kinds.append("T")
        elif kind in _SCALARS:
            kinds.append("S")
        else:
            return None
    return "".join(kinds)


def _generate(call: "Call", kinds: str) -> Any:
    """The repeat path for arguments of these kinds (see the module's docstring); its text is
    kept as the function's `source`."""
    names = [f"a{i}" for i in range(len(kinds))]
    params = ", ".join(names)
    guards = " and ".join(
        f"(type({a}) is _T or type({a}) is _P)" if k == "T" else f"type({a}) in _S"
        for a, k in zip(names, kinds, strict=True)
    )
    parts = [repr(kinds), "_grad()"]
    if not _launch.one_device():  # a plan launches on the device current when it was made
        parts.append("_launch._current_device()")
    for a, k in zip(names, kinds, strict=True):
        parts.append((_TENSOR_PARTS if k == "T" else _SCALAR_PARTS).format(a=a))
    one = f"({params},)" if params else "()"  # the arguments as the tuple _first takes
    source = f"""def {call.op}({params}):
    if {guards or "True"}:
        key = ({", ".join(parts)})
        kept = answers.get(key)
        if kept is not None and kept[0] == _runtime._mode and kept[1] is _module.{call.op}:
            if kept[3] is _TORCH:
                return kept[4]({params})
            if kept[2] is _replays():
                if kept[3] is _LAUNCHER:
                    return kept[1]({params})
                out = kept[4]({one})
                if out is not _NOT:
                    return out
                return kept[1]({params})
        return first(key, {one})
    return call({params})
"""
    scope = {
        "_T": _TENSORS[0],
        "_P": _TENSORS[1],
        "_S": _SCALARS,
        "_grad": torch.is_grad_enabled,
        "_launch": _launch,
        "_runtime": _runtime,
        "_module": call._module,
        "_replays": _plans.replays,
        "_TORCH": _TORCH,
        "_LAUNCHER": _LAUNCHER,
        "_NOT": _plans.NOT_REPLAYED,
        "answers": call._answers,
        "first": call._first,
        "call": call,
    }
    exec(compile(source, f"<kernelgen_ops {call.op} call>", "exec"), scope)
    fn = scope[call.op]
    fn.source = source
    return fn


class Call:
    """kernelgen_ops.<op>'s body: the contract, the dispatch and the launcher, per key once."""

    __slots__ = ("op", "_contracts", "_module", "_answers", "_patterns", "fast")

    def __init__(self, op: str, contracts: ModuleType, module: ModuleType) -> None:
        # The contract's functions and the launcher are looked up by name when a key is first
        # answered, and the launcher again on every repeat, so a test's monkeypatch of one
        # takes effect.
        self.op, self._contracts, self._module = op, contracts, module
        # key -> (mode, launcher, replays on, answer, what a repeat calls: torch's op or the
        # plan's replay; None for the launcher itself)
        self._answers: dict[tuple, tuple[str, Any, bool, Any, Any]] = {}
        self._patterns: dict[str, Any] = {}  # kinds -> its generated repeat path
        self.fast: Any = self  # the first pattern's repeat path, once a call has shown it

    def __call__(self, *args: Any) -> Any:
        kinds = _kinds(args)
        if kinds is None:
            return self._first(None, args)
        path = self._patterns.get(kinds)
        if path is None:
            if len(self._patterns) >= MAX_PATTERNS:
                return self._first(None, args)
            path = self._patterns[kinds] = _generate(self, kinds)
            if self.fast is self:
                self.fast = path
        return path(*args)

    def _first(self, key: tuple | None, args: tuple) -> Any:
        """The full call; its answer is kept for the key (when there is one and room)."""
        contracts, op = self._contracts, self.op
        launcher = getattr(self._module, op)
        getattr(contracts, "check_" + op)(*args)
        mode, replays = _runtime._mode, _plans.replays()
        keep = key is not None and len(self._answers) < MAX_KEYS
        if _runtime.use_torch(op, getattr(contracts, "dims_" + op)(*args), routed=False):
            torch_op = getattr(contracts, "torch_" + op)
            if keep:
                self._answers[key] = (mode, launcher, replays, _TORCH, torch_op)
            return torch_op(*args)
        raw = launcher.__wrapped__ if isinstance(launcher, _plans.Planned) else launcher
        namespace = vars(self._module)
        if not (keep and replays and _plans.plannable(namespace, raw)):
            if keep:
                self._answers[key] = (mode, launcher, replays, _LAUNCHER, None)
            return launcher(*args)
        out, plan = _plans.record(raw, namespace, args)
        if plan is None:
            self._answers[key] = (mode, launcher, replays, _LAUNCHER, None)
        else:
            self._answers[key] = (mode, launcher, replays, plan, plan.go)
        return out

    def forget(self) -> None:
        """Drop every kept answer (a test that changes what the key does not hold)."""
        self._answers.clear()


def calls() -> list[Call]:
    """Every operator's Call, for tests and scripts that compare the two paths."""
    import kernelgen_ops

    return [v for v in vars(kernelgen_ops).values() if isinstance(v, Call)]
