"""The error metric of the notebook, on a fixed grid of the circle.

    e = sqrt(2*pi/n) * || (Q - Q*) - mean_s(Q - Q*) ||_F

over the n grid points s_i = 2*pi*i/n (i < n) and both actions. Subtracting the mean per action
removes the constant offset, which the Bellman residual pins down only slowly (by 1 - gamma).
The notebook's CBO code overwrote n with the dataset size; here n is always the grid size.

A run is measured against two references: the learned Q* (the notebook's metric, column `error`)
and the exact Q of bellman/problem/exact.py (column `error_exact`).

The per-action centring is blind to an offset between the actions: adding +1 to Q(., +1) and -1
to Q(., -1) leaves e at 0, yet it changes the greedy action wherever the two were closer than 2.
The Bellman equation does pin that offset (only the offset common to both actions is slow), so

    e_common = sqrt(2*pi/n) * || D - mean(D) ||_F,   one mean over the states and both actions

is the metric that sees it (common_centred_error; summarise reports it beside the notebook's).

Both weigh every state alike, though the data of a task are not spread alike: the evaluation
task's behaviour policy piles its states near s = pi (bellman/problem/stationary.py). Weighted by the
stationary density w (mean 1 over the grid),

    e_w = sqrt(2*pi/n * sum_i w_i sum_a (D_ia - m_a)^2),   m_a = sum_i w_i D_ia / sum_i w_i,

measures Q where the data are (weighted_centred_error); with w = 1 it is e itself.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..problem import exact
from ..problem.greedy import GreedyJudge
from ..numerics.compiled.qnet import features, forward

GRID_POINTS = 100


def grid(n: int = GRID_POINTS) -> torch.Tensor:
    """n equally spaced states on [0, 2*pi), float64 (the exact Q's grids hold them: exact.grid)."""
    return torch.from_numpy(exact.grid(n))


def grid_features(device: torch.device | str = "cpu", n: int = GRID_POINTS) -> torch.Tensor:
    return features(grid(n)).to(device)


@torch.no_grad()
def q_on_grid(theta: torch.Tensor, n: int = GRID_POINTS) -> torch.Tensor:
    """A network's Q at the grid's points, shape (n, actions)."""
    return forward(theta, grid_features(theta.device, n))


class ErrorMeter:
    """Evaluates e(theta) against fixed references, each Q of shape (n, actions) on the grid,
    with the grid's features computed once; a call returns {name: error}."""

    def __init__(self, references: dict[str, torch.Tensor]):
        self.n = len(next(iter(references.values())))
        self.references = references
        self.feats = grid_features(next(iter(references.values())).device, self.n)

    @torch.no_grad()
    def __call__(self, theta: torch.Tensor) -> dict[str, float]:
        q = forward(theta, self.feats)
        return {name: centred_error(q, reference) for name, reference in self.references.items()}


def centred_norm(q: torch.Tensor) -> float:
    """The centred error of q against zero: how far q is from a flat Q (one constant per action)."""
    return centred_error(torch.zeros_like(q), q)


def centred_error(q: torch.Tensor, q_ref: torch.Tensor) -> float:
    """sqrt(2*pi/n) * ||D - colmean(D)||_F with D = q - q_ref, both of shape (n, actions)."""
    diff = (q - q_ref).to(torch.float64)
    centred = diff - diff.mean(dim=0, keepdim=True)
    return math.sqrt(2 * math.pi / q.shape[0]) * float(torch.linalg.norm(centred))


def common_centred_error(q: torch.Tensor, q_ref: torch.Tensor) -> float:
    """sqrt(2*pi/n) * ||D - mean(D)||_F with D = q - q_ref: one mean over the states and both actions,
    so an offset between the actions counts."""
    diff = (q - q_ref).to(torch.float64)
    return math.sqrt(2 * math.pi / q.shape[0]) * float(torch.linalg.norm(diff - diff.mean()))


def common_centred_norm(q: torch.Tensor) -> float:
    """The common-centred error of q against zero: how far q is from one constant over both actions."""
    return common_centred_error(torch.zeros_like(q), q)


def weighted_centred_error(q: torch.Tensor, q_ref: torch.Tensor, weights: torch.Tensor) -> float:
    """sqrt(2*pi/n * sum_i w_i sum_a (D_ia - m_a)^2), D = q - q_ref (n, actions), m_a the w-weighted
    mean of D over the states; weights (n,), mean 1 (the stationary density of stationary.py)."""
    diff = (q - q_ref).to(torch.float64)
    w = weights.to(torch.float64)[:, None]
    centred = diff - (w * diff).sum(dim=0, keepdim=True) / w.sum()
    return math.sqrt(2 * math.pi / q.shape[0] * float((w * centred**2).sum()))


def weighted_centred_norm(q: torch.Tensor, weights: torch.Tensor) -> float:
    """The weighted centred error of q against zero."""
    return weighted_centred_error(torch.zeros_like(q), q, weights)


def exact_scores(theta: torch.Tensor, exact_q: np.ndarray, judge: GreedyJudge | None,
                 density: np.ndarray | None = None) -> dict[str, float]:
    """A network measured against the exact Q (exact_q: its whole grid, (n, 2)): both centred errors
    on the metric's grid, each divided by the exact Q's own norm in that metric (0: exact, 1: as far
    off as a flat Q), and, for control (a judge of its optimal Q), its greedy policy's score
    (greedy.py; NaN for evaluation, whose Q is of a fixed policy, not one to act greedily on); given
    the behaviour policy's stationary density on the metric's grid, also the density-weighted
    centred error over the exact Q's weighted norm (NaN without one)."""
    reference = torch.from_numpy(exact_q[:: len(exact_q) // GRID_POINTS])
    q = q_on_grid(theta.cpu()).to(torch.float64)
    greedy = judge.score(q_on_grid(theta.cpu(), judge.n).double().numpy()) if judge is not None else None
    weighted = math.nan
    if density is not None:
        weights = torch.from_numpy(np.asarray(density, dtype=np.float64))
        weighted = weighted_centred_error(q, reference, weights) / weighted_centred_norm(reference, weights)
    return {"error_exact_normalised": centred_error(q, reference) / centred_norm(reference),
            "error_exact_common_normalised": common_centred_error(q, reference) / common_centred_norm(reference),
            "greedy_shortfall": greedy.shortfall if greedy else math.nan,
            "greedy_wrong_share": greedy.wrong_share if greedy else math.nan,
            "error_exact_weighted_normalised": weighted}


def error_by_mode(q: np.ndarray, q_ref: np.ndarray, modes: int) -> np.ndarray:
    """The error of q against q_ref (both (n, actions) on grid(n)) by Fourier mode k = 0..modes:
    e_k = sqrt(2*pi * sum_a c_k |D^_ak / n|^2), D^ the FFT over the states of D = q - q_ref, c_k = 2
    for the modes a real signal holds twice (0 < k < n/2), 1 otherwise. So e_0 is the per-action
    offset the centred error ignores, and sum_{k >= 1} e_k^2 over all modes is centred_error^2."""
    n = len(q)
    if not 0 <= modes <= n // 2:
        raise ValueError(f"modes must be in [0, {n // 2}] for a grid of {n} points, got {modes}")
    spectrum = np.fft.rfft(np.asarray(q, dtype=np.float64) - q_ref, axis=0)[: modes + 1] / n
    k = np.arange(modes + 1)
    twice = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    return np.sqrt(2 * math.pi * twice * (np.abs(spectrum) ** 2).sum(axis=1))
