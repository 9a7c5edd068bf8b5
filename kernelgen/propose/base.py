"""The one protocol every proposer follows, and the context the loop gives it each round."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from kernelgen.records import CompileFacts, ShapeTiming, Transcript, Usage


class HistoryItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    parent: str | None
    status: str
    category: str | None = None
    reason: str | None = None
    speedup: float | None = None


class Context(BaseModel):
    """Everything a proposer may look at when it writes the next candidates."""

    model_config = ConfigDict(extra="forbid")

    op: str
    round: int
    device: str
    spec: str = Field(description="the operator's contract, rendered as text")
    reference_source: str
    seed_source: str
    best_source: str
    best_id: str | None = Field(description="None while the seed is the best")
    timings: list[ShapeTiming] = Field(default_factory=list, description="the best's, per shape")
    compile: list[CompileFacts] = Field(default_factory=list)
    history: list[HistoryItem] = Field(default_factory=list)
    last_failure: str | None = Field(None, description="the latest rejection, in detail")
    profile: str | None = Field(
        None, description="Nsight Compute's summary of the best at its worst shape, if profiled"
    )
    hardware: str
    software: str | None = Field(
        None,
        description="the torch and Triton versions the candidates are judged with, e.g. "
        "'torch 2.11.0+cu130, Triton 3.6.0' (the run's environment)",
    )


class Proposal(BaseModel):
    """One candidate as proposed: its source, or None when the reply held no code."""

    model_config = ConfigDict(extra="forbid")

    source: str | None
    transcript: Transcript | None = None
    name: str | None = Field(None, description="where it came from (file name, tuned bucket)")
    error: str | None = Field(None, description="why there is no source")


class Proposer(Protocol):
    name: str
    model: str | None
    usage: Usage

    def propose(self, ctx: Context, k: int) -> list[Proposal]:
        """Up to k new candidates; an empty list means the proposer has nothing more."""
        ...

    def repair(self, ctx: Context, failed: Proposal, failure: str) -> Proposal | None:
        """A fix for a rejected candidate given its failure text; None when it cannot."""
        ...
