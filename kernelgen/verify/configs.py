"""Autotuned candidates, judged config by config.

`@triton.autotune` picks a config by timing them all, once per key; a kernel right for the config
that wins here and wrong for another would pass a verifier that lets the autotuner choose. While a
candidate is judged, each launch of an autotuned kernel runs the next of its configs in turn (no
timing: the judge needs every config's answer, not the fastest), and the judge makes at least as
many calls as the kernel has configs. When the runner compiles ahead, a launch compiles every
config. Installed in the candidate's sandboxed process only, before the candidate is imported.
"""

from __future__ import annotations

from typing import Any


def largest_space(module: Any) -> int:
    """The most configs of any autotuned kernel the module defines (1 when none is)."""
    from triton.runtime.autotuner import Autotuner

    sizes = [len(v.configs) for v in vars(module).values() if isinstance(v, Autotuner)]
    return max(sizes, default=1)


def install(compile_all: bool) -> None:
    from triton.runtime import autotuner

    autotuner.Autotuner.run = one_by_one(autotuner.Autotuner.run, compile_all)  # type: ignore[method-assign]


def one_by_one(run: Any, compile_all: bool) -> Any:
    """Wrap an Autotuner's run: the next config per launch, or every config when compiling."""

    def one_config(self: Any, *args: Any, **kwargs: Any) -> Any:
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
        if compile_all:
            picks = allowed
        else:
            turn = getattr(self, "_kernelgen_turn", 0)
            self._kernelgen_turn = turn + 1
            picks = [allowed[turn % len(allowed)]]
        result = None
        try:
            for config in picks:
                self.configs = [config]
                result = run(self, *args, **kwargs)
        finally:
            self.configs = configs
        return result

    return one_config
