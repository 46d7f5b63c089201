"""How well the intervals and tests of core/statistics.py do what they say, measured by simulation at
the seed counts the study uses: the coverage of each interval and the false-positive rate of each
test under its null, with the estimate's own standard error. Run by the unit tests
(tests/unit/claims/test_error_rates.py) and by `python benchmarks/interval_coverage.py`, which
writes the table of docs/bellman.md."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from rlstudy.core.statistics import (
    CONFIDENCE,
    MEAN_INTERVAL,
    PAIRED_TEST,
    SHARE_INTERVAL,
    UNPAIRED_TEST,
    Comparison,
    one_sided_p_values,
    share_interval,
    smallest_p,
)

SEED_COUNTS = (2, 3, 5, 10)
LEVEL = 0.05


@dataclass(frozen=True)
class Law:
    """A law of one seed's final value: a sampler and its mean."""

    name: str
    sigma: float  # 0: standard normal; else lognormal with this log-scale sd (a factor e^sigma per sd)

    def draw(self, rng: np.random.Generator, size) -> np.ndarray:
        return rng.normal(size=size) if self.sigma == 0 else rng.lognormal(0.0, self.sigma, size=size)

    @property
    def mean(self) -> float:
        return 0.0 if self.sigma == 0 else math.exp(self.sigma ** 2 / 2)


NORMAL = Law("normal", 0.0)
LOGNORMAL = Law("lognormal, sigma 0.5", 0.5)  # finals moving by about a factor of two between seeds
HEAVY = Law("lognormal, sigma 1", 1.0)        # a heavier skew than the study's, for the record
LAWS = (NORMAL, LOGNORMAL, HEAVY)


@dataclass(frozen=True)
class Estimate:
    """A simulated rate and its standard error."""

    rate: float
    repetitions: int

    @property
    def standard_error(self) -> float:
        return math.sqrt(max(self.rate * (1 - self.rate), 1e-12) / self.repetitions)

    def __str__(self) -> str:
        return f"{self.rate:.3f} ± {self.standard_error:.3f}"


def t_interval_hits(samples: np.ndarray, true_mean: float) -> np.ndarray:
    """For each row of seeds, whether its t interval holds the true mean: t_interval's arithmetic,
    vectorised over the rows (tests/unit/claims/test_error_rates.py checks they agree)."""
    n = samples.shape[1]
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1) * samples.std(axis=1, ddof=1) / math.sqrt(n)
    return np.abs(samples.mean(axis=1) - true_mean) <= half


def t_interval_coverage(law: Law, n: int, repetitions: int, rng: np.random.Generator) -> Estimate:
    """The share of samples of n seeds whose t interval holds the true mean."""
    return Estimate(float(t_interval_hits(law.draw(rng, (repetitions, n)), law.mean).mean()), repetitions)


def t_coverage_at_spread(n: int, log_sd: float, repetitions: int = 20_000, seed: int = 0) -> Estimate:
    """The t interval's coverage for n seeds of a lognormal law of log-scale sd `log_sd` (a lognormal
    mean's coverage does not depend on its scale): what a table's interval is worth at the spread its
    own seeds show."""
    if n < 2 or not math.isfinite(log_sd) or log_sd < 0:
        raise ValueError(f"a coverage needs n >= 2 and a finite log-scale sd >= 0, got n={n}, log_sd={log_sd}")
    law = Law(f"lognormal, sigma {log_sd:.2g}", log_sd) if log_sd > 0 else NORMAL
    return t_interval_coverage(law, n, repetitions, np.random.default_rng(seed))


def percentile_bootstrap_coverage(law: Law, n: int, repetitions: int, rng: np.random.Generator,
                                  resamples: int = 2000) -> Estimate:
    """The coverage of the percentile bootstrap interval of the mean that the project printed before
    (resample the seeds, take the 2.5 and 97.5 % quantiles of the resampled means), for the record."""
    hits = 0
    for chunk in range(0, repetitions, 500):
        samples = law.draw(rng, (min(500, repetitions - chunk), n))
        draws = rng.integers(n, size=(len(samples), resamples, n))
        means = np.take_along_axis(samples[:, None, :], draws, axis=2).mean(axis=2)
        low, high = np.quantile(means, [0.025, 0.975], axis=1)
        hits += int(((low <= law.mean) & (law.mean <= high)).sum())
    return Estimate(hits / repetitions, repetitions)


def share_interval_coverage(share: float, n: int) -> float:
    """The exact coverage of the binomial interval at a true share, by summing over every outcome."""
    return float(sum(stats.binom.pmf(k, n, share) for k in range(n + 1)
                     if share_interval(k, n)[0] <= share <= share_interval(k, n)[1]))


def holds_rate(law: Law, n: int, paired: bool, repetitions: int, rng: np.random.Generator,
               level: float = LEVEL) -> Estimate:
    """How often a ranking 'holds' when the two groups have one law (the null): the verdict of the
    project's test (Comparison.verdict on one_sided_p_values) on simulated groups of n seeds. Paired
    groups share a seed effect of the same law (added, or multiplied for a lognormal law)."""
    first, second = law.draw(rng, (repetitions, n)), law.draw(rng, (repetitions, n))
    if paired:
        shared = law.draw(rng, (repetitions, 1))
        first, second = (first + shared, second + shared) if law.sigma == 0 else (first * shared, second * shared)
    p_below, p_above = one_sided_p_values(first, second, paired)
    floor = smallest_p(n, n, paired)
    verdicts = [Comparison("", "", float(b), float(a), floor).verdict(level) for b, a in zip(p_below, p_above)]
    return Estimate(verdicts.count("below") / repetitions, repetitions)


def coverage_table(repetitions: int, seed: int = 0) -> list[dict]:
    """Every interval and test the claims and tables print, at every seed count, under each law."""
    rng = np.random.default_rng(seed)
    rows = []
    for law in LAWS:
        for n in SEED_COUNTS:
            rows.append({"what": MEAN_INTERVAL, "measure": "coverage", "law": law.name, "n": n,
                         "estimate": str(t_interval_coverage(law, n, repetitions, rng))})
    for law in (NORMAL, LOGNORMAL):
        for n in SEED_COUNTS:
            rows.append({"what": "percentile bootstrap of the mean, 95 % (replaced: no longer printed)",
                         "measure": "coverage", "law": law.name, "n": n,
                         "estimate": str(percentile_bootstrap_coverage(law, n, repetitions, rng))})
    for share in (0.5, 0.9):
        for n in SEED_COUNTS:
            rows.append({"what": SHARE_INTERVAL, "measure": "coverage (exact sum)", "law": f"share {share:g}",
                         "n": n, "estimate": f"{share_interval_coverage(share, n):.3f}"})
    for paired, name in ((True, PAIRED_TEST), (False, UNPAIRED_TEST)):
        for law in (NORMAL, LOGNORMAL):
            for n in SEED_COUNTS:
                rows.append({"what": f"{name}, level {LEVEL:g}", "measure": "false 'holds' under the null",
                             "law": law.name, "n": n, "estimate": str(holds_rate(law, n, paired, repetitions, rng))})
    return rows
