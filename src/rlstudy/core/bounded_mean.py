"""A one-sided test of the expected value of a bounded variable (an episode's return, which lies in a
range its environment fixes) from the episodes' count, mean and variance, valid for every law on
that range: capped returns, timeouts, left tails, all-equal episodes.

The test is a betting (test-martingale) argument (Waudby-Smith & Ramdas 2024, "Estimating means of
bounded random variables by betting"). Scale the returns to Y in [0, 1] and let m be the bar. Under
the null E[Y] <= m, for any fixed bet lam in [0, 1/m) the capital prod_i (1 + lam (Y_i - m)) has
expectation at most 1; so has the average of the capitals of a fixed grid of bets (BETS), and by
Markov's inequality 1 / (that average) is a valid p-value at every level, for any n. The capital
needs the single episodes; from the count, mean and variance alone it is bounded below by Fan et
al.'s inequality log(1 + u) >= u + u^2 (log(1 - c) + c) / c^2 for u >= -c (u = lam (Y - m) >= -lam m
= -c), which keeps the p-value valid (a smaller capital, a larger p). Nothing is asymptotic.

A run whose episodes all sit at the cap is evidence, not proof: n episodes at the cap against a bar
m of the range give a capital of at most (1/m)^n, so CartPole's 475 of 500 needs about 120 such
episodes at level 0.05 and about 210 at 0.05 / 38 (`episodes_needed`).
"""

from __future__ import annotations

import math

import numpy as np

# The reward bounds per underlying step of the environments whose returns the claims test (gymnasium's
# definitions; claims/per_run.py derives each range from them): Pendulum's cost is theta^2 + 0.1
# theta_dot^2 + 0.001 u^2 with theta in [-pi, pi], theta_dot in [-8, 8] and u in [-2, 2].
PENDULUM_STEP_COST = math.pi ** 2 + 0.1 * 8.0 ** 2 + 0.001 * 2.0 ** 2
REWARD_PER_STEP = {"CartPole-v1": (0.0, 1.0), "MountainCar-v0": (-1.0, 0.0), "Pendulum-v1": (-PENDULUM_STEP_COST, 0.0)}


def episode_range(env: str, steps: int) -> tuple[float, float]:
    """The range of an episode's return of at most `steps` underlying steps of `env`."""
    low, high = REWARD_PER_STEP[env]
    return low * steps, high * steps


# The fractions c = lam * m of the largest bet the capital is averaged over (fixed before any data):
# a run at its cap gains most near c = 1, a noisy run near its bar at small c.
BETS = (0.99, 0.95, 0.9, 0.8, 0.6, 0.4, 0.2, 0.1)


def _log_capital_lower(n: np.ndarray, mean: np.ndarray, variance: np.ndarray, bar: np.ndarray) -> np.ndarray:
    """log of the average capital over BETS, bounded below from n, the mean and the (population)
    variance of Y in [0, 1] against the bar m in (0, 1); arrays broadcast, the bets on a new last axis."""
    c = np.asarray(BETS)
    n, mean, variance, bar = (np.asarray(a, dtype=np.float64)[..., None] for a in (n, mean, variance, bar))
    bet = c / bar
    drift = n * (mean - bar)
    second = n * (variance + (mean - bar) ** 2)
    curvature = (np.log1p(-c) + c) / c ** 2  # <= 0
    log_capitals = bet * drift + curvature * bet ** 2 * second
    top = log_capitals.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(log_capitals - top).mean(axis=-1, keepdims=True)))[..., 0]


def p_above(n, mean, variance, bar) -> np.ndarray:
    """The p-value of 'E[Y] > bar' for Y in [0, 1] (null: E[Y] <= bar), from the episodes' count, mean
    and population variance. A bar at 0 or below cannot be beaten in a way the null excludes: p = 1
    there, and 0 at a bar of 1 or more is impossible to exceed: p = 1 too."""
    n, mean, variance, bar = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in (n, mean, variance, bar)))
    inside = (bar > 0) & (bar < 1)
    safe_bar = np.where(inside, bar, 0.5)
    with np.errstate(over="ignore"):
        p = np.exp(-_log_capital_lower(n, mean, variance, safe_bar))
    return np.where(inside, np.minimum(1.0, p), 1.0)


def scaled(values, low: float, high: float) -> np.ndarray:
    """Values of [low, high] on [0, 1]; a value outside the range is refused (the test would not hold)."""
    values = np.asarray(values, dtype=np.float64)
    if not high > low:
        raise ValueError(f"a bounded range needs high > low, got [{low}, {high}]")
    tolerance = 1e-9 * (high - low)
    if (values < low - tolerance).any() or (values > high + tolerance).any():
        raise ValueError(f"a value outside the range [{low:g}, {high:g}]")
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def bounded_mean_p_values(n, mean, variance, bar, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided p-values of 'E[X] > bar' and of 'E[X] < bar' for X in [low, high], from the count,
    mean and population variance (ddof 0) of n independent draws."""
    y, m = scaled(mean, low, high), (np.asarray(bar, dtype=np.float64) - low) / (high - low)
    v = np.asarray(variance, dtype=np.float64) / (high - low) ** 2
    return p_above(n, y, v, m), p_above(n, 1.0 - y, v, 1.0 - m)


def episodes_needed(bar_fraction: float, level: float, limit: int = 100_000, mean_fraction: float = 1.0,
                    variance_fraction: float = 0.0) -> int | None:
    """The fewest episodes that decide 'E[Y] > bar' at `level` when their mean and (population) variance
    are these, on the scale of the range [0, 1]; by default all at the top of the range (the best case of
    a run: any noise asks for more). None beyond `limit`."""
    counts = np.arange(1, limit + 1)
    decided = np.flatnonzero(p_above(counts, mean_fraction, variance_fraction, bar_fraction) <= level)
    return int(counts[decided[0]]) if len(decided) else None
