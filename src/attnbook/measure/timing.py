"""Timing that survives a busy machine: interleaved repeats, medians, log-log slopes.

A single timing on a shared CPU says little: another program may have taken a core for part of
it. Three habits make comparisons meaningful anyway. Run the competitors **interleaved** (A, B,
A, B, ... with the order flipped every repeat), so that a slow period hurts both; report
**medians**, which ignore a few disturbed repeats; and compare **ratios and slopes measured in
the same run**, never absolute times from different runs.

Nothing in the unit tests is timed; these helpers serve the benchmarks and the chapters' small
live sweeps.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["interleaved_times", "medians", "loglog_slope"]


def interleaved_times(
    fns: Mapping[str, Callable[[], Any]], *, repeats: int = 5, warmup: int = 1
) -> dict[str, list[float]]:
    """Seconds per call of each function, the functions run in turn, the order flipped each repeat.

    Args:
        fns: name -> zero-argument callable.
        repeats: timed calls of each function.
        warmup: untimed calls of each function first (caches, thread pools, lazy init).

    Returns:
        name -> list of ``repeats`` durations in seconds.
    """
    if repeats <= 0 or warmup < 0:
        raise ValueError(
            f"repeats must be positive and warmup non-negative; got {repeats}, {warmup}"
        )
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        for name in names if repeat % 2 == 0 else reversed(names):
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def medians(times: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """name -> median of its durations."""
    return {name: statistics.median(values) for name, values in times.items()}


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x``: the exponent p in ``y ~ x**p``."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(
            f"need two sequences of equal length >= 2; got lengths {len(x)} and {len(y)}"
        )
    if min(x) <= 0 or min(y) <= 0:
        raise ValueError("log-log slope needs positive values")
    lx = [math.log(v) for v in x]
    ly = [math.log(v) for v in y]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    if sxx == 0:
        raise ValueError("x values must not all be equal")
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx
