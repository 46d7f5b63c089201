"""Float32 cosine, and sine and cosine of one argument together, compiled with Numba.

The Q network's two cosine layers are most of the SGD and CBO steps' arithmetic, and SGD's
backward pass needs the sine of the same pre-activations. NumPy computes each separately; here
one pass reduces the argument once and evaluates both polynomials (benchmarks/floor.py measures
both against NumPy's):

    k = round(x * 2/pi),   r = x - k * pi/2   (pi/2 in three parts, Cody-Waite: exact for |x| < LIMIT)
    sin r, cos r: Cephes' float32 minimax polynomials on |r| <= pi/4
    (sin x, cos x) = (s, c), (c, -s), (-s, -c), (-c, s) for k = 0, 1, 2, 3 (mod 4)

Max abs error about 1e-7 against the float64 cosine (NumPy's float32 cosine: 7e-8); the tests
check it. Determinism: every step is an IEEE float32 operation with no fused multiply-add
(`fastmath` off, which also forbids reassociation), so a value depends only on its input, not
on the vector width the CPU gives LLVM: reruns are byte-identical, and so are machines with
another SIMD unit (NumPy's own float32 cosine picks a different implementation per CPU).

Range: NaN and inf give NaN as they should, but finite |x| >= LIMIT would be reduced inexactly.
The kernels do not test every argument (that costs a fifth of their time); the caller passes
them only arguments it has bounded below LIMIT (qnet: |W h + b| <= max_j(|b_j| + sum_i |W_ji|)
for inputs |h_i| <= 1) and uses NumPy otherwise.

Beside the cosines, the network's layers around them (qnet.py's compiled passes): a cosine layer
by blocks of rows, and the backward passes through the narrow input and output layers, each one
pass with every sum over rows in float64.

The output must not be the input array: LLVM vectorises the loop only when they do not overlap.
Numba is imported, and the kernels compiled (or loaded from its on-disk cache, `__pycache__`
beside this file), at the first call only: processes that never evaluate the network do not pay
for it. The kernels are plain functions below, compiled by kernels(), and call one another by their
module-level names: Numba's cache key holds the pickled values of a function's closure, and a
compiled function captured in a closure pickles differently in every process, so the cache missed
in every job and each recompiled its kernels (seconds per job; tests/unit/bellman/test_residuals.py
checks a second process loads them from the cache).
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np

from rlstudy.core.jit import njit

LAYER_BLOCK = 4096  # float32 pre-activations per block of cos_layer: 16 KB, half of L1
LIMIT = 8192.0  # beyond this |x| the three-part pi/2 no longer reduces exactly in float32 (Cephes' bound)

_F32 = np.float32
_TWO_OVER_PI = _F32(2.0 / math.pi)
_PIO2_1, _PIO2_2, _PIO2_3 = _F32(1.5703125), _F32(4.837512969970703125e-4), _F32(7.54978995489188216e-8)  # sum: pi/2
_SIN_1, _SIN_2, _SIN_3 = _F32(-1.6666654611e-1), _F32(8.3321608736e-3), _F32(-1.9515295891e-4)
_COS_1, _COS_2, _COS_3 = _F32(4.166664568298827e-2), _F32(-1.388731625493765e-3), _F32(2.443315711809948e-5)
_HALF, _ONE, _MINUS_ONE = _F32(0.5), _F32(1.0), _F32(-1.0)


def _reduced(x):
    """(sin r, cos r, k) for x = k pi/2 + r, |r| <= pi/4: Cody-Waite reduction in three parts of
    pi/2, then the minimax polynomials."""
    k = np.floor(x * _TWO_OVER_PI + _HALF)
    r = ((x - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    r2 = r * r
    s = r + r * r2 * (_SIN_1 + r2 * (_SIN_2 + r2 * _SIN_3))
    c = _ONE - _HALF * r2 + r2 * r2 * (_COS_1 + r2 * (_COS_2 + r2 * _COS_3))
    return s, c, np.int32(k)


def _cos_of(x):
    s, c, q = _reduced(x)
    v = s if q & 1 else c  # k odd: cos x = -+sin r
    return -v if (q + 1) & 2 else v  # negative for k = 1, 2 (mod 4)


def _sin_cos_of(x):
    s, c, q = _reduced(x)
    sv = c if q & 1 else s
    cv = s if q & 1 else c
    return (-sv if q & 2 else sv), (-cv if (q + 1) & 2 else cv)  # sin x < 0 for k = 2, 3 (mod 4)


def _cos_kernel(z, out):
    """out[i] = cos(z[i]) for 1-d float32 arrays that do not overlap."""
    for i in range(z.size):
        out[i] = _cos_of(z[i])


def _sincos_kernel(z, sin_out, cos_out, sine_sign):
    """sin_out[i], cos_out[i] = sine_sign * sin(z[i]), cos(z[i]), as _cos_kernel (sine_sign = +-1:
    -sin is the derivative of cos, and multiplying by -1 is exact)."""
    for i in range(z.size):
        s, c = _sin_cos_of(z[i])
        sin_out[i] = s * sine_sign
        cos_out[i] = c


def _cos_layer(x, weight_t, bias, product, dcos_out, cos_out):
    """A cosine layer: z = bias + product[i] + x[i] @ weight_t, then cos z into cos_out and, where
    dcos_out has rows, -sin z into it. A wide layer's product comes from BLAS (x then has no
    columns); a narrow one's (x with a few columns, the network's input) is summed here, term by
    term in k order, with product empty. By blocks of rows that stay in L1: z is never written
    out, and each block's cosines run as one flat loop (row by row, the short rows' loop set-up
    and remainders doubled the time). Each row's z is one loop (a loop per term cost a sixth of
    the layer's time more)."""
    rows, width = cos_out.shape
    block = max(1, LAYER_BLOCK // width)
    z = np.empty(block * width, np.float32)
    cos_flat = cos_out.reshape(-1)
    dcos_flat = dcos_out.reshape(-1)
    for start in range(0, rows, block):
        stop = min(start + block, rows)
        for i in range(start, stop):
            zi = z[(i - start) * width:(i - start + 1) * width]
            if product.shape[0]:
                for j in range(width):
                    zi[j] = bias[j] + product[i, j]
            elif x.shape[1] == 2:  # the network's input (sin s, cos s): one loop, not three
                x0, x1 = x[i, 0], x[i, 1]
                for j in range(width):
                    zi[j] = (bias[j] + x0 * weight_t[0, j]) + x1 * weight_t[1, j]
            else:
                for j in range(width):
                    zi[j] = bias[j]
                for k in range(x.shape[1]):
                    xk = x[i, k]
                    for j in range(width):
                        zi[j] += xk * weight_t[k, j]
        done, size = start * width, (stop - start) * width
        if dcos_out.shape[0]:
            _sincos_kernel(z[:size], dcos_flat[done:done + size], cos_flat[done:done + size], _MINUS_ONE)
        else:
            _cos_kernel(z[:size], cos_flat[done:done + size])


def _output_row_backward(grad_q, weight, h, dcos, grad_z, back, grad_weight, grad_bias, grad_bias_z):
    """Back through q = weight @ h + b, h = cos z (a narrow output layer), for one row (grad_q, h, dcos,
    grad_z: the row's; back: scratch of h's width): grad_weight += grad_q (x) h, grad_bias += grad_q,
    grad_z = (grad_q @ weight) * dcos (dcos = -sin z) and grad_bias_z += grad_z, the sums in float64.
    An action the row's gradient does not reach is skipped: its terms would add zeros."""
    width = h.shape[0]
    for j in range(width):
        back[j] = 0
    for a in range(grad_q.shape[0]):
        g = grad_q[a]
        grad_bias[a] += np.float64(g)
        if g == 0:
            continue
        for j in range(width):
            back[j] += g * weight[a, j]
            grad_weight[a, j] += np.float64(g) * np.float64(h[j])
    for j in range(width):
        v = back[j] * dcos[j]
        grad_z[j] = v
        grad_bias_z[j] += np.float64(v)


def _input_backward(back, dcos, x, grad_weight_t, grad_bias):
    """Back into z = x @ weight_t + b, h = cos z (a narrow input layer), from back = dL/dh:
    grad_z = back * dcos, then grad_weight_t += x[i] (x) grad_z and grad_bias += grad_z in float64;
    grad_z is never written out."""
    rows, width = back.shape
    g = np.empty(width, np.float64)
    for i in range(rows):
        for j in range(width):
            g[j] = np.float64(back[i, j] * dcos[i, j])
            grad_bias[j] += g[j]
        for k in range(x.shape[1]):
            xk = np.float64(x[i, k])
            for j in range(width):
                grad_weight_t[k, j] += xk * g[j]


def _layer_bound(weight, bias):
    """max_j(|b_j| + sum_i |W_ji|): a bound on |W h + b| for |h_i| <= 1 (NaN if any is NaN)."""
    bound = 0.0
    for j in range(weight.shape[0]):
        row = np.float64(abs(bias[j]))  # float64 sums: the bound does not round below the truth
        for i in range(weight.shape[1]):
            row += np.float64(abs(weight[j, i]))
        if row > bound or row != row:  # a NaN row sticks: no later row compares above it
            bound = row
    return bound


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled kernels, compiled or loaded from Numba's cache on first use. Each function above
    is replaced by its compiled self under its own name, helpers first: the kernels that call them
    find them there when they compile."""
    jit = njit()
    module = globals()
    for name in ("_reduced", "_cos_of", "_sin_cos_of", "_output_row_backward"):
        module[name] = jit(inline="always", fastmath=False)(module[name])
    # fastmath off: no FMA contraction and no reassociation (the bits do not depend on the SIMD unit)
    for name in ("_cos_kernel", "_sincos_kernel", "_cos_layer", "_input_backward", "_layer_bound"):
        module[name] = jit(cache=True, fastmath=False, boundscheck=False, nogil=True)(module[name])
    return SimpleNamespace(cos=_cos_kernel, sincos=_sincos_kernel, cos_layer=_cos_layer,
                           input_backward=_input_backward,
                           output_row_backward=_output_row_backward, layer_bound=_layer_bound)


def warm_up() -> None:
    """Load each kernel's machine code for the arguments it is called with (C-contiguous float32
    arrays, float64 for the gradients' sums), without running it: what a first call does, for a
    process whose forks will call them (runtime/warmstart/)."""
    from numba import float32, float64, types

    k = kernels()
    f32, f64 = ({n: types.Array(t, n, "C") for n in (1, 2)} for t in (float32, float64))
    k.cos.compile((f32[1], f32[1]))
    k.sincos.compile((f32[1], f32[1], f32[1], float32))
    k.cos_layer.compile((f32[2],) * 2 + (f32[1],) + (f32[2],) * 3)
    k.input_backward.compile((f32[2],) * 3 + (f64[2], f64[1]))
    k.layer_bound.compile((f32[2], f32[1]))


def bounded(weight: np.ndarray, bias: np.ndarray) -> bool:
    """Whether every |W h + b| with |h_i| <= 1 is below LIMIT (False for NaN or inf weights)."""
    return bool(kernels().layer_bound(weight, bias) < LIMIT)


def cos(z: np.ndarray) -> np.ndarray:
    """cos(z) as a new float32 array; z C-contiguous float32 with every |z| < LIMIT (see above)."""
    out = np.empty_like(z)
    kernels().cos(z.reshape(-1), out.reshape(-1))
    return out


def sincos(z: np.ndarray, negate_sine: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(sin z, cos z), or (-sin z, cos z), as new float32 arrays, under cos's conditions."""
    sine, cosine = np.empty_like(z), np.empty_like(z)
    kernels().sincos(z.reshape(-1), sine.reshape(-1), cosine.reshape(-1), _F32(-1.0 if negate_sine else 1.0))
    return sine, cosine
