"""The few statistics the straggler judge takes thousands of times a window: medians, their standard errors,
the step-to-step spread. Plain, and unmoved by a few stalls where the judge needs that."""

from __future__ import annotations

import bisect
import math
import statistics


def median(values) -> float:
    """`statistics.median` without its generality (judging a window takes thousands): the middle of the
    sorted values, or the mean of the two middle ones; `statistics.StatisticsError` for none, as it."""
    ordered = sorted(values)
    count = len(ordered)
    if not count:
        raise statistics.StatisticsError("no median for empty data")
    half = count // 2
    return ordered[half] if count % 2 else (ordered[half - 1] + ordered[half]) / 2


def lower_quartile(values) -> float:
    """The value a quarter of the way up the sorted values (the lower one where it falls between two)."""
    ordered = sorted(values)
    if not ordered:
        raise statistics.StatisticsError("no quartile for empty data")
    return ordered[(len(ordered) - 1) // 4]


def mean_and_error(values: list[float]) -> tuple[float, float]:
    """The mean and its standard error (for counts: small integers, whose median moves in whole steps)."""
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return mean, max(spread / math.sqrt(len(values)), 1e-5)


def median_and_error(values: list[float]) -> tuple[float, float]:
    """The median and its standard error (from the median absolute deviation: unmoved by a few stalls)."""
    middle = median(values)
    spread = 1.4826 * median([abs(v - middle) for v in values])
    return middle, max(spread * 1.2533 / math.sqrt(len(values)), 1e-5)


def median_without(ordered: list[float], value: float) -> float:
    """The median of the sorted ``ordered`` with one ``value`` taken out."""
    gone = bisect.bisect_left(ordered, value)
    left = len(ordered) - 1

    def at(j: int) -> float:
        return ordered[j] if j < gone else ordered[j + 1]

    return at(left // 2) if left % 2 else (at(left // 2 - 1) + at(left // 2)) / 2


def mad(values: list[float]) -> float:
    """The median absolute deviation: how much a part varies from step to step, unmoved by one stall."""
    if len(values) < 2:
        return 0.0
    middle = median(values)
    return median([abs(v - middle) for v in values])
