"""The element-wise stretches of MPO's passes (passes.py) as Numba-compiled loops: ELU's forward pass,
and the online torsos' backward pass, one call where NumPy and torch took three to nine (at 128-256
rows each call cost more in its own work than in its arithmetic). tanh and the LayerNorm's forward
stay NumPy's and torch's: torch's LayerNorm (vectorised row sums) beat a compiled one whose sums, in a
fixed order, run one after another (docs/speed.md, "MPO").

ELU's expm1 is computed here because NumPy's float32 expm1 is vectorised only where its SVML builds
run (AVX-512): on the AVX2 AMD EPYC it ran at 0.16 G/s, ELU most of the target critic's evaluation.
The branch-free form below vectorises on either: z = k ln 2 + r with |r| <= ln 2 / 2, e^r = 1 + q by
Cephes' expf polynomial with the 1 kept apart, so that expm1(z) = (2^k - 1) + 2^k q keeps its relative
precision near 0 (within 1 ulp of the float64 expm1; NumPy's float32 0.75); 2^k is made from its bits.

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
_LOG2E, _LN2_HI, _LN2_LO = _F32(1.44269504088896341), _F32(0.693359375), _F32(-2.12194440e-4)  # ln 2 in two parts
_EXP_1, _EXP_2, _EXP_3 = _F32(1.9875691500e-4), _F32(1.3981999507e-3), _F32(8.3334519073e-3)  # Cephes' expf
_EXP_4, _EXP_5, _EXP_6 = _F32(4.1665795894e-2), _F32(1.6666665459e-1), _F32(5.0000001201e-1)
_EXPM1_FLOOR = _F32(-87.0)  # expm1 is -1 in float32 below it; 2^k stays a normal number above it


def _float32_of_bits(bits):
    """The float32 whose bits are the int32 `bits` (an LLVM bitcast: kernels() makes it an intrinsic)."""
    raise NotImplementedError("compiled by kernels()")


def _expm1_nonpositive(x):
    """expm1(x) for x <= 0 (NaN stays NaN): (2^k - 1) + 2^k q, as the module's docstring says."""
    if x < _EXPM1_FLOOR:
        x = _EXPM1_FLOOR
    k = np.floor(x * _LOG2E + _F32(0.5))
    r = (x - k * _LN2_HI) - k * _LN2_LO
    q = (((((_EXP_1 * r + _EXP_2) * r + _EXP_3) * r + _EXP_4) * r + _EXP_5) * r + _EXP_6) * (r * r) + r
    scale = _float32_of_bits((np.int32(k) + np.int32(127)) << 23)
    return (scale - _F32(1.0)) + scale * q


def _elu(z):
    """ELU in place over a C-contiguous float32 array: z above 0, expm1(z) below."""
    flat = z.reshape(-1)
    for i in range(flat.size):
        v = flat[i]
        flat[i] = v if v > _F32(0.0) else _expm1_nonpositive(v)
    return z


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


def _bitcast_intrinsic():
    """_float32_of_bits as a Numba intrinsic."""
    from numba import types
    from numba.extending import intrinsic

    def float32_of_bits(typing_context, bits):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(types.float32))
        return types.float32(types.int32), codegen

    return intrinsic(float32_of_bits)


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled kernels, compiled or loaded from Numba's cache on first use; the helpers first,
    under their own names, where the kernels that call them find them when they compile."""
    from rlstudy.core.jit import njit

    module = globals()
    module["_float32_of_bits"] = _bitcast_intrinsic()
    module["_expm1_nonpositive"] = njit()(inline="always", fastmath=False)(_expm1_nonpositive)
    compiled = {name: njit()(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy")(function)
                for name, function in (("tanh_layer_norm_backward", _tanh_layer_norm_backward),
                                       ("elu_backward", _elu_backward), ("elu", _elu))}
    return SimpleNamespace(**compiled)


def warm_up() -> None:
    """Compile each kernel, or load it from the cache, for the argument types the passes give
    (C-contiguous 2-D and 1-D float32 arrays), on two rows."""
    k, rows, vector = kernels(), np.ones((2, 3), _F32), np.ones(3, _F32)
    column = np.ones((2, 1), _F32)
    k.tanh_layer_norm_backward(rows.copy(), rows, rows, column, column, vector, vector.copy(), vector.copy(),
                               rows.copy(), vector.copy())
    k.elu_backward(rows.copy(), rows, vector.copy())
    k.elu(rows.copy())
