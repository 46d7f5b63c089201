"""The finite-data fit's loss and its gradient in one compiled pass over the transitions (Numba).

budget/sampled.py's SampledResidual loss is L = sum_m j_m j^_m / (2 M) over the M transitions of a trajectory,
with Q at a transition's states (s, s', s^) interpolated linearly from the network's values on a
grid: Q(x, a) = q[lo(x), a] (1 - f(x)) + q[up(x), a] f(x). Every L-BFGS iteration evaluates it, and
its gradient with respect to the grid's values, on all 1e6 transitions. Written with PyTorch's
tensor operations, that is some twenty passes over 1e6-long arrays and an autograd graph through
six gathers, about 80 ms per evaluation (docs/speed.md). Here one loop reads each
transition once and adds its terms to the loss and to the gradient on the grid (64 KB at the
shipped 4096 points: it stays in the cache):

    j  = r  + gamma V(s')  - Q(s, a),    j^ = r^ + gamma V(s^) - Q(s, a)
    dL/dj = j^ / (2M),   dL/dj^ = j / (2M)
    V(x) = sum_b pi(b|x) Q(x, b) (evaluation), or max_b Q(x, b) (control: its gradient goes to the
    larger action, to the first of two equal ones, as torch.max's does)

Each term is the same float64 operation, in the same order, as the tensor code's; the sums over
the transitions (the loss, the gradient on the grid) run in the transitions' order, one float64
accumulator each, where PyTorch's reductions sum by blocks: the last bits differ, the reruns are
byte-identical (one thread, a fixed order). tests/unit/bellman/test_budget.py checks the loss and
the gradient against the tensor code's and autograd's.

Compiled on first use (or loaded from Numba's cache in `__pycache__` beside this file); the warm
starts' server loads it once for every job (warm_up).
"""

from __future__ import annotations

import functools

import numpy as np


def _loss_and_grad(q, lower, upper, fraction, rest, actions, rewards, alt_rewards, probs, gamma, grad):
    """Sum_m j_m j^_m into the return value and d(sum j j^ / (2M))/dq into grad (zeroed by the caller).

    q (points, 2); lower, upper, fraction, rest (3, M): the interpolation of s, s' and s^ (rows 0, 1,
    2); actions, rewards, alt_rewards (M,); probs (2, M, 2): pi(.|s') and pi(.|s^), or (2, 0, 2) for
    control (V the max)."""
    transitions = actions.shape[0]
    control = probs.shape[1] == 0
    half_mean = 0.5 / transitions
    total = 0.0
    values = np.empty(2)
    picks = np.empty(2, np.int64)
    weights = np.empty(2)
    for m in range(transitions):
        a = actions[m]
        q_s = q[lower[0, m], a] * rest[0, m] + q[upper[0, m], a] * fraction[0, m]
        for row in range(1, 3):  # V at s' (row 1) and at s^ (row 2)
            q_0 = q[lower[row, m], 0] * rest[row, m] + q[upper[row, m], 0] * fraction[row, m]
            q_1 = q[lower[row, m], 1] * rest[row, m] + q[upper[row, m], 1] * fraction[row, m]
            if control:
                picks[row - 1] = 1 if q_1 > q_0 else 0
                values[row - 1] = q_1 if q_1 > q_0 else q_0
            else:
                values[row - 1] = q_0 * probs[row - 1, m, 0] + q_1 * probs[row - 1, m, 1]
        j = rewards[m] + gamma * values[0] - q_s
        j_hat = alt_rewards[m] + gamma * values[1] - q_s
        total += j * j_hat
        # dL/dj = j^ / (2M) and dL/dj^ = j / (2M) both reach Q(s, a); gamma times each reaches V(s'), V(s^)
        weights[0], weights[1] = gamma * j_hat * half_mean, gamma * j * half_mean
        taken = -(j_hat * half_mean + j * half_mean)
        grad[lower[0, m], a] += taken * rest[0, m]
        grad[upper[0, m], a] += taken * fraction[0, m]
        for row in range(1, 3):
            for b in range(2):
                if control:
                    if b != picks[row - 1]:
                        continue
                    w = weights[row - 1]
                else:
                    w = weights[row - 1] * probs[row - 1, m, b]
                grad[lower[row, m], b] += w * rest[row, m]
                grad[upper[row, m], b] += w * fraction[row, m]
    return total


@functools.cache
def kernel():
    """The compiled pass (fastmath off: no reassociation, so the bits do not depend on the SIMD unit)."""
    from rlstudy.core.jit import njit

    return njit()(cache=True, fastmath=False, boundscheck=False, nogil=True)(_loss_and_grad)


def warm_up() -> None:
    """Load the kernel's machine code for the arguments SampledResidual passes, without running it."""
    from numba import float64, int64, types

    f64, i64 = ({n: types.Array(t, n, "C") for n in (1, 2, 3)} for t in (float64, int64))
    kernel().compile((f64[2], i64[2], i64[2], f64[2], f64[2], i64[1], f64[1], f64[1], f64[3], float64, f64[2]))
