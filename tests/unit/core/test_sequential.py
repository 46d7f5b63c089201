"""Group-sequential designs (core/sequential.py): the exact sign-test design against issue 48's worked
example and against a simulation of its own rule; every design's size at most its level at the levels Holm
uses; the generic design on p-values keeps its level on fresh draws, and naive repeated testing does not."""

import math

import numpy as np
import pytest
from scipy import special, stats

from rlstudy.core.sequential import (SPENDING, binomial_design, fixed_sign_test_count, look_counts, sign_test_power,
                                     simulated_design, simulated_size, smallest_binomial_design, spent)


def test_the_spending_functions_spend_the_level_by_the_end_and_never_go_back():
    for kind in SPENDING:
        values = [spent(kind, 0.025, t) for t in np.linspace(0, 1, 21)]
        assert values[0] == 0 and math.isclose(values[-1], 0.025, rel_tol=1e-12)
        assert all(a <= b for a, b in zip(values, values[1:]))
    # O'Brien-Fleming-type keeps nearly all of it for the end; Pocock-type spends it evenly
    assert spent("obrien-fleming", 0.025, 0.25) < 1e-4 < spent("pocock", 0.025, 0.25)
    with pytest.raises(ValueError, match="spending function"):
        spent("haybittle", 0.025, 0.5)


def test_the_issue_s_worked_example():
    """q = 0.75, one-sided 0.025, power 0.8. The fixed sign test first reaches 0.8 at 30 pairs, but its
    exact power saws (0.77 at 31, 0.79 at 34): from 35 pairs on it stays at or above 0.8 (the issue's 35).
    O'Brien-Fleming with 4 looks: at most 33 pairs (the issue's ~33), expected 26.1 at the effect and 18.2
    under the null (the issue's ~27 and ~19, within one pair: the same design evaluated at a maximum of 35
    gives 27.0 and 18.2)."""
    assert fixed_sign_test_count(0.025, 0.75, 0.8) == 30
    assert fixed_sign_test_count(0.025, 0.75, 0.8, stable=True, limit=300) == 35
    design = smallest_binomial_design(0.025, 0.75, 0.8, looks=4)
    assert design.counts == (9, 17, 25, 33)
    assert design.size <= 0.025 and design.power >= 0.8
    assert 26 <= design.alternative.expected_count <= 27 and 18 <= design.null.expected_count <= 19
    at_35 = binomial_design(look_counts(35, 4), 0.025, 0.75)
    assert round(at_35.alternative.expected_count) == 27 and round(at_35.null.expected_count) == 18
    assert all(b < a for a, b in zip(design.efficacy, design.futility))
    assert design.futility[-1] == design.efficacy[-1] - 1  # the last look decides


def test_exact_operating_characteristics_agree_with_a_simulation_of_the_rule():
    design = binomial_design(look_counts(33, 4), 0.025, 0.75)
    rng = np.random.default_rng(48)
    for p, exact in ((0.5, design.null), (0.75, design.alternative)):
        steps = rng.random((200_000, 33)) < p
        counts = np.cumsum(steps, axis=1)[:, np.array(design.counts) - 1]
        held, stopped_at = np.zeros(len(counts), bool), np.full(len(counts), design.counts[-1])
        going = np.ones(len(counts), bool)
        for k, n in enumerate(design.counts):
            hold = going & (counts[:, k] >= design.efficacy[k])
            futile = going & (counts[:, k] <= design.futility[k])
            held |= hold
            stopped_at[hold | futile] = n
            going &= ~(hold | futile)
        se = math.sqrt(exact.hold * (1 - exact.hold) / len(counts))
        assert abs(held.mean() - exact.hold) < 4 * se + 1e-4
        assert abs(stopped_at.mean() - exact.expected_count) < 0.05


@pytest.mark.parametrize("spending", SPENDING)
@pytest.mark.parametrize("level", [0.05, 0.025, 0.0167, 0.01, 0.00625, 0.005])
@pytest.mark.parametrize("looks", [1, 2, 4, 6])
def test_every_design_keeps_its_level_with_or_without_its_futility_stops(spending, level, looks):
    """Size exactly at most the level at every level Holm applies (0.05 / m), the futility bound ignored
    (non-binding: a study that runs past it keeps its level) and followed."""
    for maximum in (12, 24, 40, 57):
        design = binomial_design(look_counts(maximum, looks), level, 0.75, spending)
        assert design.size <= level * (1 + 1e-9), (maximum, design.as_dict())
        assert design.null.hold <= design.size + 1e-12


def test_sign_test_power_is_the_binomial_tail_at_the_critical_count():
    # 20 pairs at 0.05: P0(S >= 15) = 0.0207 <= 0.05 < P0(S >= 14) = 0.0577, so power is P(S >= 15 | 0.75)
    assert math.isclose(sign_test_power(20, 0.05, 0.75), stats.binom.sf(14, 20, 0.75))
    assert sign_test_power(4, 0.05, 0.75) == 0.0  # 1/16 > 0.05: no count can hold


def _sign_p(data, n):
    return float(stats.binom.sf(np.count_nonzero(data[:n]) - 1, n, 0.5))


def _t_p(data, n):
    """The one-sided one-sample t test's p-value of mean > 0 (scipy.special.stdtr: fast enough to call
    for each of thousands of draws)."""
    head = data[:n]
    return float(special.stdtr(n - 1, -head.mean() / (head.std(ddof=1) / math.sqrt(n))))


@pytest.mark.parametrize("p_value, null", [
    (_sign_p, lambda rng, n: rng.random(n) < 0.5),
    (_t_p, lambda rng, n: rng.lognormal(0.0, 1.0, n) - math.exp(0.5)),  # a skewed law of mean 0
])
def test_a_simulated_design_keeps_its_level_on_fresh_draws(p_value, null):
    counts = look_counts(40, 4)
    design = simulated_design(null, p_value, counts, 0.025, "obrien-fleming", 4000, np.random.default_rng(1))
    assert all(0 <= t < 1 for t in design.thresholds)  # calibrated to the null law, not to the nominal p
    size, se = simulated_size(design, null, p_value, 4000, np.random.default_rng(2))
    assert size <= 0.025 + 3 * se


def test_the_size_check_catches_naive_repeated_testing():
    """Testing at the full level at each of 4 looks: its size is well above the level, and the same
    check that passes the designs above fails it."""
    from rlstudy.core.sequential import SimulatedDesign
    null = lambda rng, n: rng.standard_normal(n)  # noqa: E731
    naive = SimulatedDesign(tuple(look_counts(40, 4)), (0.025,) * 4, 0.025, "none")
    size, se = simulated_size(naive, null, _t_p, 4000, np.random.default_rng(3))
    assert size > 0.025 + 3 * se
