"""Where a task's data are: the stationary state density of its behaviour policy's Markov chain.

The data of each task are one long trajectory of the behaviour policy (sde.POLICY_OF_TASK:
evaluation's P(a=+1|s) = 1/2 + sin(s)/5 drifts towards s = pi; control's is uniform). Taken modulo
2*pi, its states are distributed by the chain's stationary density p, which weighs the error metric
by where the runs actually saw data (metrics.weighted_centred_error).

One step pushes a density p forward as

    p'(s') = sum_a int p(s) pi(a|s) K(s' - s - a*dt) ds,   K the wrapped Gaussian of spread sigma*sqrt(dt),

a convolution, diagonal in Fourier modes: the multipliers of exact.StepOperator complex-conjugated
(the discrete adjoint of E[f(s')|s, a], exactly), applied to p * pi(a|.) and summed over actions.

The fixed point p = P p is found by a direct linear solve rather than power iteration: power
iteration converges like |lambda_2|^m, which depends on the dynamics (0.94 per step for the shipped
dt and sigma on evaluation, but it tends to 1 as dt or the drift shrinks), whereas the dense
(n x n) solve costs the same for any chain and is exact to rounding for the few hundred points the
density needs. Its relative residual max|P p - p| / max p is checked against RESIDUAL_RTOL (an error
if above), and the grid is doubled (as exact.solve does for Q) until doubling it moves p by less
than rtol relative to max p.

Normalisation: the density's mean over the grid is 1 (the probability density is p / (2*pi)), so
that as weights it reproduces the uniform metric when p is flat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_npy

from .exact import StepOperator, grid
from .sde import Dynamics, prob_plus

# The linear solve's relative residual must be below this: a few hundred float64 epsilons, far
# above the rounding of a dense solve on a few hundred points, far below any effect on a metric.
RESIDUAL_RTOL = 1e-12


def action_probabilities(policy: str, s: np.ndarray) -> np.ndarray:
    """pi(a|s) at angles s for both actions, shape (len(s), actions) (index 0: a = -1)."""
    plus = prob_plus(policy, s)
    return np.stack([1.0 - plus, plus], axis=1)


@dataclass(frozen=True)
class PushOperator:
    """One step of the behaviour policy's chain acting on densities on grid(n)."""

    step: StepOperator
    action_probs: np.ndarray  # (n, actions)

    @classmethod
    def build(cls, n: int, policy: str, dynamics: Dynamics) -> "PushOperator":
        return cls(StepOperator.build(n, dynamics), action_probabilities(policy, grid(n)))

    def push(self, densities: np.ndarray) -> np.ndarray:
        """The densities after one step; densities of shape (n,) or (n, m) (one per column)."""
        weighted = densities[:, None] * self.action_probs if densities.ndim == 1 else \
            densities[:, None, :] * self.action_probs[:, :, None]
        spectra = np.fft.rfft(weighted, axis=0)  # (n//2+1, actions[, m])
        conjugate = np.conj(self.step.multipliers.T)  # (n//2+1, actions)
        conjugate = conjugate if densities.ndim == 1 else conjugate[:, :, None]
        return np.fft.irfft((spectra * conjugate).sum(axis=1), n=self.step.n, axis=0)

    def matrix(self) -> np.ndarray:
        """The push as an (n, n) matrix: column j is the push of the unit vector at grid point j."""
        return self.push(np.eye(self.step.n))


def stationary_on_grid(n: int, policy: str, dynamics: Dynamics, residual_rtol: float = RESIDUAL_RTOL) -> np.ndarray:
    """The stationary density on grid(n), mean 1: (P - I) p = 0 with one equation replaced by sum p = n."""
    if n < 4:
        raise ValueError(f"the density needs a grid of at least 4 points, got {n}")
    operator = PushOperator.build(n, policy, dynamics)
    system = operator.matrix() - np.eye(n)
    system[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = n
    density = np.linalg.solve(system, rhs)
    residual = np.abs(operator.push(density) - density).max() / np.abs(density).max()
    if not residual <= residual_rtol:
        raise RuntimeError(f"the stationary density on {n} points has a relative residual {residual:.3g} "
                           f"above {residual_rtol:g}: the chain may not have a unique stationary density")
    if density.min() < -residual_rtol * density.max():
        raise RuntimeError(f"the stationary density on {n} points is negative somewhere (min {density.min():.3g})")
    # A rounding-level negative value passes the check above, but load_density refuses any: clip it to 0
    # (and keep the mean 1), so that what this writes is what the readers accept.
    density = np.maximum(density, 0.0)
    return density * (n / density.sum())


@dataclass(frozen=True)
class DensityRefinement:
    points: int
    relative_change: float  # max |p_n - p_{n/2}| on the coarser grid / max p_n; NaN for the first


def stationary_density(policy: str, dynamics: Dynamics, start_points: int = 100, rtol: float = 1e-8,
                       max_points: int = 1 << 12) -> tuple[np.ndarray, list[DensityRefinement]]:
    """The stationary density (mean 1) on the finest of grids doubled from start_points until doubling
    changes it by less than rtol relative to its max; returns it and the refinement history."""
    density = stationary_on_grid(start_points, policy, dynamics)
    history = [DensityRefinement(start_points, math.nan)]
    while True:
        n = 2 * len(density)
        if n > max_points:
            raise RuntimeError(f"the stationary density did not converge to rtol={rtol} on {max_points} points")
        finer = stationary_on_grid(n, policy, dynamics)
        change = float(np.abs(finer[::2] - density).max() / finer.max())
        history.append(DensityRefinement(n, change))
        density = finer
        if change < rtol:
            return density, history


def load_density(path, points: int | None) -> np.ndarray:
    """A density written by solve_density (stationary_density.npy) at grid(points), points dividing its
    grid (None: its whole grid)."""
    values = load_npy(path, "stationary density")
    points = points or (len(values) if values.ndim else 1)  # a 0-d array has no len(): refused below
    if values.ndim != 1 or not len(values) or len(values) % points:
        raise InputError(f"{path}: expected a density of shape (n,) with n a multiple of {points}, got {values.shape}")
    if not np.isfinite(values).all() or (values < 0).any():
        raise InputError(f"{path}: the stationary density holds NaN, inf or negative values")
    return values[:: len(values) // points]

