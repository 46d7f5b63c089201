"""The exact Q of the circle MDP, solved on a grid: the truth the learned Q* and every run are measured against.

The state is an angle, the step a Gaussian: s' = s + a*dt + sigma*sqrt(dt)*Z. For a function f
of the angle, the expectation over one step is a convolution with a wrapped Gaussian, which is
diagonal in Fourier modes:

    E[f(s + mu + c*Z)] = sum_k f^_k exp(i k (s + mu)) exp(-c^2 k^2 / 2),   mu = a*dt, c = sigma*sqrt(dt)

So on n equally spaced grid points one step is an FFT, a multiplication and an inverse FFT, exact
for the trigonometric interpolant of f. The Bellman equation of each task,

    reward_of current:  Q(s, a) = r(s) + gamma * E[V(s') | s, a]
    reward_of next:     Q(s, a) = E[r(s') + gamma * V(s') | s, a]
    evaluation:         V(s) = sum_a pi(a|s) Q(s, a)       (policy evaluation)
    control:            V(s) = max_a Q(s, a)               (value iteration)

with r(s) = sin(s) + 1, is iterated to its fixed point (a gamma-contraction) on a grid that is
doubled until doubling it moves Q by less than a relative tolerance. Each iteration stops once
successive Q differ by less than ITERATION_RTOL * max|Q|: a tolerance relative to the size of Q,
because the iteration's rounding floor is a few ulps of max|Q| (2-4.5 machine epsilons measured for gamma 0.9 to
0.999), and max|Q| grows like 1/(1 - gamma); an absolute tolerance is out of reach above gamma 0.9. V is smooth for evaluation,
so the grid converges spectrally; for control, max makes V kinked where the actions' values
cross, which the kernel's Gaussian factor smooths: the error falls like 1/n^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_npy

from .sde import ACTIONS, Dynamics, prob_plus, reward

# The policy whose values a task's Q describes: evaluation follows the notebook's target policy,
# control's Q is the optimal one (its data come from the uniform policy, which the solution ignores).
EVALUATED_POLICY = {"evaluation": "evaluation", "control": None}


def grid(n: int) -> np.ndarray:
    """n equally spaced angles on [0, 2*pi)."""
    return np.arange(n) * (2 * math.pi / n)


@dataclass(frozen=True)
class StepOperator:
    """E[f(s') | s, a] on an n-point grid, for each action, as Fourier multipliers."""

    n: int
    multipliers: np.ndarray  # complex (actions, n//2 + 1)

    @classmethod
    def build(cls, n: int, dynamics: Dynamics) -> "StepOperator":
        k = np.arange(n // 2 + 1)
        spread = dynamics.sigma * math.sqrt(dynamics.dt)
        damping = np.exp(-0.5 * (spread * k) ** 2)
        multipliers = np.stack([damping * np.exp(1j * k * a * dynamics.dt) for a in ACTIONS])
        if n % 2 == 0:
            # The Nyquist mode of a real signal is a cosine; a shift would turn part of it into a sine
            # the grid cannot hold. Keeping its real part is the symmetric choice (and damping makes
            # it vanish long before the grid converges).
            multipliers[:, -1] = multipliers[:, -1].real
        return cls(n, multipliers)

    def expect(self, f: np.ndarray) -> np.ndarray:
        """E[f(s')] at every grid point and action: shape (n, actions) from f of shape (n,)."""
        spectrum = np.fft.rfft(f)
        return np.stack([np.fft.irfft(spectrum * m, n=self.n) for m in self.multipliers], axis=1)

    def expect_at(self, f: np.ndarray, s: np.ndarray) -> np.ndarray:
        """E[f(s')] at arbitrary angles s (shape (len(s), actions)): the trigonometric interpolant."""
        spectrum = np.fft.rfft(f) / self.n
        k = np.arange(self.n // 2 + 1)
        weight = np.where((k == 0) | ((self.n % 2 == 0) & (k == self.n // 2)), 1.0, 2.0)
        waves = np.exp(1j * np.outer(np.asarray(s, dtype=np.float64), k))
        return np.stack([(waves * (weight * spectrum * m)).real.sum(axis=1) for m in self.multipliers], axis=1)


@dataclass(frozen=True)
class ExactQ:
    """Q on the grid `grid(n)`, and what is needed to evaluate it anywhere."""

    values: np.ndarray  # (n, actions)
    gamma: float
    dynamics: Dynamics
    policy: Policy  # the evaluated policy, None for the optimal Q
    iterations: int

    @property
    def n(self) -> int:
        return len(self.values)

    def at(self, s: np.ndarray) -> np.ndarray:
        """Q(s, .) at arbitrary angles, from one more exact Bellman step on the grid's V."""
        op = StepOperator.build(self.n, self.dynamics)
        s = np.asarray(s, dtype=np.float64)
        v = state_values(self.values, grid(self.n), self.policy)
        if self.dynamics.reward_of == "current":
            return reward(s)[:, None] + self.gamma * op.expect_at(v, s)
        return op.expect_at(reward(grid(self.n)) + self.gamma * v, s)

    def on_grid(self, points: int) -> np.ndarray:
        """Q on grid(points) when `points` divides n (those angles are grid points), else by `at`."""
        if self.n % points == 0:
            return self.values[:: self.n // points]
        return self.at(grid(points))


# A policy: a name of sde.prob_plus ("evaluation", "uniform"), None for the optimal (greedy) one, or
# an array of P(a = +1) at each point of the grid it is solved on (a learned Q's greedy policy: greedy.py).
Policy = str | np.ndarray | None

# Successive Bellman iterates closer than this times max|Q| stop the iteration: 16 float64 epsilons,
# a few times the iteration's measured rounding floor at any gamma, so that it is always reached.
# Then Q is within gamma / (1 - gamma) * ITERATION_RTOL * max|Q| of the fixed point (the
# contraction's bound): 3e-14 of max|Q| at gamma 0.9, 4e-13 at 0.99.
ITERATION_RTOL = 16 * float(np.finfo(np.float64).eps)


def state_values(q: np.ndarray, s: np.ndarray, policy: Policy) -> np.ndarray:
    """V(s): the policy's expectation of Q, or the max for the optimal Q."""
    if policy is None:
        return q.max(axis=1)
    plus = prob_plus(policy, s) if isinstance(policy, str) else policy
    return (1.0 - plus) * q[:, 0] + plus * q[:, 1]


def solve_on_grid(n: int, policy: Policy, gamma: float, dynamics: Dynamics, rtol: float = ITERATION_RTOL,
                  max_iterations: int = 1_000_000) -> ExactQ:
    """Iterate the Bellman operator of `policy` (None: the optimal Q) on an n-point grid until
    successive Q differ by at most rtol * max|Q| in max norm (then Q is within
    gamma / (1 - gamma) * rtol * max|Q| of the fixed point)."""
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"gamma must be in [0, 1), got {gamma}")
    if not isinstance(policy, (str, type(None))) and np.shape(policy) != (n,):
        raise ValueError(f"a policy given as P(a=+1) per grid point needs shape ({n},), got {np.shape(policy)}")
    op = StepOperator.build(n, dynamics)
    s = grid(n)
    r = reward(s)
    q = np.zeros((n, len(ACTIONS)))
    for iteration in range(1, max_iterations + 1):
        v = state_values(q, s, policy)
        new = r[:, None] + gamma * op.expect(v) if dynamics.reward_of == "current" else op.expect(r + gamma * v)
        change = np.abs(new - q).max()
        q = new
        if change <= rtol * np.abs(q).max():
            return ExactQ(q, gamma, dynamics, policy, iteration)
    raise RuntimeError(f"the Bellman iteration (gamma {gamma}) did not reach a change of {rtol} * max|Q| in "
                       f"{max_iterations} iterations")


@dataclass(frozen=True)
class Refinement:
    points: int
    iterations: int
    relative_change: float  # max |Q_n - Q_{n/2}| on the coarser grid / max |Q_n|; NaN for the first


def solve(policy: Policy, gamma: float, dynamics: Dynamics, start_points: int = 100, rtol: float = 1e-6,
          max_points: int = 1 << 20) -> tuple[ExactQ, list[Refinement]]:
    """Double the grid from start_points until doubling it changes Q by less than rtol, relative to
    max |Q|, at the coarser grid's points; returns the finest solution and the refinement history."""
    solution = solve_on_grid(start_points, policy, gamma, dynamics)
    history = [Refinement(start_points, solution.iterations, math.nan)]
    while True:
        n = 2 * solution.n
        if n > max_points:
            raise RuntimeError(f"the exact Q did not converge to rtol={rtol} on {max_points} points")
        finer = solve_on_grid(n, policy, gamma, dynamics)
        change = float(np.abs(finer.values[::2] - solution.values).max() / np.abs(finer.values).max())
        history.append(Refinement(n, finer.iterations, change))
        solution = finer
        if change < rtol:
            return solution, history


def load_exact(path, points: int | None) -> np.ndarray:
    """An exact Q written by solve_exact (q_exact.npy), at the `points`-point grid the metric uses
    (None: its whole grid)."""
    values = load_npy(path, "exact Q")
    points = points or (values.shape[0] if values.ndim else 0)
    if values.ndim != 2 or values.shape[1] != len(ACTIONS) or not points or values.shape[0] % points:
        raise InputError(f"{path}: expected an exact Q of shape (n, {len(ACTIONS)}) with n a multiple of "
                         f"{points}, got {values.shape}")
    if not np.isfinite(values).all():
        raise InputError(f"{path}: the exact Q holds NaN or inf")
    return values[:: len(values) // points]


def interpolate(values: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Q on the periodic grid `values` (n, actions) at angles s, linearly interpolated (for drawing:
    the grids solve_exact writes are fine enough that the lines are indistinguishable from `at`)."""
    n = len(values)
    angles = np.append(grid(n), 2 * math.pi)
    closed = np.append(values, values[:1], axis=0)
    wrapped = np.mod(np.asarray(s, dtype=np.float64), 2 * math.pi)
    return np.stack([np.interp(wrapped, angles, closed[:, a]) for a in range(values.shape[1])], axis=1)
