"""Summaries over replicate seeds, and seeded bootstrap intervals (byte-identical on rerun).

A percentile bootstrap: resample the seeds with replacement `resamples` times, compute the
statistic on each resample, and take the 2.5 % and 97.5 % quantiles. With a handful of seeds the
interval is wide, which is the point: it says how much the seeds allow one to conclude.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

CONFIDENCE = 0.95


def interquartile_mean(values: np.ndarray) -> float:
    """The mean of the middle half: int(n/4) values cut from each end (scipy's trim_mean(x, 0.25))."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    cut = int(0.25 * len(ordered))
    return float(ordered[cut:len(ordered) - cut].mean())


def percentile_interval(statistics: np.ndarray) -> tuple[float, float]:
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(statistics, [tail, 1 - tail])
    return float(low), float(high)


def bootstrap_mean(values: np.ndarray, rng: np.random.Generator, resamples: int) -> tuple[float, float]:
    """95 % percentile interval of the mean; (nan, nan) for fewer than two values."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return math.nan, math.nan
    draws = rng.integers(len(values), size=(resamples, len(values)))
    return percentile_interval(values[draws].mean(axis=1))


def bootstrap_two_groups(first: np.ndarray, second: np.ndarray, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
                         rng: np.random.Generator, resamples: int) -> tuple[float, float]:
    """95 % interval of statistic(first, second), each group resampled on its own. `statistic` takes
    two arrays of shape (resamples, n) and returns one value per resample."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if len(first) < 2 or len(second) < 2:
        return math.nan, math.nan
    a = first[rng.integers(len(first), size=(resamples, len(first)))]
    b = second[rng.integers(len(second), size=(resamples, len(second)))]
    return percentile_interval(statistic(a, b))


def probability_of_lower(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(A < B) for one seed of each, over all pairs (ties count one half), along the last axis:
    a of shape (..., n), b of shape (..., m)."""
    a, b = np.asarray(a)[..., :, None], np.asarray(b)[..., None, :]
    return (a < b).mean(axis=(-2, -1)) + 0.5 * (a == b).mean(axis=(-2, -1))


def ratio_of_means(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a).mean(axis=-1) / np.asarray(b).mean(axis=-1)


def seed_summary(values: np.ndarray, rng: np.random.Generator, resamples: int) -> dict[str, float]:
    """n, mean, median, IQM and the bootstrap interval of the mean of one group's values."""
    values = np.asarray(values, dtype=np.float64)
    low, high = bootstrap_mean(values, rng, resamples)
    return {"n": len(values), "mean": float(values.mean()), "median": float(np.median(values)),
            "iqm": interquartile_mean(values), "ci_low": low, "ci_high": high}
