"""The tuning convention read and rewritten through the AST."""

from __future__ import annotations

import ast
from pathlib import Path

from kernelgen import tuning
from kernelgen.propose.tune import corners

SEED = (Path(__file__).resolve().parents[1] / "seeds" / "silu_and_mul.py").read_text()


def test_space_and_default_are_read() -> None:
    space = tuning.space(SEED)
    assert space is not None and set(space) == {"BLOCK_SIZE", "num_warps"}
    assert tuning.default_config(SEED) == {"BLOCK_SIZE": 1024, "num_warps": 4}


def test_configs_cover_the_product() -> None:
    configs = tuning.configs({"A": [1, 2], "B": [3, 4, 5]})
    assert len(configs) == 6 and {"A": 2, "B": 5} in configs


def test_with_tuned_rewrites_only_the_table() -> None:
    table = {"1x16384": {"BLOCK_SIZE": 2048, "num_warps": 8}}
    out = tuning.with_tuned(SEED, table)
    tree = ast.parse(out)
    node = tuning.assignment(tree, "TUNED")
    assert node is not None and ast.literal_eval(node.value) == table  # type: ignore[arg-type]
    before, after = SEED.splitlines(), out.splitlines()
    changed = [ln for ln in after if ln not in before]
    assert len(changed) == 1 and changed[0].startswith("TUNED:")
    # Rewriting again replaces the table, it does not stack a second one.
    again = tuning.with_tuned(out, {"1x1": {"BLOCK_SIZE": 256, "num_warps": 1}})
    assert again.count("TUNED") == out.count("TUNED")


def test_no_space_means_nothing_to_tune() -> None:
    assert tuning.space("TUNE_SPACE = {}\n") is None
    assert tuning.space("TUNE_SPACE = {'num_warps': []}\n") is None
    assert tuning.space("x = 1\n") is None


def test_corners_are_the_extremes() -> None:
    assert corners({"A": [4, 1, 2], "B": [8]}) == [{"A": 1, "B": 8}, {"A": 4, "B": 8}]
    assert corners({"A": [2]}) == [{"A": 2}]
