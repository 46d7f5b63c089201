"""Seed counts planned from a stated smallest effect of interest, for the test each claim uses.

The effect is stated in claims.yaml (`defaults.planning`, or a test's own `effect`), never read from
the results: a paired test's effect is the probability that a pair's difference lies in the claimed
direction (the sign test's power depends on nothing else: computed exactly), an unpaired test's the
probability of superiority P(a run of one group ends below a run of the other) (the superiority
bound test's power simulated with two normal laws of equal spread, equal group sizes), a share test's the true
share of runs passing (exact binomial). The planned count is the smallest n at which the power
reaches `defaults.planning.power`; `python benchmarks/seed_plan.py` writes the table.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from rlstudy.core.statistics import sign_test_power, unpaired_power as simulated_unpaired_power

# The unpaired sizes simulated (per group): a grid, so a plan costs a few seconds.
UNPAIRED_GRID = (5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 44, 48, 52, 56, 60,
                 70, 80, 90, 100, 120, 150, 200)


def share_power(n: int, true_share: float, min_share: float, level: float) -> float:
    """The exact power of the one-sided binomial test that the share passing exceeds min_share."""
    counts = np.arange(n + 1)
    critical = counts[stats.binom.sf(counts - 1, n, min_share) <= level]
    return float(stats.binom.sf(critical[0] - 1, n, true_share)) if len(critical) else 0.0


@lru_cache(maxsize=None)
def unpaired_power(n: int, superiority: float, level: float, draws: int, seed: int) -> float:
    return simulated_unpaired_power(n, n, superiority, level, draws, np.random.default_rng([seed, n]))


def kind_of(test: dict) -> str | None:
    """'paired', 'unpaired' or 'share' (a binomial share test); None: no seeds to plan (a
    description of the runs made, or a per-run test, decided by each run's own episodes)."""
    if test["kind"] in ("ranking", "ratio"):
        return "paired" if test.get("paired", False) else "unpaired"
    if test["kind"] == "share" and test.get("min_share", 1.0) < 1.0 and "run_noise" not in test:
        return "share"
    return None


def effect_of(test: dict, planning: dict) -> float | None:
    kind = kind_of(test)
    if kind is None:
        return None
    return float(test.get("effect", planning["share" if kind == "share" else "superiority"]))


def power_at(test: dict, n: int, planning: dict, level: float) -> float:
    """The power of the test's own decision rule at n seeds (pairs, per group, or runs)."""
    kind, effect = kind_of(test), effect_of(test, planning)
    if kind == "paired":
        return sign_test_power(n, effect, level)
    if kind == "unpaired":
        return unpaired_power(n, effect, level, planning["draws"], planning["seed"])
    if kind == "share":
        return share_power(n, effect, float(test["min_share"]), level)
    return math.nan


def planned_seeds(test: dict, planning: dict, level: float) -> int | None:
    """The smallest seed count whose power reaches planning['power'] (None: no seeds to plan, or more
    than planning['max_seeds'])."""
    kind = kind_of(test)
    if kind is None:
        return None
    sizes = UNPAIRED_GRID if kind == "unpaired" else range(2, planning["max_seeds"] + 1)
    for n in sizes:
        if n <= planning["max_seeds"] and power_at(test, n, planning, level) >= planning["power"]:
            return n
    return None


def effect_words(test: dict, planning: dict) -> str:
    kind, effect = kind_of(test), effect_of(test, planning)
    if kind is None:
        return ""
    return {"paired": f"P(a pair's difference in the claimed direction) = {effect:g}",
            "unpaired": f"P(a run of the first group ends below one of the second) = {effect:g}",
            "share": f"a true share of {effect:g} of runs passing"}.get(kind, "")
