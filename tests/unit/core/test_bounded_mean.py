"""The bounded-mean test (core/bounded_mean.py) and the superiority bound (core/superiority.py) by hand:
the properties their validity rests on, checked directly."""

import math

import numpy as np
import pytest
from scipy import stats

from rlstudy.core.bounded_mean import BETS, _log_capital_lower, bounded_mean_p_values, episodes_needed, p_above
from rlstudy.core.superiority import binomial_tail_bound, superiority_p_values


def test_the_capital_from_summaries_never_exceeds_the_capital_of_the_episodes():
    """The p-value's validity: the capital bounded below from (n, mean, variance) is at most the average
    over BETS of the exact capitals prod(1 + lam (y - m)), which have expectation at most 1 under the null."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        n, bar = int(rng.integers(1, 40)), float(rng.uniform(0.02, 0.98))
        y = rng.beta(rng.uniform(0.1, 3), rng.uniform(0.1, 3), n)
        exact = math.log(np.mean([np.prod(1 + c / bar * (y - bar)) for c in BETS]))
        assert _log_capital_lower(n, y.mean(), y.var(), bar) <= exact + 1e-12


def test_all_equal_episodes_are_evidence_not_proof():
    """Ten episodes at the top against a bar at 95 % of the range: p above 0.5; the p falls with n."""
    assert p_above(10, 1.0, 0.0, 0.95) > 0.5
    assert p_above(200, 1.0, 0.0, 0.95) < 1e-3
    assert episodes_needed(0.95, 0.05) == 84
    above, below = bounded_mean_p_values(300, 500.0, 0.0, 475.0, 0.0, 500.0)
    assert above < 1e-4 and below == 1.0
    with pytest.raises(ValueError, match="outside the range"):
        bounded_mean_p_values(10, 600.0, 0.0, 475.0, 0.0, 500.0)


def test_the_binomial_tail_bound_by_hand():
    """k = 4: at x = 4 (separation) the bound is P(B = 4) = 1/16; at x = 3.5, min over h of
    E[(B - h)+] / (3.5 - h) is h = 3: (1/16) / 0.5 = 1/8; never below the exact tail P(B >= x)."""
    assert binomial_tail_bound(4, np.array(4.0)) == pytest.approx(1 / 16)
    assert binomial_tail_bound(4, np.array(3.5)) == pytest.approx(1 / 8)
    for k in (3, 6, 10):
        x = np.linspace(0.1, k, 50)
        assert (binomial_tail_bound(k, x) >= stats.binom.sf(np.ceil(x) - 1, k, 0.5) - 1e-12).all()


def test_the_superiority_test_is_symmetric_and_uses_the_smaller_group():
    first, second = np.arange(5.0), np.arange(5.0) + 10
    below, above = superiority_p_values(first, second)
    assert below == pytest.approx(1 / 32) and above == 1.0
    assert superiority_p_values(second, first) == pytest.approx((1.0, 1 / 32))
    below, _ = superiority_p_values(np.arange(3.0), np.arange(40.0) + 10)  # k = 3: 1/8 at best
    assert below == pytest.approx(1 / 8)
