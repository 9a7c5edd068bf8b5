"""Speedups as the reports compute them from stored timings: a ratio of two times, and the
geometric mean over shapes of what was measured (a shape without a figure is left out, not
counted as 0 or 1)."""

from __future__ import annotations

import math

from kernelgen.bench import roofline


def geomean(values: list[float | None]) -> float | None:
    return roofline.geomean(v for v in values if v is not None and v > 0 and math.isfinite(v))


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den
