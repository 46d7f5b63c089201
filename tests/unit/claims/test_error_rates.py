"""The intervals cover what they say and the claims' tests hold falsely at most at their level,
measured by simulation at the seed counts the study uses (2, 3, 5, 10), under a normal and a
skewed (lognormal) law; each estimate's standard error is at most 0.0035 (4,000 repetitions)."""

import numpy as np
import pytest

from rlstudy.core.calibration import (
    LEVEL,
    LOGNORMAL,
    NORMAL,
    SEED_COUNTS,
    holds_rate,
    share_interval_coverage,
    t_coverage_at_spread,
    t_interval_coverage,
    t_interval_hits,
)
from rlstudy.core.statistics import t_interval

REPETITIONS = 4000


@pytest.mark.parametrize("law", [NORMAL, LOGNORMAL], ids=lambda law: law.name)
@pytest.mark.parametrize("n", SEED_COUNTS)
def test_the_t_interval_covers_at_least_90_percent(law, n):
    """Labelled "95 %": 95 % under normal seeds (within 3 standard errors), and never under 90 %
    under the skewed law (the threshold below which the project would not call it a 95 % interval)."""
    coverage = t_interval_coverage(law, n, REPETITIONS, np.random.default_rng(n))
    if law is NORMAL:
        assert abs(coverage.rate - 0.95) <= 3 * coverage.standard_error, coverage
    assert coverage.rate - 3 * coverage.standard_error >= 0.90, coverage


def test_the_vectorised_coverage_counts_the_project_interval():
    """t_interval_hits is t_interval's arithmetic over many rows at once: the same verdict on each row
    (ties at the bound included: a row of equal values has the interval [mean, mean])."""
    rng = np.random.default_rng(7)
    samples = np.vstack([rng.lognormal(0.0, 1.0, size=(500, 5)), np.full((1, 5), 2.0)])
    for true_mean in (1.0, 1.6487212707001282, 2.0):
        by_row = [t_interval(row)[0] <= true_mean <= t_interval(row)[1] for row in samples]
        assert t_interval_hits(samples, true_mean).tolist() == by_row


def test_the_coverage_at_a_groups_spread_falls_with_the_skew():
    """At no spread the t interval is exact (95 %); at the heavy skew of the coverage table it covers
    under 90 % at 5 seeds (the table measures about 0.82), which the results block must then say."""
    assert abs(t_coverage_at_spread(5, 0.0).rate - 0.95) < 0.01
    assert t_coverage_at_spread(5, 1.0).rate < 0.88
    with pytest.raises(ValueError, match="n >= 2"):
        t_coverage_at_spread(1, 0.5)


@pytest.mark.parametrize("share", [0.5, 0.8, 0.9, 0.99])
@pytest.mark.parametrize("n", SEED_COUNTS)
def test_the_share_interval_covers_95_percent(share, n):
    assert share_interval_coverage(share, n) >= 0.95


@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
@pytest.mark.parametrize("law", [NORMAL, LOGNORMAL], ids=lambda law: law.name)
@pytest.mark.parametrize("n", SEED_COUNTS)
def test_a_ranking_holds_falsely_at_most_at_its_level(paired, law, n):
    """Under the null, P(holds) <= 5 % (within 3 standard errors of the simulation); at 2 seeds (and
    at 3 and 4 pairs) the test cannot reach 5 %, so it never holds."""
    rate = holds_rate(law, n, paired, REPETITIONS, np.random.default_rng(10 * n + paired))
    assert rate.rate <= LEVEL + 3 * rate.standard_error, rate
    if n <= (3 if paired else 2):
        assert rate.rate == 0.0


def test_the_test_has_power_at_ten_seeds():
    """The other side of the error rates: at 10 paired seeds a shift of one seed-noise sd is found
    most of the time (so "inconclusive" at 10 seeds says something)."""
    rng = np.random.default_rng(7)
    from rlstudy.core.statistics import one_sided_p_values

    shared = rng.normal(size=(2000, 1))
    first, second = rng.normal(size=(2000, 10)) + shared, rng.normal(size=(2000, 10)) + shared + 1.0
    p_below, _ = one_sided_p_values(first, second, paired=True)
    assert (p_below <= LEVEL).mean() > 0.6
