"""What each part's step writes: the network's errors against the exact Q, measured as summarise
measures a run, the weights they are measured under, and the part's two tables (error.csv's row,
fit.csv's history)."""

from __future__ import annotations

import math

import numpy as np
import torch

from rlstudy.core.errors import InputError

from ..learners.metrics import GRID_POINTS, exact_scores
from ..problem.stationary import load_density
from .interpolation import weights_on
from .lbfgs import Fit


def scores(theta: torch.Tensor, exact_q: np.ndarray, weights: np.ndarray | None) -> dict[str, float]:
    """A network measured against the exact Q as summarise measures a run (metrics.exact_scores, on the
    saved float32 network): error_exact_normalised, and with weights error_exact_weighted_normalised."""
    density = None if weights is None else weights_on(weights, GRID_POINTS)  # its scale cancels in the ratio
    measured = exact_scores(theta.detach().to(torch.float32).cpu(), exact_q, None, density)
    names = ["error_exact_normalised", *(["error_exact_weighted_normalised"] if weights is not None else [])]
    for name in names:
        if not math.isfinite(measured[name]):
            raise FloatingPointError(f"{name} is {measured[name]}: the network's Q is not finite")
    return {name: measured[name] for name in names}


def load_weights(path) -> np.ndarray | None:
    """The optional --weights density (None: uniform), checked as every stationary density is."""
    if path is None:
        return None
    try:
        weights = load_density(path, None)
    except InputError as err:
        raise InputError(f"--weights: {err}") from err
    if not weights.sum() > 0:
        raise InputError(f"--weights: {path}: the weights vanish everywhere")
    return weights.astype(np.float64)


def part_table(keys: dict, fit: Fit, exact_q: np.ndarray, weights: np.ndarray | None, extra: dict | None = None):
    """(error.csv's one row, fit.csv's history) of a fitted part: its keys, its errors (scores), the final
    loss, the iterations spent and whether the loss stopped moving."""
    import pandas as pd

    row = {**keys, **scores(fit.theta, exact_q, weights), "final_loss": fit.history[-1]["loss"],
           "iterations": fit.history[-1]["iterations"], "converged": fit.converged, **(extra or {})}
    history = pd.DataFrame([{**keys, **entry} for entry in fit.history])
    return pd.DataFrame([row]), history
