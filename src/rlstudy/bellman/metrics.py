"""The error metric of the notebook, on a fixed grid of the circle.

    e = sqrt(2*pi/n) * || (Q - Q*) - mean_s(Q - Q*) ||_F

over the n grid points s_i = 2*pi*i/n (i < n) and both actions. Subtracting the mean per action
removes the constant offset, which the Bellman residual pins down only slowly (by 1 - gamma).
The notebook's CBO code overwrote n with the dataset size; here n is always the grid size.
"""

from __future__ import annotations

import math

import torch

from .qnet import features, forward

GRID_POINTS = 100


def grid(n: int = GRID_POINTS) -> torch.Tensor:
    """n equally spaced states on [0, 2*pi), float64."""
    return torch.arange(n, dtype=torch.float64) * (2 * math.pi / n)


class ErrorMeter:
    """Evaluates e(theta) against a fixed reference, with the grid's features computed once."""

    def __init__(self, reference_theta: torch.Tensor, n: int = GRID_POINTS):
        self.n = n
        self.feats = features(grid(n)).to(reference_theta.device)  # on the CPU: the same tensor
        with torch.no_grad():
            self.reference = forward(reference_theta, self.feats)

    @torch.no_grad()
    def __call__(self, theta: torch.Tensor) -> float:
        return centred_error(forward(theta, self.feats), self.reference)


def centred_error(q: torch.Tensor, q_ref: torch.Tensor) -> float:
    """sqrt(2*pi/n) * ||D - colmean(D)||_F with D = q - q_ref, both of shape (n, actions)."""
    diff = (q - q_ref).to(torch.float64)
    centred = diff - diff.mean(dim=0, keepdim=True)
    return math.sqrt(2 * math.pi / q.shape[0]) * float(torch.linalg.norm(centred))
