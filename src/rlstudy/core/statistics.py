"""Summaries over replicate seeds, the interval printed beside a mean, and the tests that decide a claim.

Every interval and test here is SciPy's, chosen by measured behaviour at the seed counts the study
uses (2, 3, 5, 10), not by asymptotics:

- **The interval of a mean** is Student's t interval, 95 % nominal (`MEAN_INTERVAL`). Its coverage,
  measured by simulation (`benchmarks/interval_coverage.py`, `tests/unit/claims/test_error_rates.py`),
  is 95 % under normal seeds and at least 90 % under lognormal seeds of σ = 0.5 (finals that move by a
  factor of about two between seeds, as the study's do) at every one of those counts. The percentile
  bootstrap it replaces covers far less at these counts (at n = 2 it is [min, max]; measured beside
  it in the same table). Under a heavier skew (σ = 1) it covers
  less, and the coverage table (docs/bellman.md) says how much beside the label. So the results
  block of docs/bellman.md measures each interval at the spread its own seeds show
  (calibration.t_coverage_at_spread) and prints the coverage beside every interval under 90 %.
- **A share** of rows passing a bound gets the exact (Clopper-Pearson) binomial interval.
- **A comparison of two groups** (`compare`) is an exact one-sided rank test at a stated level:
  the Wilcoxon signed-rank test on the differences of paired runs (runs that share their
  initialisation: the same seed of one setting and task), the Mann-Whitney U test otherwise. Both
  are exact (every permutation of the signs or labels enumerated, ties and infinities included),
  so the false-positive rate under the null is at most the level at every n; a sample too small
  for the smallest attainable p-value to reach the level is inconclusive by design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
MEAN_INTERVAL = "t interval of the mean, 95 %"
SHARE_INTERVAL = "exact (Clopper-Pearson) binomial interval, 95 %"
PAIRED_TEST = "exact Wilcoxon signed-rank test (paired by seed)"
UNPAIRED_TEST = "exact Mann-Whitney U test (unpaired)"


def interquartile_mean(values: np.ndarray) -> float:
    """The mean of the middle half: int(n/4) values cut from each end (scipy's trim_mean(x, 0.25))."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    cut = int(0.25 * len(ordered))
    return float(ordered[cut:len(ordered) - cut].mean())


def t_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student's t interval of the mean; (nan, nan) for fewer than two values."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return math.nan, math.nan
    mean, spread = float(values.mean()), float(values.std(ddof=1))
    if spread == 0.0:
        return mean, mean
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1)) * spread / math.sqrt(len(values))
    return mean - half, mean + half


def share_interval(passes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact binomial interval of a share of passes out of n (n >= 1)."""
    interval = stats.binomtest(passes, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(interval.low), float(interval.high)


def seed_summary(values: np.ndarray) -> dict[str, float]:
    """n, mean, median, IQM and the t interval of the mean of one group's values."""
    values = np.asarray(values, dtype=np.float64)
    low, high = t_interval(values)
    return {"n": len(values), "mean": float(values.mean()), "median": float(np.median(values)),
            "iqm": interquartile_mean(values), "ci_low": low, "ci_high": high}


@dataclass(frozen=True)
class Comparison:
    """The one-sided p-values of 'first ends below second' and of 'first ends above second'."""

    test: str
    n: str
    p_below: float
    p_above: float
    smallest_p: float  # the smallest p-value the test can reach with these sample sizes

    def verdict(self, level: float) -> str:
        if self.smallest_p > level:
            return "too few"
        if self.p_below <= level:
            return "below"
        return "above" if self.p_above <= level else "undecided"


def smallest_p(n_first: int, n_second: int, paired: bool) -> float:
    """Every sign (paired) or every split of the labels (unpaired) equally likely: one of them is the
    most extreme."""
    return 0.5 ** n_first if paired else 1.0 / math.comb(n_first + n_second, n_first)


def _has_ties(values: np.ndarray) -> bool:
    ordered = np.sort(values, axis=-1)
    return bool((ordered[..., 1:] == ordered[..., :-1]).any())


def one_sided_p_values(first: np.ndarray, second: np.ndarray, paired: bool) -> tuple[np.ndarray, np.ndarray]:
    """The exact p-values of first < second and of first > second along the last axis (a 2-D input
    is many comparisons at once, as the error-rate simulations run them). Without ties SciPy's exact
    distributions; with ties (equal values, infinities, zero differences) every permutation of the
    signs or the labels is enumerated, which is exact too."""
    if paired:
        with np.errstate(invalid="ignore"):
            differences = np.where(first == second, 0.0, first - second)  # inf - inf is a tie, not NaN
        tied = _has_ties(np.abs(differences)) or (differences == 0).any()
        method = stats.PermutationMethod(n_resamples=np.inf) if tied else "exact"
        return tuple(stats.wilcoxon(differences, alternative=side, method=method, axis=-1).pvalue
                     for side in ("less", "greater"))
    tied = _has_ties(np.concatenate([first, second], axis=-1))
    method = stats.PermutationMethod(n_resamples=np.inf) if tied else "exact"
    return tuple(stats.mannwhitneyu(first, second, alternative=side, method=method, axis=-1).pvalue
                 for side in ("less", "greater"))


def compare(first: np.ndarray, second: np.ndarray, paired: bool) -> Comparison:
    """Exact one-sided rank tests of first < second and of first > second (paired: first[i] and
    second[i] are runs of the same seed)."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if np.isnan(first).any() or np.isnan(second).any():
        raise ValueError("compare: NaN among the values")
    if paired and len(first) != len(second):
        raise ValueError("compare: paired groups of different sizes")
    test = PAIRED_TEST if paired else UNPAIRED_TEST
    n = f"{len(first)} pairs" if paired else f"{len(first)} vs {len(second)}"
    if min(len(first), len(second)) == 0 or (paired and (first == second).all()):
        return Comparison(test, n, 1.0, 1.0, 1.0 if min(len(first), len(second)) == 0 else
                          smallest_p(len(first), len(second), paired))
    p_below, p_above = one_sided_p_values(first, second, paired)
    return Comparison(test, n, float(p_below), float(p_above), smallest_p(len(first), len(second), paired))
