"""The sequential p-values a look records (claims/looks.sequential_p_values) keep their size under the
looks' own stopping rules (hold, fail at level / m, futility), by exact enumeration of every outcome of a
paired test's design under the null: P0(p <= a) <= a, each side, at every Holm level."""

import numpy as np
import pytest
from scipy import stats

from rlstudy.claims import looks as claim_looks
from rlstudy.claims.looks import OPEN, PlannedTest, boundaries, sequential_p_values
from rlstudy.core.sequential import look_counts

LEVELS = (0.05, 0.025, 0.0125, 0.01, 0.005, 0.001, 0.1, 0.2)


def ends(test: PlannedTest, spending: str, others: int):
    """Every way the test can end under the null: (probability, sequential p, sequential reverse p)."""
    holds = boundaries(test, spending)
    fails = boundaries(test, spending, test.level / others)
    found, mass, previous = [], np.ones(1), 0
    for k, n in enumerate(test.counts):
        mass = np.convolve(mass, stats.binom.pmf(np.arange(n - previous + 1), n - previous, 0.5))
        previous = n
        for s, weight in enumerate(mass):
            p, reverse = stats.binom.sf(s - 1, n, 0.5), stats.binom.sf(n - s - 1, n, 0.5)
            status = claim_looks.test_status(holds, k, p, OPEN, reverse, fails[k][0])
            if weight > 0 and status != OPEN:
                found.append((weight, *sequential_p_values(test, spending, others, k, p, reverse, status)))
                mass[s] = 0.0
    assert sum(w for w, _, _ in found) == pytest.approx(1.0)  # the last look decides every test
    return found


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
@pytest.mark.parametrize("maximum, looks, level, others", [(12, 3, 0.05, 1), (20, 4, 0.025, 2), (9, 2, 0.0125, 1),
                                                            (30, 3, 0.05, 2), (40, 5, 0.1, 3), (16, 4, 0.2, 1)])
def test_the_sequential_p_values_of_a_paired_test_keep_every_level(spending, maximum, looks, level, others):
    test = PlannedTest("c", 1, "paired", ("x.seeds",), level, 0.8, 0.8, tuple(look_counts(maximum, looks)))
    found = ends(test, spending, others)
    for alpha in LEVELS:
        assert sum(w for w, p, _ in found if p <= alpha) <= alpha * (1 + 1e-9)
        assert sum(w for w, _, reverse in found if reverse <= alpha) <= alpha * (1 + 1e-9)
