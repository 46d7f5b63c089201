"""The error metric of the notebook, on a fixed grid of the circle.

    e = sqrt(2*pi/n) * || (Q - Q*) - mean_s(Q - Q*) ||_F

over the n grid points s_i = 2*pi*i/n (i < n) and both actions. Subtracting the mean per action
removes the constant offset, which the Bellman residual pins down only slowly (by 1 - gamma).
The notebook's CBO code overwrote n with the dataset size; here n is always the grid size.

A run is measured against two references: the learned Q* (the notebook's metric, column `error`)
and the exact Q of bellman/exact.py (column `error_exact`).
"""

from __future__ import annotations

import math

import torch

from . import exact
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
