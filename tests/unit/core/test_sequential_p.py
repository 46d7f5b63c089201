"""The stage-wise-ordering p-value of a group-sequential sign test (core/sequential.stagewise_p): hand
values, the fixed test at one look, and its size by exact enumeration of every outcome of a design."""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from rlstudy.core.sequential import binomial_design, count_of_p, look_counts, stagewise_p

HOLM_LEVELS = (0.05, 0.025, 0.0125, 0.01, 0.005, 0.001)


def two_looks():
    """Looks at 2 and 4 pairs, a hold at 2 of 2 or at 4 of 4."""
    design = binomial_design((2, 4), 0.3, 0.75, "pocock", beta=0.0)
    return dataclasses.replace(design, efficacy=(2, 4))


def test_hand_computed_values_of_a_two_look_design():
    design = two_looks()
    # Look 1: P0(S1 >= s): 2 of 2 -> 1/4, 1 of 2 -> 3/4.
    assert stagewise_p(design, 0, 2) == pytest.approx(1 / 4)
    assert stagewise_p(design, 0, 1) == pytest.approx(3 / 4)
    # Look 2, S1 <= 1 (not crossed): P0(crossed at look 1) = 1/4, plus
    # s = 3: S1 = 1 (1/2) then 2 of 2 (1/4) -> 1/8: p = 3/8;
    # s = 4: unreachable without crossing (S1 <= 1): p = 1/4;
    # s = 2: S1 = 1 (1/2) x P(>= 1 of 2) (3/4) + S1 = 0 (1/4) x P(2 of 2) (1/4) = 7/16: p = 11/16.
    assert stagewise_p(design, 1, 3) == pytest.approx(3 / 8)
    assert stagewise_p(design, 1, 4) == pytest.approx(1 / 4)
    assert stagewise_p(design, 1, 2) == pytest.approx(11 / 16)
    assert stagewise_p(design, 1, 0) == pytest.approx(1.0)


@pytest.mark.parametrize("n", [1, 5, 12, 30])
def test_at_one_look_it_is_the_exact_sign_test(n):
    design = binomial_design((n,), 0.05, 0.75, "obrien-fleming", beta=0.0)
    for s in range(n + 1):
        assert stagewise_p(design, 0, s) == pytest.approx(stats.binom.sf(s - 1, n, 0.5), rel=1e-12)
        if 2 * s >= n:  # near p = 1 tails 2^-n apart read as one, the smaller count: a larger p, conservative
            assert count_of_p(n, stats.binom.sf(s - 1, n, 0.5)) == s


def outcomes(design, follow_futility: bool):
    """Every way the design can end under the null: (probability, stage-wise p), exactly."""
    found, mass, previous = [], np.ones(1), 0
    last = len(design.counts) - 1
    for k, (n, a, b) in enumerate(zip(design.counts, design.efficacy, design.futility)):
        mass = np.convolve(mass, stats.binom.pmf(np.arange(n - previous + 1), n - previous, 0.5))
        previous = n
        for s, weight in enumerate(mass):
            if weight > 0 and (s >= a or k == last or (follow_futility and s <= b)):
                found.append((weight, stagewise_p(design, k, s)))
                mass[s] = 0.0
    return found


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
@pytest.mark.parametrize("maximum, looks, level", [(12, 3, 0.05), (20, 4, 0.025), (9, 2, 0.0125)])
@pytest.mark.parametrize("follow_futility", [True, False])
def test_its_size_is_at_most_every_level_exactly(spending, maximum, looks, level, follow_futility):
    design = binomial_design(look_counts(maximum, looks), level, 0.8, spending, beta=0.2)
    ends = outcomes(design, follow_futility)
    assert sum(w for w, _ in ends) == pytest.approx(1.0)
    for alpha in (*HOLM_LEVELS, 0.2, 0.5):
        assert sum(w for w, p in ends if p <= alpha) <= alpha * (1 + 1e-9)
    # a hold of the design is a stage-wise p at most the design's size
    holds = [p for k, (n, a) in enumerate(zip(design.counts, design.efficacy)) for p in
             [stagewise_p(design, k, a)] if a <= n]
    assert all(p <= design.size * (1 + 1e-9) for p in holds)
