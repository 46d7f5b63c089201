"""(a) The network's reach: the regression of the network to the exact Q on a grid, its points weighted
alike (reach) or as the residual fits weigh them (reach_weighted)."""

from __future__ import annotations

import numpy as np
import torch

from ..problem import exact
from ..numerics.compiled.qnet import forward
from .grid import features64
from .interpolation import resample, weights_on


def regression_loss(target: np.ndarray, points: int, weights: np.ndarray | None = None):
    """Mean squared distance to a target Q (n, 2) on grid(n), at the points of grid(points) (resample);
    with weights (weights_on), the points' squares are weighted by them, each action alike."""
    values = torch.from_numpy(resample(target, points))
    feats = features64(exact.grid(points))
    if weights is None:
        def loss(theta):
            return ((forward(theta, feats) - values) ** 2).mean()
        return loss
    point_weights = torch.from_numpy(weights_on(weights, points))[:, None] / values.shape[1]

    def weighted_loss(theta):
        return (point_weights * (forward(theta, feats) - values) ** 2).sum()
    return weighted_loss
