"""The published figures a KernelBench table is read against, each with its conditions as the
project's issue that brought KernelBench in states them. Where it states none, the page says so
rather than guess one."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

NOT_STATED = "not stated"


class Published(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    who: str
    figure: str = Field(description="the figure, as published")
    scope: str = Field(description="what it was measured on")
    system: str = Field(description="what produced the kernels")
    gpu: str = NOT_STATED
    dtype: str = NOT_STATED
    trials: str = NOT_STATED
    # The figure as a number the plots can draw beside the suite's: a speedup, or the fraction
    # faster than 1x (fast_1), and the baseline where the issue names it.
    label: str = Field("", description="the figure in a few words, for the plots")
    speedup: float | None = None
    fast_1: float | None = None
    against: Literal["eager", "compile"] | None = None


FIGURES: tuple[Published, ...] = (
    Published(
        who="KernelBench paper",
        figure="match PyTorch eager in fewer than 20% of cases (fast_1 against eager < 0.2)",
        scope="KernelBench (250 PyTorch problems; level 1: 100 single operators, level 2: 100 "
        "fusions)",
        system="frontier models, one shot",
        dtype="as the problems give them (float32 mostly)",
        trials="KernelBench's check: five random trials at atol = rtol = 1e-2",
        label="KernelBench paper, one shot: < 20% vs eager",
        fast_1=0.2,
        against="eager",
    ),
    Published(
        who="METR",
        figure="an average 1.8x",
        scope="a filtered KernelBench",
        system="models with scaffolding",
        gpu="H100",
        label="METR: 1.8x average (H100, filtered)",
        speedup=1.8,
    ),
    Published(
        who="Meta's KernelAgent",
        figure="1.56x over torch.compile",
        scope="KernelBench level 1",
        system="KernelAgent",
        label="KernelAgent: 1.56x vs compile (level 1)",
        speedup=1.56,
        against="compile",
    ),
    Published(
        who="FlagOS KernelGen 2.0",
        figure="99% correct, 90.8% faster than 1x",
        scope="110 operators (its own, not KernelBench's)",
        system="KernelGen 2.0",
        label="FlagOS KernelGen 2.0, its 110 operators: 90.8%",
        fast_1=0.908,
    ),
)
