"""Between grids and states: weights given on one grid read on another, Q on one grid resampled on
another, and where states fall between the points of a grid (the finite-data fit's linear
interpolation)."""

from __future__ import annotations

import math

import numpy as np

from rlstudy.core.errors import InputError

from ..problem import exact


def weights_on(weights: np.ndarray | None, n: int) -> np.ndarray:
    """Weights summing to 1 on grid(n): uniform when None; a density on grid(m) is read at the
    points of grid(n) (every (m/n)-th value when n divides m, else periodic linear interpolation)."""
    if weights is None:
        return np.full(n, 1.0 / n)
    m = len(weights)
    if m % n == 0:
        values = weights[:: m // n]
    else:
        values = exact.interpolate(weights[:, None], exact.grid(n))[:, 0]
    if not values.sum() > 0:
        raise InputError(f"the weights vanish at every point of the {n}-point grid")
    return values / values.sum()


def resample(values: np.ndarray, points: int) -> np.ndarray:
    """Q (n, actions) on grid(n) at the points of grid(points): every (n/points)-th row when points
    divides n, else the trigonometric interpolant (the exact Q is smooth: the kernel's Gaussian damps
    its high modes, exact.py)."""
    n = len(values)
    if n % points == 0:
        return np.ascontiguousarray(values[:: n // points], dtype=np.float64)
    spectrum = np.fft.rfft(values, axis=0)
    keep = min(n, points) // 2 + 1
    resized = np.zeros((points // 2 + 1, values.shape[1]), dtype=complex)
    resized[:keep] = spectrum[:keep]
    for size, last in ((n, keep - 1), (points, keep - 1)):
        if size % 2 == 0 and last == size // 2:  # a Nyquist mode is a cosine of half the weight
            resized[last] *= 0.5 if size == min(n, points) else 1.0
    return np.fft.irfft(resized, n=points, axis=0) * (points / n)


def interpolation(s: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where angles fall on grid(points): the lower and upper neighbours, the fraction f of the way
    to the upper one, and 1 - f (the value at s is lower's (1 - f) + upper's f)."""
    position = np.mod(np.asarray(s, dtype=np.float64), 2 * math.pi) * (points / (2 * math.pi))
    lower = np.floor(position)
    fraction = position - lower
    lower = lower.astype(np.int64) % points
    return lower, (lower + 1) % points, fraction, 1.0 - fraction
