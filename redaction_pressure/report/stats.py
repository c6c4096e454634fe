"""Run statistics shared by both tasksets' reports: a mean and its bootstrap interval.

The interval is a 95% percentile bootstrap over tasks with a fixed seed, so a report of the
same traces always shows the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_261_130


@dataclass(frozen=True)
class Interval:
    """A mean and its 95% bootstrap interval."""

    mean: float
    low: float
    high: float


def bootstrap(values: list[float]) -> Interval:
    """The mean of `values` with a 95% percentile bootstrap interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(0.0, 0.0, 0.0)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = data[rng.integers(0, data.size, size=(BOOTSTRAP_RESAMPLES, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(data.mean()), float(low), float(high))
