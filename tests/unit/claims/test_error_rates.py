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
    t_interval_coverage,
)

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
