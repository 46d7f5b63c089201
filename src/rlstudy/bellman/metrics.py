"""The error metric of the notebook, on a fixed grid of the circle.

    e = sqrt(2*pi/n) * || (Q - Q*) - mean_s(Q - Q*) ||_F

over the n grid points s_i = 2*pi*i/n (i < n) and both actions. Subtracting the mean per action
removes the constant offset, which the Bellman residual pins down only slowly (by 1 - gamma).
The notebook's CBO code overwrote n with the dataset size; here n is always the grid size.

A run is measured against two references: the learned Q* (the notebook's metric, column `error`)
and the exact Q of bellman/exact.py (column `error_exact`).

The per-action centring is blind to an offset between the actions: adding +1 to Q(., +1) and -1
to Q(., -1) leaves e at 0, yet it changes the greedy action wherever the two were closer than 2.
The Bellman equation does pin that offset (only the offset common to both actions is slow), so

    e_common = sqrt(2*pi/n) * || D - mean(D) ||_F,   one mean over the states and both actions

is the metric that sees it (common_centred_error; summarise reports it beside the notebook's).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import exact
from .greedy import GreedyJudge
from .qnet import features, forward

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


def exact_scores(theta: torch.Tensor, exact_q: np.ndarray, judge: GreedyJudge | None) -> dict[str, float]:
    """A network measured against the exact Q (exact_q: its whole grid, (n, 2)): both centred errors
    on the metric's grid, each divided by the exact Q's own norm in that metric (0: exact, 1: as far
    off as a flat Q), and, for control (a judge of its optimal Q), its greedy policy's score
    (greedy.py; NaN for evaluation, whose Q is of a fixed policy, not one to act greedily on)."""
    reference = torch.from_numpy(exact_q[:: len(exact_q) // GRID_POINTS])
    q = q_on_grid(theta.cpu()).to(torch.float64)
    greedy = judge.score(q_on_grid(theta.cpu(), judge.n).double().numpy()) if judge is not None else None
    return {"error_exact_normalised": centred_error(q, reference) / centred_norm(reference),
            "error_exact_common_normalised": common_centred_error(q, reference) / common_centred_norm(reference),
            "greedy_shortfall": greedy.shortfall if greedy else math.nan,
            "greedy_wrong_share": greedy.wrong_share if greedy else math.nan}
