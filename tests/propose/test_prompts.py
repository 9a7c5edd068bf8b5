"""The llm proposer's prompt states the candidate rules from where the verifier keeps them, and the
software the candidates are judged with from the run, not from text that can go stale."""

from __future__ import annotations

from pathlib import Path

import torch
import triton

from kernelgen.propose.base import Context
from kernelgen.propose.llm import render_prompt
from kernelgen.verify.allowlist import MODULES

ROOT = Path(__file__).parents[2]


def make_ctx(**overrides: object) -> Context:
    seed = (ROOT / "seeds" / "softmax.py").read_text()
    fields: dict[str, object] = {
        "op": "softmax",
        "round": 1,
        "device": "cuda",
        "spec": "softmax over the last dimension",
        "reference_source": (ROOT / "references" / "softmax.py").read_text(),
        "seed_source": seed,
        "best_source": seed,
        "best_id": None,
        "hardware": "NVIDIA H200",
    }
    fields.update(overrides)
    return Context.model_validate(fields)


def _rule(system: str, number: int) -> str:
    start = system.index(f"\n{number}. ")
    return system[start : system.index(f"\n{number + 1}. ", start)]


def test_the_import_rule_is_the_verifiers_allowlist() -> None:
    system = render_prompt(make_ctx())[0].content
    rule = " ".join(_rule(system, 4).split())
    for module in MODULES:
        assert f"`{module}`" in rule, module
    # Every module named in the rule is one the verifier lets through: nothing more, nothing less.
    named = {part.split("`")[1] for part in rule.split(", ") if "`" in part}
    assert named == set(MODULES)
    assert "allowlist" in rule and "never the reference" in rule


def test_versions_are_the_runs_not_fixed_text() -> None:
    judged = "torch 2.99.0+cu999, Triton 9.9.9"
    system = render_prompt(make_ctx(software=judged))[0].content
    assert f"judged\nwith {judged}." in system
    assert "2.11" not in system and "3.6" not in system
    # A context from before the field (a stored replay): this process's versions.
    system = render_prompt(make_ctx())[0].content
    assert f"torch {torch.__version__}, Triton {triton.__version__}" in system
