"""Autotuned candidates, judged config by config.

`@triton.autotune` picks a config by timing them all, once per key; a kernel right for the config
that wins here and wrong for another would pass a verifier that lets the autotuner choose. So
the judge chooses: at load, every autotuned kernel of the candidate is found (at module level,
under any chain of `triton.heuristics` and `triton.autotune` wrappers) and named, and each call
says which config each kernel runs: every launch of a pinned kernel in that call runs its pinned
config, every launch of any other its first (never the timing path: the judge needs every
config's answer, not the fastest). The judge pins each config alone on every case (verdict.py),
so what a config computes cannot depend on which launch of a call it lands on, nor on how many
launches came before.

An autotuner the load did not find, or whose pruning returns a config it does not declare,
cannot be swept: its launch raises a ContractError. When the runner compiles ahead, a launch
compiles every config that launch may run. Installed in the candidate's sandboxed process only,
before the candidate is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kernelgen.verify.protocol import Space


class ContractError(Exception):
    """What the judge cannot sweep (its name is the contract category's: checks.classify)."""


# The candidate's autotuned kernels by id, with their names; the objects are kept so that no id
# is reused while the candidate is held. Each runner holds one candidate.
_tuners: dict[int, tuple[str, Any]] = {}
# This call's choice: kernel name -> index of the config every launch of it runs.
_pins: dict[str, int] = {}


def describe(config: Any) -> str:
    """A config as its author wrote it: meta-parameters, then warps and stages."""
    parts = [f"{k}={v}" for k, v in config.kwargs.items()]
    parts += [f"num_warps={config.num_warps}", f"num_stages={config.num_stages}"]
    if config.num_ctas != 1:
        parts.append(f"num_ctas={config.num_ctas}")
    if config.maxnreg is not None:
        parts.append(f"maxnreg={config.maxnreg}")
    return ", ".join(parts)


def find(module: Any) -> dict[str, Any]:
    """Every autotuner of more than one config the module holds, named by where it is: its
    module-level name, with `.fn` per wrapper it sits inside (`k` for autotune(heuristics(jit))
    and for autotune(jit), `k.fn` for heuristics(autotune(jit)))."""
    from triton.runtime.autotuner import Autotuner, Heuristics

    found: dict[str, Any] = {}
    seen: set[int] = set()
    for name, value in vars(module).items():
        path, obj = name, value
        while isinstance(obj, (Autotuner, Heuristics)) and id(obj) not in seen:
            seen.add(id(obj))
            if isinstance(obj, Autotuner) and len(obj.configs) > 1:
                found[path] = obj
            path, obj = f"{path}.fn", obj.fn
    return found


def register(module: Any) -> list[Space]:
    """Find the loaded candidate's autotuned kernels; their spaces, for the judge to sweep."""
    _tuners.clear()
    found = find(module)
    for name, tuner in found.items():
        _tuners[id(tuner)] = (name, tuner)
    return [
        Space(
            kernel=name,
            configs=[describe(c) for c in tuner.configs],
            interpreted_as=interpreted_as(tuner),
        )
        for name, tuner in found.items()
    ]


def interpreted_as(tuner: Any) -> list[int]:
    """For each config, the first one the interpreter runs alike. It drops the launch options
    (warps, stages, CTAs, registers) that are not the kernel's own parameters, so configs that
    differ only there run one program on CPU; unless a heuristic (or another wrapper) sits
    between the autotuner and the kernel, since it sees those options and may turn them into
    meta-parameters. A config's pre_hook runs Python of its own: such a config is its own."""
    import inspect

    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if not isinstance(tuner.fn, (JITFunction, InterpretedFunction)):
        return list(range(len(tuner.configs)))
    params = set(inspect.signature(tuner.fn.fn).parameters)
    first: dict[str, int] = {}
    alike = []
    for i, config in enumerate(tuner.configs):
        kept = {k: v for k, v in config.all_kwargs().items() if k in config.kwargs or k in params}
        key = repr((sorted(kept.items()), None if config.pre_hook is None else i))
        alike.append(first.setdefault(key, i))
    return alike


@contextmanager
def pinned(pins: dict[str, int]) -> Iterator[None]:
    """For one call: the named kernels run the given configs, every other one its first."""
    names = {name: len(t.configs) for name, t in _tuners.values()}
    for name, index in pins.items():
        if not 0 <= index < names.get(name, 0):
            raise ValueError(f"the judge pinned config {index} of {name!r}, which has none such")
    _pins.clear()
    _pins.update(pins)
    try:
        yield
    finally:
        _pins.clear()


def install(compile_all: bool) -> None:
    from triton.runtime import autotuner

    autotuner.Autotuner.run = sweep(autotuner.Autotuner.run, compile_all)  # type: ignore[method-assign]


def sweep(run: Any, compile_all: bool) -> Any:
    """Wrap an Autotuner's run: the pinned config, or every config when compiling."""

    def judged(self: Any, *args: Any, **kwargs: Any) -> Any:
        configs = self.configs
        if len(configs) <= 1:
            return run(self, *args, **kwargs)
        # The configs this launch would choose among: an honest kernel may prune its space
        # per shape (early_config_prune), and a config it prunes away is never run by it.
        self.nargs = dict(zip(self.arg_names, args, strict=False))  # as Autotuner.run does
        try:
            allowed = list(self.prune_configs(kwargs))
        finally:
            self.nargs = None
        picks = allowed if compile_all else [_choose(self, allowed)]
        result = None
        try:
            for config in picks:
                self.configs = [config]
                result = run(self, *args, **kwargs)
        finally:
            self.configs = configs
        return result

    return judged


def _choose(tuner: Any, allowed: list[Any]) -> Any:
    """This launch's config: the pinned one, the first when none is pinned; where pruning left
    it out, the first that pruning kept (the kernel never runs it on this launch)."""
    held = _tuners.get(id(tuner))
    if held is None:
        raise ContractError(
            f"an autotuned kernel ({_name(tuner)}) that is not a module-level kernel of the "
            "candidate: the judge cannot run each of its configs"
        )
    name, _ = held
    stray = [c for c in allowed if c not in tuner.configs]
    if stray:
        raise ContractError(
            f"{name}: its config pruning returned a config it does not declare "
            f"({describe(stray[0])}); the judge runs each declared config, so pruning may "
            "only choose among them"
        )
    want = tuner.configs[_pins.get(name, 0)]
    return want if want in allowed else allowed[0]


def _name(tuner: Any) -> str:
    fn = getattr(tuner, "base_fn", None)
    return getattr(fn, "__name__", type(tuner).__name__)
