"""What a learned control Q is for: its greedy policy, evaluated exactly by the solver (exact.py).

A learned Q can be close to the optimal Q in the centred metric yet act badly: the metric ignores
an offset between the actions, which is what decides the greedy action. So the greedy policy of
each learned Q is scored on the exact solution's grid s_i = 2*pi*i/n (its n points, all of them):

    shortfall   = mean_i [V*(s_i) - V^greedy(s_i)] / mean_i [V*(s_i) - V^uniform(s_i)]

the value the greedy policy loses against the optimal one, averaged uniformly over the circle, as
a share of what the uniform-random policy (the control data's behaviour) loses: 0 optimal, 1 as
bad as random, above 1 worse than random. V^greedy and V^uniform are the exact policy evaluations
(exact.solve_on_grid) on the same grid as V* = max_a Q*.

    wrong_share = mean_i P(the greedy policy picks a non-optimal action at s_i)

Ties, both ways, are explicit. In the exact Q*, both actions are optimal where they differ by at
most TIE_RTOL * max|Q*| (the exact Q's own accuracy, config exact.rtol's default): either choice is
right there. In the learned Q, the greedy policy picks each of two exactly equal actions with
probability 1/2 (so a Q that ties everywhere is the uniform policy: shortfall 1, and half its
choices are wrong where Q* has a unique best action).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .exact import solve_on_grid, state_values
from .sde import Dynamics

TIE_RTOL = 1e-6


def greedy_plus(q: np.ndarray) -> np.ndarray:
    """P(a = +1) of the greedy policy of q (n, 2): 1 where Q(s, +1) > Q(s, -1), 0 where less,
    1/2 where equal."""
    gap = np.asarray(q, dtype=np.float64)[:, 1] - np.asarray(q, dtype=np.float64)[:, 0]
    return np.where(gap > 0, 1.0, np.where(gap < 0, 0.0, 0.5))


@dataclass(frozen=True)
class GreedyScore:
    shortfall: float  # mean (V* - V^greedy) / mean (V* - V^uniform)
    wrong_share: float  # share of grid states whose greedy action is not an optimal one


@dataclass(frozen=True)
class GreedyJudge:
    """The exact optimal Q on its grid, with what every greedy policy is compared against, solved once."""

    optimal: np.ndarray  # Q* (n, 2) on exact.grid(n)
    gamma: float
    dynamics: Dynamics
    optimal_values: np.ndarray  # V* (n,)
    uniform_loss: float  # mean (V* - V^uniform) over the grid
    optimal_actions: np.ndarray  # bool (n, 2): action a is optimal at s_i (both at a tie)

    @classmethod
    def build(cls, optimal: np.ndarray, gamma: float, dynamics: Dynamics, tie_rtol: float = TIE_RTOL) -> "GreedyJudge":
        optimal = np.asarray(optimal, dtype=np.float64)
        n = len(optimal)
        best = optimal.max(axis=1)
        uniform = solve_on_grid(n, "uniform", gamma, dynamics)
        uniform_loss = float((best - state_values(uniform.values, None, np.full(n, 0.5))).mean())
        if not uniform_loss > 0:
            raise ValueError(f"the uniform policy loses {uniform_loss} against the optimal Q: nothing to compare with")
        tie = tie_rtol * np.abs(optimal).max()
        return cls(optimal, gamma, dynamics, best, uniform_loss, optimal >= best[:, None] - tie)

    @property
    def n(self) -> int:
        return len(self.optimal)

    def score_policy(self, plus: np.ndarray) -> GreedyScore:
        """The score of the policy with P(a = +1) = plus[i] at grid point s_i."""
        plus = np.asarray(plus, dtype=np.float64)
        values = solve_on_grid(self.n, plus, self.gamma, self.dynamics).values
        loss = float((self.optimal_values - state_values(values, None, plus)).mean())
        wrong = (1.0 - plus) * ~self.optimal_actions[:, 0] + plus * ~self.optimal_actions[:, 1]
        return GreedyScore(loss / self.uniform_loss, float(wrong.mean()))

    def score(self, q: np.ndarray) -> GreedyScore:
        """The score of the greedy policy of q (n, 2), a learned Q on the same grid."""
        if np.shape(q) != self.optimal.shape:
            raise ValueError(f"a learned Q on the exact grid needs shape {self.optimal.shape}, got {np.shape(q)}")
        if not np.isfinite(q).all():
            raise ValueError("the learned Q holds NaN or inf on the exact grid")
        return self.score_policy(greedy_plus(q))
