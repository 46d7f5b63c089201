"""The residuals' compiled passes (Numba): CBO's loss of a particle, and SGD's residuals with the
output layer's backward pass, each one pass over the transitions of a part of the batch. What
residuals.residual_pair, residuals.sgd_grad_q, loss.bellman_loss and the output layer of
qnet.backward compute with some twenty tensor operations, here one loop whose rows (s_m and s^'_m,
in the stacked layout [s; s^']) stay in the cache:

    j^ = r^ + gamma V(s^') - Q(s, a),   j = r + gamma V(s') - Q(s, a)   (j = j^ for DS)
    CBO: L = mean(j j^) / 2, the sum over the transitions in float64
    SGD: d mean(j j^)/dQ with j fixed: -j/M at Q(s_m, a_m); gamma j/M at V(s^'), spread by pi(.|s^')
    (evaluation) or sent to the larger action, the first of two equal ones as torch.argmax does;
    then, for each of the two rows: dL/dz2 = (dL/dQ @ W3) * (-sin z2), and the sums over rows of
    dL/dW3 = dL/dQ (x) h2, dL/db3 = dL/dQ and dL/db2 = dL/dz2 in float64

Every term is a float32 operation of the tensor code's, in its order; the sums over rows are
float64, one accumulator each, in the rows' order (the mini-batch's parts add to the same ones).
tests/unit/bellman/test_numerics.py holds both against the reference layer.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from .trig import _output_row_backward  # replaced by its compiled self in kernels()


def _state_value(q, row, probs, m):
    """V of a row of q (the network's two actions) and the action it takes: the larger action's Q and
    its index (control: probs has no rows; the first of two equal ones, as torch.argmax), else the
    policy's mean and -1. Written for two actions: a loop over the actions ran twenty times slower."""
    q0, q1 = q[row, 0], q[row, 1]
    if probs.shape[0] == 0:
        return (q1, 1) if q1 > q0 else (q0, 0)
    return q0 * probs[m, 0] + q1 * probs[m, 1], -1


def _residual_backward(q_main, q_next, actions, rewards, alt_rewards, alt_probs, next_probs, gamma, batch_size,
                       weight, h, dcos, j_out, j_hat_out, q_taken_out, grad_z, grad_weight, grad_bias,
                       grad_bias_z):
    """One part of P transitions: q_main (2P, A) at [s; s^'], q_next (P, A) at s' (no rows: DS),
    the probabilities pi(.|s^'), pi(.|s') (no rows: control); h, dcos (2P, width): the last cosine
    layer's output and -sin; weight (A, width): W3. Writes j, j^, Q(s, a) (P,) and grad_z (2P, width);
    adds to grad_weight (A, width), grad_bias (A,), grad_bias_z (width,)."""
    part, outs = len(actions), q_main.shape[1]
    grad_q = np.empty(outs, np.float32)
    back = np.empty(h.shape[1], np.float32)
    for m in range(part):
        q_s = q_main[m, actions[m]]
        v_alt, best = _state_value(q_main, part + m, alt_probs, m)
        j_hat = alt_rewards[m] + gamma * v_alt - q_s
        j = j_hat
        if q_next.shape[0]:
            v_next, _ = _state_value(q_next, m, next_probs, m)
            j = rewards[m] + gamma * v_next - q_s
        j_out[m], j_hat_out[m], q_taken_out[m] = j, j_hat, q_s
        w = j / batch_size
        for side in range(2):
            row = m if side == 0 else part + m
            for a in range(outs):
                if side == 0:
                    grad_q[a] = -w if a == actions[m] else np.float32(0.0)
                elif best >= 0:
                    grad_q[a] = gamma * w if a == best else np.float32(0.0)
                else:
                    grad_q[a] = gamma * w * alt_probs[m, a]
            _output_row_backward(grad_q, weight, h[row], dcos[row], grad_z[row], back, grad_weight, grad_bias,
                                 grad_bias_z)


def _particle_loss(q_main, q_next, actions, rewards, alt_rewards, alt_probs, next_probs, gamma):
    """mean(j j^) / 2 of one network's Q: q_main (2P, A) at [s; s^'], q_next (P, A) at s' (no rows: DS),
    the probabilities pi(.|s^'), pi(.|s') (no rows: control)."""
    part = len(actions)
    total = 0.0
    for m in range(part):
        q_s = q_main[m, actions[m]]
        j_hat = alt_rewards[m] + gamma * _state_value(q_main, part + m, alt_probs, m)[0] - q_s
        j = j_hat
        if q_next.shape[0]:
            j = rewards[m] + gamma * _state_value(q_next, m, next_probs, m)[0] - q_s
        total += np.float64(j * j_hat)
    return total / part / 2.0


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled passes (fastmath off: no reassociation, so the bits do not depend on the SIMD unit)."""
    from . import trig

    jit = trig.njit()
    module = globals()
    module["_state_value"] = jit(inline="always", fastmath=False)(_state_value)
    module["_output_row_backward"] = trig.kernels().output_row_backward  # trig's row of the output layer's pass
    options = {"cache": True, "fastmath": False, "boundscheck": False, "nogil": True}
    return SimpleNamespace(residual_backward=jit(**options)(module["_residual_backward"]),
                           particle_loss=jit(**options)(module["_particle_loss"]))


def warm_up() -> None:
    """Load the passes' machine code for the arguments the compiled backend passes, without running them."""
    from numba import float32, float64, int64, types

    f32, f64 = ({n: types.Array(t, n, "C") for n in (1, 2)} for t in (float32, float64))
    i64 = types.Array(int64, 1, "C")
    k = kernels()
    k.residual_backward.compile((f32[2], f32[2], i64, f32[1], f32[1], f32[2], f32[2], float32, float32, f32[2],
                                 f32[2], f32[2], f32[1], f32[1], f32[1], f32[2], f64[2], f64[1], f64[1]))
    k.particle_loss.compile((f32[2], f32[2], i64, f32[1], f32[1], f32[2], f32[2], float32))
