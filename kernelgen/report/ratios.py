"""Speedups as the reports compute them from stored timings: a ratio of two times, and the
geometric mean over shapes of what was measured (a shape without a figure is left out, not
counted as 0 or 1)."""

from __future__ import annotations

import math


def geomean(values: list[float | None]) -> float | None:
    xs = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not xs:
        return None
    return math.exp(sum(math.log(v) for v in xs) / len(xs))


def ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den <= 0:
        return None
    return num / den
