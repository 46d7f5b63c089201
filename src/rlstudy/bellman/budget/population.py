"""(b) The population residual: the Bellman residual of one estimator in expectation, on a grid of
states weighted by the data's distribution, each action by the behaviour policy, with the exact
transition kernel (exact.StepOperator's Fourier multipliers); no sampling noise.

What each estimator's population objective is (written out in its own module, Estimator.population_terms),
per state s and action a, with
target(s') = r(s) + gamma V(s') (reward_of current; r(s') + gamma V(s') for next),
TQ(s, a) = E[target(s') | s, a] and the kernel of (s, a) written E_a:

    UR (recorded action)   (TQ(s,a) - Q(s,a))^2                          unbiased
    UR (ur_action policy)  (TQ(s,a) - Q(s,a)) (sum_b pi(b|s) TQ(s,b) - Q(s,a))
    DS                     E_a[(target(s') - Q(s,a))^2] = (TQ - Q)^2 + Var_a(target(s'))   biased by the variance
    BFF                    sum_b E_a[(target(s1) - Q) mu(b|s1)] (E_b[target] - Q(s,a))
    BFF-matched            the b = a term alone, over the match probability

where mu is the behaviour policy (the action a_{m+1} drawn at s_{m+1} sets the borrowed increment's
drift: residuals.py). So BFF is unbiased only where mu(b|s1) does not depend on s1 and the actions
agree; on control (uniform behaviour) BFF-matched equals UR, BFF mixes the two actions' kernels.
Every expectation is exact for the trigonometric interpolant of its integrand on the grid (the
network's V is evaluated at the grid's points; the FFT carries it to every next state).
"""

from __future__ import annotations

import numpy as np
import torch

from ..problem import exact
from ..estimators import ESTIMATORS, GridResidual
from ..problem.laws import reward
from ..numerics.compiled.qnet import forward
from ..problem.sde import POLICY_OF_TASK, TASKS, Problem
from .grid import features64, policy_probs, state_values, target_probs_of
from .interpolation import weights_on

UR_ACTIONS = ("recorded", "policy")


def population_estimators() -> tuple[str, ...]:
    """The registered estimators whose residual in expectation is written out (Estimator.population_terms)."""
    return tuple(name for name, estimator in ESTIMATORS.items() if estimator.population_terms is not None)


class PopulationResidual:
    """The Bellman residual of one estimator in expectation, on grid(points): states weighted by
    `weights` (summing to 1), actions by the behaviour policy of the task's data."""

    def __init__(self, task: str, estimator: str, problem: Problem, points: int, weights: np.ndarray | None = None,
                 ur_action: str = "recorded"):
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        if estimator not in population_estimators():
            raise ValueError(f"the population residual is written out for {population_estimators()} only, not "
                             f"{estimator!r} (config budget.estimators)")
        if ur_action not in UR_ACTIONS:
            raise ValueError(f"ur_action must be one of {UR_ACTIONS}, got {ur_action!r}")
        self.task, self.estimator, self.ur_action = task, estimator, ur_action
        self.spec = ESTIMATORS[estimator]
        self.gamma, self.reward_of = problem.gamma, problem.dynamics.reward_of
        s = exact.grid(points)
        self.points = points
        self.feats = features64(s)
        self.weights = torch.from_numpy(weights_on(weights, points))
        self.behaviour = torch.from_numpy(policy_probs(POLICY_OF_TASK[task], s))
        self.target_probs = target_probs_of(task, s)
        # UR with ur_action policy draws a fresh action from the task's policy (estimators/ur.py)
        self.fresh_probs = self.behaviour
        self.reward = torch.from_numpy(reward(s))
        self.multipliers = torch.from_numpy(exact.StepOperator.build(points, problem.dynamics).multipliers)

    def expect(self, f: torch.Tensor) -> torch.Tensor:
        """E[f(s') | s, a] at every grid point and action, (n, 2), from f on the grid (n,)."""
        spectrum = torch.fft.rfft(f)
        return torch.stack([torch.fft.irfft(spectrum * m, n=self.points) for m in self.multipliers], dim=1)

    def parts(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(c, g): target(s') = c(s) + g(s'), the reward of the current state in c, or of the next in g."""
        v = state_values(q, self.target_probs)
        if self.reward_of == "current":
            return self.reward[:, None], self.gamma * v
        return torch.zeros_like(self.reward)[:, None], self.reward + self.gamma * v

    def grid_residual(self, q: torch.Tensor) -> GridResidual:
        """What the estimator's terms are made of, for Q on the grid."""
        c, g = self.parts(q)
        return GridResidual(q, c, g, self.expect(g), self.expect, self.behaviour, self.fresh_probs, self.ur_action)

    def terms(self, q: torch.Tensor) -> torch.Tensor:
        """The estimator's E[j j^ | s, a] at every grid point and action, (n, 2), of Q on the grid."""
        return self.spec.population_terms(self.grid_residual(q))

    def kept_share(self, grid: GridResidual) -> float:
        """The share of the transitions the estimator's start filter keeps under the weights (BFF-matched:
        P(a_{m+1} = a_m)); 1 without a filter."""
        if self.spec.population_kept is None:
            return 1.0
        return float((self.weights[:, None] * self.behaviour * self.spec.population_kept(grid)).sum())

    def loss_of_q(self, q: torch.Tensor) -> torch.Tensor:
        """Half the weighted mean of the terms, over the share kept: the expectation of CBO's loss mean(j j^)/2."""
        grid = self.grid_residual(q)
        return 0.5 * (self.weights[:, None] * self.behaviour * self.spec.population_terms(grid)).sum() / self.kept_share(grid)

    def loss(self, theta: torch.Tensor) -> torch.Tensor:
        return self.loss_of_q(forward(theta, self.feats))
