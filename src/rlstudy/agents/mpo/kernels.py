"""The element-wise stretches of MPO's online torsos' backward pass (passes.py) as Numba-compiled
loops, one call where NumPy and torch took three to nine: at 128-256 rows each call cost more in
its own work than in its arithmetic. The forward pass stays NumPy's and torch's: their vector loops
run tanh and ELU's expm1 10-20x faster than a compiled scalar loop here, and torch's LayerNorm
(vectorised row sums) beat a compiled one whose sums, in a fixed order, run one after another
(docs/speed.md, "MPO").

Determinism as core/compiled_updates.py's kernels: fastmath off, loops in a fixed order, sums in
float64 row by row or column by column; compiled or loaded from Numba's cache (`__pycache__`
beside this file) at the first call. No kernel here calls another file's, so the cache sees every
change to their source.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

_F32 = np.float32


def _tanh_layer_norm_backward(grad, tanh, pre, mean, inverse_std, gamma, grad_gamma, grad_beta, grad_pre, grad_bias):
    """Given d loss / d tanh(LayerNorm(x)) (grad, overwritten), x = pre with each row's mean and
    1/std (rows x 1, torch.native_layer_norm's): the LayerNorm's weight and bias gradients,
    d loss / d x (grad_pre) and its column sums (the first Linear's bias gradient). With
    n = (x - mean) / std, g = grad (1 - tanh^2) and h = g gamma:  dx = (h - mean(h) - n mean(h n)) / std."""
    rows, width = grad.shape
    one = _F32(1.0)
    normalised = np.empty(width, np.float32)
    for j in range(width):
        grad_gamma[j] = 0.0
        grad_beta[j] = 0.0
        grad_bias[j] = 0.0
    column_gamma, column_beta, column_bias = np.zeros(width), np.zeros(width), np.zeros(width)
    for r in range(rows):
        sum_h, sum_hx = 0.0, 0.0
        for j in range(width):
            normalised[j] = (pre[r, j] - mean[r, 0]) * inverse_std[r, 0]
        for j in range(width):
            t = tanh[r, j]
            g = grad[r, j] * (one - t * t)
            column_gamma[j] += g * normalised[j]
            column_beta[j] += g
            h = g * gamma[j]
            grad[r, j] = h
            sum_h += h
            sum_hx += h * normalised[j]
        mean_h, mean_hx = sum_h / width, sum_hx / width
        for j in range(width):
            d = _F32(inverse_std[r, 0] * (grad[r, j] - mean_h - normalised[j] * mean_hx))
            grad_pre[r, j] = d
            column_bias[j] += d
    for j in range(width):
        grad_gamma[j], grad_beta[j], grad_bias[j] = column_gamma[j], column_beta[j], column_bias[j]


def _elu_backward(grad, output, grad_bias):
    """grad (d loss / d an ELU's output) becomes d loss / d its input, in place: ELU's slope is 1
    above 0, exp(z) = output + 1 below; grad_bias its column sums (the Linear's bias gradient)."""
    rows, width = grad.shape
    one = _F32(1.0)
    column = np.zeros(width)
    for r in range(rows):
        for j in range(width):
            y = output[r, j]
            g = grad[r, j] if y > 0 else grad[r, j] * (y + one)
            grad[r, j] = g
            column[j] += g
    for j in range(width):
        grad_bias[j] = column[j]


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled kernels, compiled or loaded from Numba's cache on first use."""
    from rlstudy.core.jit import njit

    compiled = {name: njit()(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy")(function)
                for name, function in (("tanh_layer_norm_backward", _tanh_layer_norm_backward),
                                       ("elu_backward", _elu_backward))}
    return SimpleNamespace(**compiled)


def warm_up() -> None:
    """Compile each kernel, or load it from the cache, for the argument types the passes give
    (C-contiguous 2-D and 1-D float32 arrays), on two rows."""
    k, rows, vector = kernels(), np.ones((2, 3), _F32), np.ones(3, _F32)
    column = np.ones((2, 1), _F32)
    k.tanh_layer_norm_backward(rows.copy(), rows, rows, column, column, vector, vector.copy(), vector.copy(),
                               rows.copy(), vector.copy())
    k.elu_backward(rows.copy(), rows, vector.copy())
