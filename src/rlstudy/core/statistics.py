"""Summaries over replicate seeds, the interval printed beside a mean, and the tests that decide a claim.

Every interval and test here is SciPy's, chosen by measured behaviour at the seed counts the study
uses (core/calibration.SEED_COUNTS), not by asymptotics:

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
  for the smallest attainable p-value to reach the level is inconclusive by design. With ties and
  more arrangements than `PERMUTATIONS` (2^n sign patterns, or C(n1+n2, n1) labellings: 40 vs 40
  has 1e23), the p-value is that of `PERMUTATIONS` random arrangements from a fixed seed,
  (b + 1)/(R + 1), which keeps the level exactly (a randomised permutation test) and repeats bit
  for bit; its evidence names it.
- **The power to decide** an undecided comparison (`power_to_decide`) is a plug-in estimate: samples
  of each size drawn with replacement from the observed pairs (or from each group), the share of
  them in which either one-sided test reaches the level. It says how many seeds a claim would need
  if the seeds run so far were the population; it is an estimate to plan by, not a test.
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
# With ties, arrangements enumerated up to this many; beyond, this many drawn at random (seeded).
PERMUTATIONS = 100_000
PERMUTATION_SEED = 20200701


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


def arrangements(n_first: int, n_second: int, paired: bool) -> int:
    """How many sign patterns (paired) or labellings (unpaired) the permutation null has."""
    return 2 ** n_first if paired else math.comb(n_first + n_second, n_first)


def _tie_method() -> stats.PermutationMethod:
    """Every arrangement when there are at most PERMUTATIONS of them (SciPy then enumerates), else
    PERMUTATIONS random ones from a fixed seed; a new generator per call, so a p-value depends on its
    own data only."""
    return stats.PermutationMethod(n_resamples=PERMUTATIONS, batch=10_000,
                                   rng=np.random.default_rng(PERMUTATION_SEED))


def _signed_rank_randomised(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon's signed-rank test of the differences (zeros dropped, ties given average ranks) with
    the p-values of PERMUTATIONS random sign patterns, (b + 1)/(R + 1). The ranks do not change when
    signs flip, so each pattern's statistic is one dot product, where SciPy's permutation path
    re-ranks every pattern (about a thousand times slower at 40 pairs)."""
    nonzero = differences != 0
    ranks = stats.rankdata(np.abs(differences), axis=-1) - (~nonzero).sum(axis=-1, keepdims=True)
    ranks = np.where(nonzero, ranks, 0.0)  # the zeros held the lowest ranks; dropped, the others move down
    observed = (ranks * (differences > 0)).sum(axis=-1)[..., None]
    rng = np.random.default_rng(PERMUTATION_SEED)
    at_most = at_least = 0
    for start in range(0, PERMUTATIONS, 10_000):
        signs = rng.integers(0, 2, size=(min(10_000, PERMUTATIONS - start), differences.shape[-1]))
        null = ranks @ signs.T.astype(np.float64)  # sums of half-integers: exact in float64
        at_most, at_least = at_most + (null <= observed).sum(axis=-1), at_least + (null >= observed).sum(axis=-1)
    return (at_most + 1) / (PERMUTATIONS + 1), (at_least + 1) / (PERMUTATIONS + 1)


def _paired_differences(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(first == second, 0.0, first - second)  # inf - inf is a tie, not NaN


def _tied(first: np.ndarray, second: np.ndarray, paired: bool) -> bool:
    """Equal values, infinities or zero differences anywhere: SciPy's exact distributions assume none."""
    if paired:
        differences = _paired_differences(first, second)
        return _has_ties(np.abs(differences)) or bool((differences == 0).any())
    return _has_ties(np.concatenate([first, second], axis=-1))


def one_sided_p_values(first: np.ndarray, second: np.ndarray, paired: bool) -> tuple[np.ndarray, np.ndarray]:
    """The p-values of first < second and of first > second along the last axis (a 2-D input is many
    comparisons at once, as the error-rate simulations run them). Without ties SciPy's exact
    distributions; with ties the permutation null of the signs or the labels (`_tie_method`: exact
    up to PERMUTATIONS arrangements, randomised beyond)."""
    tied = _tied(first, second, paired)
    if paired:
        differences = _paired_differences(first, second)
        if tied and arrangements(differences.shape[-1], 0, paired) > PERMUTATIONS:
            return _signed_rank_randomised(differences)
        return tuple(stats.wilcoxon(differences, alternative=side, method=_tie_method() if tied else "exact",
                                    axis=-1).pvalue for side in ("less", "greater"))
    return tuple(stats.mannwhitneyu(first, second, alternative=side, method=_tie_method() if tied else "exact",
                                    axis=-1).pvalue for side in ("less", "greater"))


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
    smallest = smallest_p(len(first), len(second), paired)
    if _tied(first, second, paired) and arrangements(len(first), len(second), paired) > PERMUTATIONS:
        test = test.replace("exact ", "") + f", ties: p from {PERMUTATIONS} random arrangements (seeded)"
        smallest = max(smallest, 1 / (PERMUTATIONS + 1))
    return Comparison(test, n, float(p_below), float(p_above), smallest)


def power_to_decide(first: np.ndarray, second: np.ndarray, paired: bool, level: float, sizes: list[int],
                    draws: int, rng: np.random.Generator) -> dict[int, float]:
    """For each n in `sizes`, the share of `draws` resampled experiments of n seeds (n pairs, or n per
    group) in which the one-sided test of first < second or of first > second has p <= level.
    Resampling with replacement ties values, so the tests here are the normal approximations of the
    same rank tests, with SciPy's tie correction: close to the exact tests' power, and much cheaper."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    power = {}
    for n in sizes:
        if smallest_p(n, n, paired) > level:  # the exact test cannot reach the level at this n
            power[n] = 0.0
            continue
        if paired:
            with np.errstate(invalid="ignore"):
                differences = np.where(first == second, 0.0, first - second)
            sample = differences[rng.integers(0, len(differences), size=(draws, n))]
            zero = (sample == 0).all(axis=1)  # no signed difference: no test can reject
            with np.errstate(invalid="ignore", divide="ignore"):
                p = [stats.wilcoxon(sample, alternative=side, method="approx", zero_method="wilcox", axis=-1).pvalue
                     for side in ("less", "greater")]
            decided = ((np.nan_to_num(p[0], nan=1.0) <= level) | (np.nan_to_num(p[1], nan=1.0) <= level)) & ~zero
        else:
            a = first[rng.integers(0, len(first), size=(draws, n))]
            b = second[rng.integers(0, len(second), size=(draws, n))]
            p = [stats.mannwhitneyu(a, b, alternative=side, method="asymptotic", axis=-1).pvalue
                 for side in ("less", "greater")]
            decided = (np.nan_to_num(p[0], nan=1.0) <= level) | (np.nan_to_num(p[1], nan=1.0) <= level)
        power[n] = float(decided.mean())
    return power
