"""A 95% bootstrap interval of a median, for the benchmarks that compare paired timings (imported by
debug_mode_overhead.py and straggler_overhead.py; run alone it does nothing)."""

from __future__ import annotations

import random
import statistics


def median_interval(values: list[float], resamples: int = 1000) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the median over ``resamples`` resamplings of ``values``, with a
    fixed seed: the same data gives the same interval."""
    pick = random.Random(0).choices
    medians = sorted(statistics.median(pick(values, k=len(values))) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]
