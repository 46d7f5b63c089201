"""How well the intervals and tests of core/statistics.py, core/superiority.py and core/bounded_mean.py
do what they say, at the seed counts the study uses: the coverage of each interval and the false-positive rate of each test under the nulls
its estimand allows (not only identical laws), with the estimate's own standard error. Rates that can
be computed exactly are (the sign test's and the share test's: binomial sums); the others are
simulated. Run by the unit tests (tests/unit/claims/test_error_rates.py) and by
`python benchmarks/interval_coverage.py`, which writes the table of docs/bellman.md.

Every test is checked at every level the claims' multiplicity procedures can apply to it
(`multiplicity_levels`: Holm within a family and Holm over the study test a claim at level/k for
k = 1 .. the number of tested confirmatory claims), not only at 5 %. The rule a simulated false-holds rate
is judged by (`Estimate.at_most_level`): rate <= level + MARGIN_SE standard errors of a rate at the
level, sqrt(level (1 - level) / repetitions); at 20,000 repetitions and 5 % that is 5.46 %, so a test
of size 6 % fails it (tests/unit/claims/test_error_rates.py proves it does)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from rlstudy.core.config import load_yaml
from rlstudy.core.statistics import (
    CONFIDENCE,
    MEAN_INTERVAL,
    MIN_INTERVAL_SEEDS,
    SHARE_INTERVAL,
    SIGN_TEST,
    UNPAIRED_TEST,
    share_interval,
    share_test_p_values,
    sign_test_p_values,
    sign_test_power,
)
from rlstudy.core.bounded_mean import bounded_mean_p_values, episode_range
from rlstudy.core.superiority import superiority_p_values

SEED_COUNTS = (2, 3, 4, 5, 8, 10, 20, 40)  # the counts of the coverage table (docs/bellman.md)
LEVEL = 0.05
MARGIN_SE = 3.0  # a simulated false-holds rate may exceed its level by at most this many standard errors
CONFIG = Path(__file__).resolve().parents[3] / "config.yaml"
# An interval whose coverage, measured at its seed count and spread, is under this is not called 95 %.
COVERAGE_FLOOR = 0.90


def seed_counts(config: dict) -> tuple[int, ...]:
    """Every replicate count the config runs: the length of every list of seeds under a key whose name
    ends in 'seeds' (a list, or a mapping of lists such as seeds per task), anywhere in the config, and
    every count of a seed block's `counts` (a key ending in 'block': {counts: {list: count}}, as the
    confirmatory block gives its lists' sizes)."""
    counts: set[int] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if str(key).endswith("seeds"):
                    lists = value.values() if isinstance(value, dict) else [value]
                    counts.update(len(v) for v in lists if isinstance(v, list))
                if str(key).endswith("block") and isinstance(value, dict) and isinstance(value.get("counts"), dict):
                    counts.update(c for c in value["counts"].values() if isinstance(c, int) and not isinstance(c, bool))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(config)
    return tuple(sorted(counts))


def config_seed_counts(path: Path = CONFIG) -> tuple[int, ...]:
    """seed_counts of the shipped config.yaml."""
    return seed_counts(load_yaml(path, "config file"))


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

    def at_most_level(self, level: float = LEVEL) -> bool:
        """The rule of a simulated false-holds rate: at most the level plus MARGIN_SE standard errors of
        a rate equal to the level at these repetitions."""
        return self.rate <= level + MARGIN_SE * math.sqrt(level * (1 - level) / self.repetitions)

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


def honest_interval_label(n: int, log_sd: float, repetitions: int = 4000) -> str | None:
    """What a t interval of the mean over n seeds of this log-scale spread may be called: None (no
    interval) under MIN_INTERVAL_SEEDS seeds, "95 %" where its coverage measured at this n and spread
    is at least COVERAGE_FLOOR, else the measured coverage ("covers 84 %"), never "95 %"."""
    if n < MIN_INTERVAL_SEEDS:
        return None
    coverage = t_coverage_at_spread(n, log_sd, repetitions=repetitions).rate
    return "95 %" if coverage >= COVERAGE_FLOOR else f"covers {coverage:.0%}"


def interval_note(coverage: float) -> str:
    """What follows a printed "mean [low, high]" whose column says 95 %: nothing where its coverage,
    measured at its group's seed count and spread, is at least COVERAGE_FLOOR; the measured coverage
    where it is under; and where none could be measured (NaN: a diverged run, a value <= 0) a note
    that it was not, so no unmeasured interval passes as 95 % (render_readme's `_interval`)."""
    if math.isnan(coverage):
        return " (coverage not measured)"
    return "" if coverage >= COVERAGE_FLOOR else f" (covers {coverage:.0%})"


def multiplicity_levels(confirmatory_claims: int, level: float = LEVEL) -> tuple[float, ...]:
    """Every level Holm can test a claim at, within its family or over the study's confirmatory claims:
    level / k for k = 1 .. confirmatory_claims (a family is a subset of the study)."""
    return tuple(level / k for k in range(1, max(1, confirmatory_claims) + 1))


def _lognormal_offset() -> float:
    """The shift d with P(Z < exp(0.5 W) - d) = 1/2 for independent standard normals Z, W: a normal
    group against a lognormal one whose superiority is exactly 1/2."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    return float(optimize.brentq(lambda d: (weights * stats.norm.cdf(np.exp(0.5 * nodes) - d)).sum() - 0.5, 0.0, 3.0))


@dataclass(frozen=True)
class Null:
    """A null of an unpaired comparison: two laws with P(first < second) + P(tie)/2 = 1/2 exactly."""

    name: str
    draw: Callable[[np.random.Generator, int, int, int], tuple[np.ndarray, np.ndarray]]


def _normals(first_sd: float, second_sd: float):
    return lambda rng, a, b, r: (rng.normal(size=(r, a)) * first_sd, rng.normal(size=(r, b)) * second_sd)


def _one_law(sample):
    return lambda rng, a, b, r: (sample(rng, (r, a)), sample(rng, (r, b)))


def _normal_against_lognormal(rng, a, b, r):
    return rng.normal(size=(r, a)), rng.lognormal(0.0, 0.5, (r, b)) - _lognormal_offset()


UNPAIRED_NULLS = (
    Null("one normal law", _normals(1.0, 1.0)),
    Null("one lognormal law (sigma 1)", _one_law(lambda rng, shape: rng.lognormal(0.0, 1.0, shape))),
    Null("equal medians, first 10x wider", _normals(10.0, 1.0)),
    Null("equal medians, second 10x wider", _normals(1.0, 10.0)),
    Null("equal medians, first 1000x wider", _normals(1000.0, 1.0)),
    Null("normal against lognormal, P = 1/2", _normal_against_lognormal),
    Null("ties: one law on 5 values", _one_law(lambda rng, shape: np.round(rng.normal(size=shape) * 0.7))),
    Null("capped: one law, 40 % at its cap", _one_law(lambda rng, shape: np.minimum(rng.normal(size=shape), 0.25))),
)


def unpaired_false_holds(null: Null, n_first: int, n_second: int, repetitions: int, rng: np.random.Generator,
                         levels: tuple[float, ...] = (LEVEL,)) -> list[Estimate]:
    """How often the unpaired test (core/superiority.py) says first < second under the null, and how
    often first > second, at each level: the larger of the two rates per level."""
    first, second = null.draw(rng, n_first, n_second, repetitions)
    # A block of repetitions at a time: the cross pairs of all of them (20,000 x 40 x 40 float64, 256 MB a
    # temporary) took seconds to allocate; each row's p-values are the same bits either way.
    blocks = [superiority_p_values(first[start:start + 1000], second[start:start + 1000])
              for start in range(0, repetitions, 1000)]
    p_below, p_above = (np.concatenate(side) for side in zip(*blocks))
    return [Estimate(float(max((p_below <= level).mean(), (p_above <= level).mean())), repetitions)
            for level in levels]


def sign_test_false_holds(n: int, level: float = LEVEL) -> float:
    """The sign test's false-holds rate at n pairs under any law of the differences with median 0 and
    no zeros, exactly: P(Binomial(n, 1/2) >= k*), k* the smallest count whose p is at most the level."""
    return sign_test_power(n, 0.5, level)  # its power where a pair goes either way with probability 1/2


def skewed_differences(rng: np.random.Generator, shape) -> np.ndarray:
    """Paired differences of median 0 and a strong right skew: exp(Z) - 1 (mean 0.65)."""
    return np.expm1(rng.normal(size=shape))


def sign_test_simulated(n: int, repetitions: int, rng: np.random.Generator, level: float = LEVEL) -> Estimate:
    """The implemented sign test's false holds under skewed differences of median 0, simulated: the
    check that the code computes the exact rate of sign_test_false_holds."""
    p_below, _, _ = sign_test_p_values(-skewed_differences(rng, (repetitions, n)))
    return Estimate(float((p_below <= level).mean()), repetitions)


def share_test_false_holds(n: int, share: float, levels: tuple[float, ...] = (LEVEL,)) -> list[float]:
    """The binomial share test's false-holds rate at n runs when the true share is exactly `share` (the
    worst case of its null, share <= min_share), at each level: the probabilities of the outcomes whose
    p is at most the level, summed in the outcomes' order (each outcome's p computed once)."""
    weights = stats.binom.pmf(np.arange(n + 1), n, share)
    p_values = np.array([share_test_p_values(k, n, share)[0] for k in range(n + 1)])
    return [float(sum(weights[p_values <= level])) for level in levels]


def unpaired_sizes(counts: tuple[int, ...]) -> list[tuple[int, int]]:
    """Every pair of group sizes an unpaired test of the config can meet (each count against each)."""
    return [(a, b) for a in counts for b in counts if a <= b]


def coverage_table(repetitions: int, seed: int = 0) -> list[dict]:
    """Every interval and test the claims and tables print, at every seed count, under each law."""
    rng = np.random.default_rng(seed)
    rows = []
    for law in LAWS:
        for n in SEED_COUNTS:
            estimate = str(t_interval_coverage(law, n, repetitions, rng)) if n >= MIN_INTERVAL_SEEDS else "none printed"
            rows.append({"what": MEAN_INTERVAL, "measure": "coverage", "law": law.name, "n": n, "estimate": estimate})
    for share in (0.5, 0.9):
        for n in SEED_COUNTS:
            rows.append({"what": SHARE_INTERVAL, "measure": "coverage (exact sum)", "law": f"share {share:g}",
                         "n": n, "estimate": f"{share_interval_coverage(share, n):.3f}"})
    for n in SEED_COUNTS:
        rows.append({"what": f"{SIGN_TEST}, level {LEVEL:g}", "measure": "false 'holds' (exact sum)",
                     "law": "any law of the differences with median 0", "n": n,
                     "estimate": f"{sign_test_false_holds(n):.4f}"})
    for null in UNPAIRED_NULLS:
        for n in SEED_COUNTS:
            rows.append({"what": f"{UNPAIRED_TEST}, level {LEVEL:g}", "measure": "false 'holds' (n per group)",
                         "law": null.name, "n": n,
                         "estimate": str(unpaired_false_holds(null, n, n, repetitions, rng)[0])})
    return rows


@dataclass(frozen=True)
class EpisodeNull:
    """A law of one episode's return whose mean sits exactly at the bar (the worst case of both nulls of
    the per-run test): a sampler on the environment's range [low, high]."""

    name: str
    low: float
    high: float
    bar: float
    draw: Callable[[np.random.Generator, tuple], np.ndarray]


def _two_point(rng, shape, low, high, share_high):
    return np.where(rng.random(shape) < share_high, high, low)


PENDULUM_LOW = episode_range("Pendulum-v1", 200)[0]
EPISODE_NULLS = (
    # CartPole: the cap 500 in 94 % of episodes, a failure at 500 - 25 / 0.06 otherwise: mean 475
    EpisodeNull("CartPole, capped at 500 in 94 %", 0.0, 500.0, 475.0,
                lambda rng, shape: np.where(rng.random(shape) < 0.94, 500.0, 500.0 - 25.0 / 0.06)),
    EpisodeNull("CartPole, all 500 or 0 (two points)", 0.0, 500.0, 475.0,
                lambda rng, shape: _two_point(rng, shape, 0.0, 500.0, 0.95)),
    # MountainCar: a timeout at -200 in 10 %, otherwise uniform on [-120, -80]: mean -110
    EpisodeNull("MountainCar, 10 % timeouts at -200", -200.0, 0.0, -110.0,
                lambda rng, shape: np.where(rng.random(shape) < 0.1, -200.0, rng.uniform(-120.0, -80.0, shape))),
    # Pendulum: uniform on [-250, -50] in 97 %, a swing-up failure at -1816.7 otherwise: mean -200
    EpisodeNull("Pendulum, a 3 % left tail", PENDULUM_LOW, 0.0, -200.0,
                lambda rng, shape: np.where(rng.random(shape) < 0.97, rng.uniform(-250.0, -50.0, shape),
                                            (-200.0 - 0.97 * -150.0) / 0.03)),
    EpisodeNull("every episode at the bar", 0.0, 500.0, 475.0, lambda rng, shape: np.full(shape, 475.0)),
)


def bounded_mean_false_decisions(null: EpisodeNull, episodes: int, repetitions: int, rng: np.random.Generator,
                                 levels: tuple[float, ...] = (LEVEL,)) -> list[Estimate]:
    """How often the per-run test (core/bounded_mean.py, from each run's count, mean and sd as the
    claims read them) says a run whose true mean is at the bar passes it, or fails it: the larger rate
    per level."""
    returns = null.draw(rng, (repetitions, episodes))
    p_pass, p_fail = bounded_mean_p_values(episodes, returns.mean(axis=1), returns.var(axis=1), null.bar,
                                           null.low, null.high)
    return [Estimate(float(max((p_pass <= level).mean(), (p_fail <= level).mean())), repetitions)
            for level in levels]
