"""SPEC.origin: where an imported operator came from, so a verdict on it can be traced back to the
file a benchmark ships (its path, its sha256) and compared with that benchmark's own figures.

Models only: this module is imported by kernelgen/spec/__init__.py and imports nothing of it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# An imported KernelBench problem's operator name, kb<level>_<number>_<title> (source.py makes it).
IMPORTED_NAME = re.compile(r"^kb(\d+)_(\d+)_(\w+)$")


class Origin(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["kernelbench"] = Field(
        description="the benchmark the problem comes from (`kernelgen import kernelbench`)"
    )
    file: str = Field(description="the problem file as it was imported")
    sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$",
        description="of the problem file; the reference embeds that text and checks it",
    )
    level: int = Field(ge=1, description="the benchmark's level (1: single operators, 2: fusions)")
    problem: int = Field(ge=1, description="the problem's number within its level")
    title: str = Field(description="the problem's name, as its file names it")
    convolution: bool = Field(
        False,
        description="the forward runs a convolution: imported, and marked so that a suite may "
        "leave it out with that reason",
    )
    cpu: bool = Field(
        description="smaller sizes for the CPU interpreter were made by scaling the module's "
        "size constants down; False: GPU-only, and `notes` says why"
    )
    notes: list[str] = Field(
        default_factory=list,
        description="what the import decided and why: inputs drawn by the problem's own "
        "get_inputs(), buffers the forward updates kept inside the reference, sizes kept "
        "GPU-only",
    )
