"""Autotuned candidates are judged config by config: each launch runs the next config in turn
(never the timing path), and a compile-ahead launch compiles every config."""

from __future__ import annotations

from kernelgen.verify import configs, interpreter


class _FakeTuner:
    arg_names: list[str] = []

    def __init__(self, configs: list[str], prune: str | None = None):
        self.configs = configs
        self.prune = prune
        self.ran: list[list[str]] = []

    def prune_configs(self, kwargs: dict) -> list[str]:
        return [c for c in self.configs if c != self.prune]

    def run(self, *args: object, **kwargs: object) -> str:
        self.ran.append(list(self.configs))
        return self.configs[0]


def test_each_launch_runs_the_next_config() -> None:
    tuner = _FakeTuner(["a", "b", "c"])
    run = configs.one_by_one(_FakeTuner.run, compile_all=False)
    picked = [run(tuner) for _ in range(4)]
    assert picked == ["a", "b", "c", "a"]
    assert all(len(r) == 1 for r in tuner.ran)  # never the do_bench path of several configs
    assert tuner.configs == ["a", "b", "c"]  # restored after each call


def test_compile_ahead_compiles_every_config() -> None:
    tuner = _FakeTuner(["a", "b", "c"])
    configs.one_by_one(_FakeTuner.run, compile_all=True)(tuner)
    assert tuner.ran == [["a"], ["b"], ["c"]]
    assert tuner.configs == ["a", "b", "c"]


def test_configs_the_kernel_prunes_are_never_run() -> None:
    tuner = _FakeTuner(["a", "b", "c"], prune="b")
    run = configs.one_by_one(_FakeTuner.run, compile_all=False)
    assert [run(tuner) for _ in range(3)] == ["a", "c", "a"]


def test_single_config_untouched() -> None:
    tuner = _FakeTuner(["only"])
    assert configs.one_by_one(_FakeTuner.run, compile_all=False)(tuner) == "only"


def test_stand_in_device_is_the_h200() -> None:
    assert interpreter.H200.multi_processor_count == 132
    assert interpreter.H200.major == 9
