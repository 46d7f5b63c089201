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

SGD's whole mini-batch is one call (_sgd_direction): the network's passes (trig.py's layer passes,
the 50x50 products by the BLAS sgemm of core/compiled_updates._gemm), the residuals and the backward
pass, part after part, with no Python between them (their calls were a fifth of a mini-batch).
A batch's transitions are gathered from the packed table in one pass too (_gather_transitions).
It calls kernels of two other files, and Numba's cache notices changes to a kernel's own file only:
so the digest of those files rides in its closure, which Numba's cache key holds (kernels()).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from rlstudy.core import compiled_updates
from rlstudy.core.compiled_updates import _aligned, _gemm, _padded  # each replaced by its compiled self in kernels()
from rlstudy.core.jit import njit

from . import trig
from .trig import LIMIT
from .trig import _cos_layer, _input_backward, _layer_bound, _output_row_backward  # likewise


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


def _gather_transitions(table, starts, s, ahead, actions, rewards, feats):
    """A batch's rows of the packed table (residuals.TRANSITION_COLUMNS), each read once, into the
    arrays a batch is made of: s_m and (s_{m+1}, s_{m+2}) in float64, a_m as an index, r_m and the
    features of [s_m; s_{m+1}] (feats: 2m rows) in float32, the conversions PyTorch's .long() and
    .float() make (every value of the table is exact in float64). A start outside the table raises, as
    PyTorch's gather does (the reads are not bounds-checked otherwise)."""
    m = starts.shape[0]
    for i in range(m):
        row = starts[i]
        if row < 0 or row >= table.shape[0]:
            raise IndexError("a batch's start is outside the trajectory's transitions")
        s[i] = table[row, 0]
        ahead[i, 0], ahead[i, 1] = table[row, 1], table[row, 2]
        rewards[i] = np.float32(table[row, 3])
        actions[i] = np.int64(table[row, 4])
        feats[i, 0], feats[i, 1] = np.float32(table[row, 5]), np.float32(table[row, 6])
        feats[m + i, 0], feats[m + i, 1] = np.float32(table[row, 7]), np.float32(table[row, 8])


def _forward_rows(x, w1_t, b1, w2, b2, w3_t, b3, h1, dcos1, z2, h2, dcos2, q):
    """Q of the rows x into q, keeping each cosine layer's output and -sin where dcos1 and dcos2 have
    rows (none: Q alone): the input layer in trig's pass, the 50x50 product by the BLAS sgemm
    (core/compiled_updates._gemm), the narrow output product by np.dot, then its bias."""
    none = np.empty((0, 0), np.float32)  # an absent operand (a global would be typed read-only)
    _cos_layer(x, w1_t, b1, none, dcos1, h1)
    _gemm(h1, False, w2, True, z2)
    _cos_layer(none, none, b2, z2, dcos2, h2)
    _gemm(h2, False, w3_t, False, q)
    for r in range(q.shape[0]):
        for a in range(q.shape[1]):
            q[r, a] += b3[a]


def _sgd_direction_keyed(sources: str):
    """_sgd_direction with `sources`, the digest of the files whose kernels it calls, in its closure."""

    def _sgd_direction(feats, next_feats, w1_t, b1, w2, b2, w3, b3, actions, rewards, alt_rewards, alt_probs,
                       next_probs, gamma, part, j_out, j_hat_out, q_taken_out, grad_w1_t, grad_b1, grad_w2,
                       grad_b2, grad_w3, grad_b3):
        """SGD's direction over a mini-batch of M transitions, `part` transitions at a time: each part's
        rows [s; s^'] (feats: M rows of s, then M of s^') through the network with their derivatives
        and s' (next_feats: no rows for DS) without, the residuals and the output layer's backward
        pass (_residual_backward), dW2 and dL/dh1 by the sgemm, the input layer's backward pass
        (trig's). Writes j, j^, Q(s, a); adds every gradient to the float64 sums grad_*. w2 64-byte
        aligned, as every array the sgemm sees (core/compiled_updates._gemm; the work arrays here too)."""
        sources  # noqa: B018 (read, so that it stays in the closure)
        m, width = len(actions), len(b1)
        part = max(1, min(part, m))
        rows = 2 * part
        wide, narrow = _padded(rows * width), _padded(part * width)  # each work array starts 64-byte aligned
        work = _aligned(7 * wide + 3 * narrow + width * width)
        h1 = work[:rows * width].reshape((rows, width))
        dcos1 = work[wide:wide + rows * width].reshape((rows, width))
        z2 = work[2 * wide:2 * wide + rows * width].reshape((rows, width))  # then dL/dz2: spent once h2 is made
        h2 = work[3 * wide:3 * wide + rows * width].reshape((rows, width))
        dcos2 = work[4 * wide:4 * wide + rows * width].reshape((rows, width))
        grad_h1 = work[5 * wide:5 * wide + rows * width].reshape((rows, width))
        x = work[6 * wide:6 * wide + rows * 2].reshape((rows, 2))
        q = work[6 * wide + rows * 2:6 * wide + rows * 4].reshape((rows, 2))
        q_next = work[6 * wide + rows * 4:6 * wide + rows * 5].reshape((part, 2))
        next_h1 = work[7 * wide:7 * wide + part * width].reshape((part, width))
        next_z2 = work[7 * wide + narrow:7 * wide + narrow + part * width].reshape((part, width))
        next_h2 = work[7 * wide + 2 * narrow:7 * wide + 2 * narrow + part * width].reshape((part, width))
        dw2 = work[7 * wide + 3 * narrow:].reshape((width, width))
        w3_t = np.ascontiguousarray(w3.T)
        for start in range(0, m, part):
            stop = min(start + part, m)
            n = stop - start
            for r in range(n):  # the part's rows [s; s^'], contiguous
                x[r, 0], x[r, 1] = feats[start + r, 0], feats[start + r, 1]
                x[n + r, 0], x[n + r, 1] = feats[m + start + r, 0], feats[m + start + r, 1]
            _forward_rows(x[:2 * n], w1_t, b1, w2, b2, w3_t, b3, h1[:2 * n], dcos1[:2 * n], z2[:2 * n],
                          h2[:2 * n], dcos2[:2 * n], q[:2 * n])
            at_next = q_next[:0]
            if next_feats.shape[0]:
                at_next = q_next[:n]
                _forward_rows(next_feats[start:stop], w1_t, b1, w2, b2, w3_t, b3, next_h1[:n], dcos1[:0],
                              next_z2[:n], next_h2[:n], dcos2[:0], at_next)
            grad_z2 = z2[:2 * n]
            _residual_backward(q[:2 * n], at_next, actions[start:stop], rewards[start:stop],
                               alt_rewards[start:stop], alt_probs[start:stop], next_probs[start:stop], gamma,
                               np.float32(m), w3, h2[:2 * n], dcos2[:2 * n], j_out[start:stop],
                               j_hat_out[start:stop], q_taken_out[start:stop], grad_z2, grad_w3, grad_b3, grad_b2)
            _gemm(grad_z2, True, h1[:2 * n], False, dw2)
            for i in range(width):
                for k in range(width):
                    grad_w2[i, k] += np.float64(dw2[i, k])
            _gemm(grad_z2, False, w2, False, grad_h1[:2 * n])
            _input_backward(grad_h1[:2 * n], dcos1[:2 * n], x[:2 * n], grad_w1_t, grad_b1)

    return _sgd_direction


def _particle_losses_keyed(sources: str):
    """_particle_losses with `sources`, the digest of the files whose kernels it calls, in its closure."""

    def _particle_losses(particles, offsets, x, main, actions, rewards, alt_rewards, alt_probs, next_probs, gamma,
                         part, losses):
        """CBO's loss of every particle (a row of particles: a flat parameter vector of a network of 2
        inputs and 2 actions, its layers at `offsets`: qnet.layer_offsets) into losses: Q of each
        particle at the rows x ([s; s^'] then s', `main` rows of the first), `part` rows at a time,
        then its loss (_particle_loss). False, with nothing computed, where a particle's weights do
        not bound its cosines' arguments below trig.LIMIT (the compiled cosine is exact only there)."""
        sources  # noqa: B018 (read, so that it stays in the closure)
        inputs, actions_count = 2, 2
        width = (offsets[1] - offsets[0]) // inputs
        for i in range(particles.shape[0]):
            theta = particles[i]
            w1 = theta[offsets[0]:offsets[1]].reshape((width, inputs))
            w2 = theta[offsets[2]:offsets[3]].reshape((width, width))
            if not (_layer_bound(w1, theta[offsets[1]:offsets[2]]) < LIMIT
                    and _layer_bound(w2, theta[offsets[3]:offsets[4]]) < LIMIT):
                return False
        rows = max(1, min(part, x.shape[0]))
        wide = _padded(rows * width)  # each work array starts 64-byte aligned (the sgemm's operands)
        work = _aligned(3 * wide + width * width)
        h1 = work[:rows * width].reshape((rows, width))
        z2 = work[wide:wide + rows * width].reshape((rows, width))
        h2 = work[2 * wide:2 * wide + rows * width].reshape((rows, width))
        w2_aligned = work[3 * wide:].reshape((width, width))
        none = h1[:0]  # no derivatives
        q = np.empty((x.shape[0], actions_count), np.float32)
        for i in range(particles.shape[0]):
            theta = particles[i]
            w1_t = np.ascontiguousarray(theta[offsets[0]:offsets[1]].reshape((width, inputs)).T)
            w2_aligned[:] = theta[offsets[2]:offsets[3]].reshape((width, width))
            w3_t = np.ascontiguousarray(theta[offsets[4]:offsets[5]].reshape((actions_count, width)).T)
            b1, b2, b3 = theta[offsets[1]:offsets[2]], theta[offsets[3]:offsets[4]], theta[offsets[5]:offsets[6]]
            for start in range(0, x.shape[0], rows):
                stop = min(start + rows, x.shape[0])
                n = stop - start
                _forward_rows(x[start:stop], w1_t, b1, w2_aligned, b2, w3_t, b3, h1[:n], none, z2[:n], h2[:n], none,
                              q[start:stop])
            losses[i] = _particle_loss(q[:main], q[main:], actions, rewards, alt_rewards, alt_probs, next_probs,
                                       gamma)
        return True

    return _particle_losses


def sources_digest(*modules) -> str:
    """The sha256 of the modules' source files, in order."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled passes (fastmath off: no reassociation, so the bits do not depend on the SIMD unit)."""
    jit = njit()
    module = globals()
    module["_state_value"] = jit(inline="always", fastmath=False)(_state_value)
    compiled = trig.kernels()  # trig's row of the output layer's pass and its layer passes
    module["_output_row_backward"] = compiled.output_row_backward
    module["_cos_layer"], module["_input_backward"] = compiled.cos_layer, compiled.input_backward
    module["_layer_bound"] = compiled.layer_bound
    compiled_updates.kernels()  # binds the sgemm's symbol, before any kernel that calls it compiles or loads
    for name in ("_aligned", "_gemm", "_padded"):
        module[name] = getattr(compiled_updates, name)
    for name in ("_residual_backward", "_forward_rows", "_particle_loss"):  # compiled into the kernels calling them
        module[name] = jit(fastmath=False, boundscheck=False)(module[name])
    options = {"cache": True, "fastmath": False, "boundscheck": False, "nogil": True}
    sources = sources_digest(trig, compiled_updates)
    return SimpleNamespace(sgd_direction=jit(**options)(_sgd_direction_keyed(sources)),
                           particle_losses=jit(**options)(_particle_losses_keyed(sources)),
                           gather_transitions=jit(**options)(_gather_transitions))


def warm_up() -> None:
    """Load the passes' machine code for the arguments the compiled backend passes, without running them."""
    from numba import float32, float64, int64, types

    f32, f64 = ({n: types.Array(t, n, "C") for n in (1, 2)} for t in (float32, float64))
    i64 = types.Array(int64, 1, "C")
    k = kernels()
    k.sgd_direction.compile((f32[2], f32[2], f32[2], f32[1], f32[2], f32[1], f32[2], f32[1], i64, f32[1], f32[1],
                             f32[2], f32[2], float32, int64, f32[1], f32[1], f32[1], f64[2], f64[1], f64[2], f64[1],
                             f64[2], f64[1]))
    k.particle_losses.compile((f32[2], i64, f32[2], int64, i64, f32[1], f32[1], f32[2], f32[2], float32, int64,
                               f64[1]))
    k.gather_transitions.compile((f64[2], i64, f64[1], f64[2], i64, f32[1], f32[2]))
