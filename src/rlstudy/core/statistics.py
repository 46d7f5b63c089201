"""Summaries over replicate seeds, the interval printed beside a mean, and the tests that decide a claim.

Every interval and test here is chosen by its proven or measured behaviour at the seed counts the study
uses (core/calibration.SEED_COUNTS), not by asymptotics:

- **The interval of a mean** is Student's t interval, 95 % nominal (`MEAN_INTERVAL`), from
  MIN_INTERVAL_SEEDS (3) seeds up: two seeds get none. Its coverage, measured by
  simulation (`benchmarks/interval_coverage.py`, `tests/unit/claims/test_error_rates.py`), is 95 %
  under normal seeds and at least 90 % under lognormal seeds of σ = 0.5 (finals that move by a factor
  of about two between seeds, as the study's do) at every one of those counts. Under a heavier skew
  (σ = 1) it covers less, so an interval is called 95 % only where its coverage measured at its own
  seed count and spread is at least 90 % (calibration.honest_interval_label); elsewhere its measured
  coverage is printed instead of "95 %".
- **A share** of rows passing a bound gets the exact (Clopper-Pearson) binomial interval.
- **A comparison of two groups** (`compare`) is a one-sided test at a stated level, chosen for its
  estimand and for a false-positive rate at or under the level under every null the estimand allows
  that the study simulates (core/calibration.py, tests/unit/claims/test_error_rates.py), not only
  under identical laws:
  - paired runs (the same seed of one setting and task share their initialisation): the exact
    **sign test** of the paired differences (`SIGN_TEST`). Estimand: the median paired difference.
    Under any law whose differences have median 0 (skewed or not) the number of positive differences
    is Binomial(n, 1/2) given the non-zero ones, so its false-positive rate is at most the level,
    exactly (calibration.sign_test_false_holds computes it; nothing is simulated). Zero differences
    (ties, inf against inf) are dropped. The signed-rank test it replaces assumes symmetric
    differences: with skewed differences of median 0 it held falsely 9 % of the time at 10 pairs and
    26 % at 40.
  - unpaired runs: the **superiority bound test** (`UNPAIRED_TEST`, core/superiority.py). Estimand:
    the probability of superiority P(a run of first ends below a run of second) + P(tie)/2, against
    1/2. Its p-value bounds the tail of the cross-pair share by Hoeffding's convex-order argument
    and Bentkus's binomial bound: size at most the level under every pair of laws (unequal spreads,
    skew, ties) at every level and sample size, by proof, checked by simulation at every level the
    multiplicity procedures apply. Brunner-Munzel, which it replaces, held falsely 1.7 % of the time
    at level 1 % with 6 against 6 (a wide group falls wholly below a narrow one with probability
    near 2^-6 under P = 1/2), and Mann-Whitney 14 % at 10 against 40.
  Infinities (a diverged run) rank above every finite value. A sample too small for the smallest
  attainable p-value to reach the level is inconclusive by design.
- **Error rates of a claim, of a family and of the study** (claims/rules.py): the tests of one claim
  combine by intersection-union (the claim holds only when every test holds at the level), the claims
  of one family are Holm-adjusted, and so are all tested claims of the study together; docs/claims.md
  states the rules.
- **Planning** (`sign_test_power`, `unpaired_power`): the power of the test actually used at
  a stated smallest effect of interest (exact for the sign test, simulated for the unpaired test), from
  which the seeds a claim needs are planned (`python benchmarks/seed_plan.py`). Observed power
  (resampling the observed pairs) is not printed: it is biased upward and counts wrong-direction
  decisions as success.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from rlstudy.core.superiority import smallest_p as superiority_smallest_p
from rlstudy.core.superiority import superiority_p_values

CONFIDENCE = 0.95
MEAN_INTERVAL = "t interval of the mean, 95 %"
SHARE_INTERVAL = "exact (Clopper-Pearson) binomial interval, 95 %"
SIGN_TEST = "exact sign test of the paired differences (paired by seed)"
UNPAIRED_TEST = "superiority bound test of P(first < second) > 1/2 (unpaired; Hoeffding-Bentkus)"


def interquartile_mean(values: np.ndarray) -> float:
    """The mean of the middle half: int(n/4) values cut from each end (scipy's trim_mean(x, 0.25))."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    cut = int(0.25 * len(ordered))
    return float(ordered[cut:len(ordered) - cut].mean())


# Fewer seeds than this get no interval: at 2 seeds the t interval is mean +- 12.7 x the half range, and
# its coverage depends wholly on the law.
MIN_INTERVAL_SEEDS = 3


def t_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student's t interval of the mean; (nan, nan) for fewer than MIN_INTERVAL_SEEDS values."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < MIN_INTERVAL_SEEDS:
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


def _paired_differences(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(first == second, 0.0, first - second)  # inf - inf is a tie, not NaN


def sign_test_p_values(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact sign test along the last axis: the p-values of 'the median difference is below 0'
    and of 'above 0', and how many differences are non-zero (zeros dropped)."""
    below, above = (differences < 0).sum(axis=-1), (differences > 0).sum(axis=-1)
    nonzero = below + above
    return stats.binom.sf(below - 1, nonzero, 0.5), stats.binom.sf(above - 1, nonzero, 0.5), nonzero


def compare(first: np.ndarray, second: np.ndarray, paired: bool) -> Comparison:
    """The one-sided tests of first < second and of first > second: the exact sign test of the paired
    differences (paired: first[i] and second[i] are runs of the same seed), or the superiority bound
    test (unpaired)."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if np.isnan(first).any() or np.isnan(second).any():
        raise ValueError("compare: NaN among the values")
    if paired and len(first) != len(second):
        raise ValueError("compare: paired groups of different sizes")
    if paired:
        p_below, p_above, nonzero = sign_test_p_values(_paired_differences(first, second))
        return Comparison(SIGN_TEST, f"{len(first)} pairs", float(p_below), float(p_above),
                          0.5 ** int(nonzero) if nonzero else 1.0)
    p_below, p_above = superiority_p_values(first, second)
    return Comparison(UNPAIRED_TEST, f"{len(first)} vs {len(second)}", float(p_below), float(p_above),
                      superiority_smallest_p(len(first), len(second)))


def sign_test_power(n: int, share_in_direction: float, level: float) -> float:
    """The exact power of the one-sided sign test at n pairs when a pair's difference lies in the
    claimed direction with probability `share_in_direction` (no zeros): P(Binomial(n, q) >= k*),
    k* the smallest count whose null p is at most the level."""
    counts = np.arange(n + 1)
    critical = counts[stats.binom.sf(counts - 1, n, 0.5) <= level]
    return float(stats.binom.sf(critical[0] - 1, n, share_in_direction)) if len(critical) else 0.0


def unpaired_power(n_first: int, n_second: int, superiority: float, level: float, draws: int,
                   rng: np.random.Generator) -> float:
    """The simulated power of the unpaired test at n_first against n_second runs when P(a run of first
    ends below a run of second) = `superiority`: two normal laws of sd 1 whose means differ by
    sqrt(2) * Phi^-1(superiority)."""
    shift = math.sqrt(2.0) * float(stats.norm.ppf(superiority))
    first = rng.normal(size=(draws, n_first))
    second = rng.normal(size=(draws, n_second)) + shift
    p_below, _ = superiority_p_values(first, second)
    return float((p_below <= level).mean())


def share_test_p_values(passes: int, n: int, share: float) -> tuple[float, float]:
    """The exact one-sided binomial p-values of 'the share of runs that pass exceeds `share`' and of
    'it is below `share`', from `passes` of n runs."""
    return float(stats.binom.sf(passes - 1, n, share)), float(stats.binom.cdf(passes, n, share))


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (the family-wise error rate of rejecting every adjusted
    p <= level is at most the level); NaN (no test) stays NaN and does not count in the family."""
    indexed = [(p, i) for i, p in enumerate(p_values) if not math.isnan(p)]
    adjusted = [math.nan] * len(p_values)
    running, m = 0.0, len(indexed)
    for rank, (p, i) in enumerate(sorted(indexed)):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
