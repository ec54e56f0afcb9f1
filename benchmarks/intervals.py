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


def clustered_median_interval(blocks: list[list[float]], resamples: int = 1000) -> tuple[float, float]:
    """As `median_interval` for values that come in blocks (neighbouring values share the machine's load and
    are not independent): whole blocks are resampled, and the median taken over their values."""
    pick = random.Random(0).choices
    medians = sorted(
        statistics.median([value for block in pick(blocks, k=len(blocks)) for value in block])
        for _ in range(resamples)
    )
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]
