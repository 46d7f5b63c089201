"""The deep learners' updates on the CPU, each one Numba-compiled call: the forward passes, the
loss and its gradient, the hand-written backward pass (DQN, DDPG's critic and actor, the offline
double DQN and BCQ); and the Adam and Polyak passes over a flat parameter buffer.

At the agents' sizes (batches of 64-256, layers 2-256 wide) an update of separate NumPy calls spent
most of its time in the calls (1-2 µs each, about a hundred per update). Here everything between
the matrix products (bias, ReLU and its mask, the loss and its gradient, the bias gradients' sums)
runs as compiled loops in one call, and the products run in BLAS from inside it (_gemm): the wide
ones in the sgemm PyTorch's CPU library exports (MKL's) on an Intel CPU, else NumPy's OpenBLAS; the
narrow ones in np.dot (OpenBLAS's, faster there).

The networks are flat buffers (flat_networks.FlatMLP): layer i's weight (sizes[i+1] x sizes[i],
row-major) then its bias, layer after layer, each starting 64-byte aligned. Layers that read the
same input (BCQ's Q and imitation heads) are one layer of the buffer, their weights stacked.

Determinism: fastmath off (no fused multiply-add, no reassociation), loops in a fixed order, one
BLAS thread (OMP_NUM_THREADS=1, as the workflow's jobs), every array BLAS sees 64-byte aligned
(MKL's kernels may round differently at another alignment; PyTorch aligns its tensors so): a rerun
is byte-identical on one machine. The kernels are compiled, or loaded from Numba's on-disk cache
(`__pycache__` beside this file), at the first call; they call one another, and the sgemm (a symbol
bound before they load), by their module-level names, as bellman/numerics/compiled/trig.py explains.
They all live in this one file: Numba's cache notices changes to a kernel's own file only.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from .sgemm import sgemm_address

_F32 = np.float32
_SMALLEST_NORMAL = np.finfo(np.float32).tiny
ALIGN = 16  # float32s: 64 bytes, where every tensor of a flat buffer and every work buffer starts
SGEMM = "rlstudy_sgemm"  # the symbol the kernels call the BLAS product by (bound in kernels())
NARROW = 8  # a product with a side this narrow or narrower runs in np.dot (OpenBLAS: faster there)


def _padded(size):
    return (size + ALIGN - 1) // ALIGN * ALIGN


def _aligned(size):
    """An uninitialised float32 array of `size` whose first element is 64-byte aligned."""
    room = np.empty(size + ALIGN, np.float32)
    shift = (ALIGN - (room.ctypes.data // 4) % ALIGN) % ALIGN
    return room[shift:shift + size]


def _gemm(a, transpose_a, b, transpose_b, out):
    """out = op(a) @ op(b), op a transpose where asked, every array row-major float32. Wide products of
    64-byte aligned arrays go to the BLAS sgemm bound to SGEMM (core/sgemm.py), the rest to np.dot. BLAS is column-major: it computes
    out^T = op(b)^T op(a)^T, each row-major array read as its transpose with the row length as its
    leading dimension."""
    m, n = out.shape
    k = a.shape[0] if transpose_a else a.shape[1]
    aligned = (a.ctypes.data % 64 == 0 and b.ctypes.data % 64 == 0 and out.ctypes.data % 64 == 0)
    if min(m, n, k) <= NARROW or not aligned:  # each case its own call: one layout per argument
        if transpose_a:
            np.dot(a.T, b.T, out) if transpose_b else np.dot(a.T, b, out)
        else:
            np.dot(a, b.T, out) if transpose_b else np.dot(a, b, out)
        return
    # BLAS's m, n, k, ld of its first operand (b), of its second (a), of out: 64-bit, read whole by a 64-bit
    # interface (NumPy's OpenBLAS) and by their low half by a 32-bit one (core/sgemm.sgemm_address)
    ints = np.empty(6, np.int64)
    ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, m, k, b.shape[1], a.shape[1], n
    flags = np.array([84 if transpose_b else 78, 84 if transpose_a else 78], np.uint8)  # 'T', 'N'
    scalars = np.array([1.0, 0.0], np.float32)
    _sgemm(flags[0:].ctypes.data, flags[1:].ctypes.data, ints[0:].ctypes.data, ints[1:].ctypes.data,
           ints[2:].ctypes.data, scalars[0:].ctypes.data, b.ctypes.data, ints[3:].ctypes.data, a.ctypes.data,
           ints[4:].ctypes.data, scalars[1:].ctypes.data, out.ctypes.data, ints[5:].ctypes.data)


def _layer(flat, sizes, layer):
    """Layer `layer`'s weight (out x in) and bias as views of a flat buffer."""
    offset = 0
    for i in range(layer):
        offset += _padded(sizes[i + 1] * sizes[i]) + _padded(sizes[i + 1])
    n_in, n_out = sizes[layer], sizes[layer + 1]
    weight = flat[offset:offset + n_out * n_in].reshape((n_out, n_in))
    bias_start = offset + _padded(n_out * n_in)
    return weight, flat[bias_start:bias_start + n_out]


def flat_size(sizes) -> int:
    """The length of a flat buffer of layers of these sizes."""
    return int(sum(_padded(int(sizes[i + 1]) * int(sizes[i])) + _padded(int(sizes[i + 1]))
                   for i in range(len(sizes) - 1)))


def _activation(work, sizes, rows, layer):
    """Layer `layer`'s output (rows x sizes[layer + 1]) in a forward pass's work buffer."""
    offset = 0
    for i in range(1, layer + 1):
        offset += _padded(rows * sizes[i])
    return work[offset:offset + rows * sizes[layer + 1]].reshape((rows, sizes[layer + 1]))


def _work(sizes, rows):
    """A work buffer for every layer's output of a forward pass over `rows` inputs."""
    total = 0
    for i in range(1, len(sizes)):
        total += _padded(rows * sizes[i])
    return _aligned(total)


def _forward(flat, sizes, x, work):
    """Linear layers with ReLU between them (none after the last) over the rows of x; every
    layer's output goes into `work` (_activation); returns the last."""
    rows, layers = x.shape[0], len(sizes) - 1
    h = x
    for i in range(layers):
        weight, bias = _layer(flat, sizes, i)
        out = _activation(work, sizes, rows, i)
        _gemm(h, False, weight, True, out)
        relu = i < layers - 1
        for r in range(rows):
            for j in range(out.shape[1]):
                v = out[r, j] + bias[j]
                if relu and v < 0:  # max(v, 0); NaN stays NaN
                    v = _F32(0.0)
                out[r, j] = v
        h = out
    return h


def _backward(flat, grads, sizes, x, work, grad, parameters, input_grad):
    """Backpropagates `grad` (d loss / d the last output of _forward) through the layers: with
    `parameters` each weight's and bias's gradient is written into `grads` (the flat layout), and
    d loss / d x into `input_grad` where it has rows. A ReLU's derivative at 0 is 0 (autograd's)."""
    rows, layers = x.shape[0], len(sizes) - 1
    widest = 0
    for i in range(1, layers):
        widest = max(widest, sizes[i])
    half = _padded(rows * widest)
    scratch = _aligned(2 * half)
    g = grad
    for i in range(layers - 1, -1, -1):
        weight, _ = _layer(flat, sizes, i)
        h = x if i == 0 else _activation(work, sizes, rows, i - 1)
        if parameters:
            weight_grad, bias_grad = _layer(grads, sizes, i)
            _gemm(g, True, h, False, weight_grad)
            bias_grad[:] = 0
            for r in range(rows):
                for j in range(g.shape[1]):
                    bias_grad[j] += g[r, j]
        if i > 0:
            below = scratch[(i % 2) * half:(i % 2) * half + rows * sizes[i]].reshape((rows, sizes[i]))
            _gemm(g, False, weight, False, below)
            for r in range(rows):
                for j in range(sizes[i]):
                    if not h[r, j] > 0:
                        below[r, j] = 0
            g = below
        elif input_grad.shape[0]:
            _gemm(g, False, weight, False, input_grad)


def _adam(values, grads, exp_avg, exp_avg_sq, step_size, beta1, beta2, bias_correction2_sqrt, eps):
    """One Adam step (torch.optim.Adam's formula) over every parameter: the moments, then
    values -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t).
    A moment below float32's smallest normal number is set to 0: a dead ReLU unit's gradients are
    0, its m decays by beta1 a step into the subnormal range, where the CPU's arithmetic ran this
    pass 6x slower (floor.py's offline rows); such an m moves its parameter by under 1e-30."""
    one, zero = _F32(1.0), _F32(0.0)
    for i in range(values.size):
        g = grads[i]
        m = exp_avg[i] + (one - beta1) * (g - exp_avg[i])
        v = beta2 * exp_avg_sq[i] + (one - beta2) * g * g
        m = zero if abs(m) < _SMALLEST_NORMAL else m
        v = zero if v < _SMALLEST_NORMAL else v
        exp_avg[i], exp_avg_sq[i] = m, v
        values[i] -= step_size * m / (np.sqrt(v) / bias_correction2_sqrt + eps)


def _lerp(target, online, rate):
    """target <- target + rate * (online - target), every parameter."""
    for i in range(target.size):
        target[i] += rate * (online[i] - target[i])


def _max_rows(q, columns):
    """The largest of each row's first `columns` values (NaN if any is NaN)."""
    best = np.empty(q.shape[0], np.float32)
    for r in range(q.shape[0]):
        m = q[r, 0]
        for a in range(1, columns):
            if q[r, a] > m or q[r, a] != q[r, a]:
                m = q[r, a]
        best[r] = m
    return best


def _dqn_gradients(flat, grads, target_flat, sizes, observations, actions, rewards, next_observations,
                   terminated, gamma):
    """DQN's mean squared TD error against r + gamma (1 - terminal) max_a' Q_target(s', a'): its
    gradient into `grads`; returns (loss, Q(s, a), the targets)."""
    rows, columns = observations.shape[0], sizes[len(sizes) - 1]
    next_q = _forward(target_flat, sizes, next_observations, _work(sizes, rows))
    next_values = _max_rows(next_q, columns)
    targets = np.empty(rows, np.float32)
    for r in range(rows):
        targets[r] = rewards[r] + gamma * (_F32(1.0) - terminated[r]) * next_values[r]
    work = _work(sizes, rows)
    q = _forward(flat, sizes, observations, work)
    grad = _aligned(rows * columns).reshape((rows, columns))
    grad[:] = 0
    chosen = np.empty(rows, np.float32)
    scale = _F32(2.0 / rows)
    total = 0.0
    for r in range(rows):
        chosen[r] = q[r, actions[r]]
        error = chosen[r] - targets[r]
        grad[r, actions[r]] = error * scale
        total += error * error
    _backward(flat, grads, sizes, observations, work, grad, True, np.empty((0, 0), np.float32))
    return _F32(total / rows), chosen, targets


def _next_actions(next_q, actions_count, imitation, threshold):
    """argmax_a Q(s', a) (the first on ties), with `imitation` over the actions BCQ's filter allows:
    exp(logit_a - max_b logit_b) > threshold, the logits in the columns after Q's."""
    rows = next_q.shape[0]
    chosen = np.zeros(rows, np.int64)
    for r in range(rows):
        top = next_q[r, actions_count] if imitation else _F32(0.0)
        for a in range(1, actions_count if imitation else 0):
            top = max(top, next_q[r, actions_count + a])
        best = -np.inf
        for a in range(actions_count):
            if imitation and not np.exp(next_q[r, actions_count + a] - top) > threshold:
                continue
            if next_q[r, a] > best or best == -np.inf:
                best, chosen[r] = next_q[r, a], a
    return chosen


def _offline_gradients(flat, grads, target_flat, sizes, states, actions, rewards, next_states, not_done, gamma,
                       actions_count, imitation, threshold, penalty):
    """Double DQN's Huber TD error (the next action the online network's, its value the target's)
    and, with `imitation` (BCQ: the last layer's columns after Q's are the imitation logits), the
    next action among those the filter allows, the imitation NLL and `penalty` * mean squared logits.
    Their gradient goes into `grads`; returns (TD loss, imitation loss, penalty term, Q(s, a), the
    targets, the last layer's output on s)."""
    rows = states.shape[0]
    next_actions = _next_actions(_forward(flat, sizes, next_states, _work(sizes, rows)), actions_count, imitation,
                                 threshold)
    next_target = _forward(target_flat, sizes, next_states, _work(sizes, rows))
    targets = np.empty(rows, np.float32)
    for r in range(rows):
        targets[r] = rewards[r] + gamma * not_done[r] * next_target[r, next_actions[r]]
    work = _work(sizes, rows)
    out = _forward(flat, sizes, states, work)
    grad = _aligned(out.size).reshape(out.shape)
    grad[:] = 0
    chosen = np.empty(rows, np.float32)
    td, nll, squares = 0.0, 0.0, 0.0
    inverse_rows = _F32(1.0 / rows)
    logit_scale = _F32(2.0 * penalty / (rows * actions_count))
    for r in range(rows):
        chosen[r] = out[r, actions[r]]
        difference = chosen[r] - targets[r]
        size = abs(difference)
        td += _F32(0.5) * difference * difference if size < 1 else size - _F32(0.5)
        grad[r, actions[r]] = min(max(difference, _F32(-1.0)), _F32(1.0)) * inverse_rows
        if imitation:
            top = out[r, actions_count]
            for a in range(1, actions_count):
                top = max(top, out[r, actions_count + a])
            total = _F32(0.0)
            for a in range(actions_count):
                total += np.exp(out[r, actions_count + a] - top)
            log_total = np.log(total)
            nll -= out[r, actions_count + actions[r]] - top - log_total
            for a in range(actions_count):
                logit = out[r, actions_count + a]
                squares += logit * logit
                probability = np.exp(logit - top - log_total)
                grad[r, actions_count + a] = ((probability - (_F32(1.0) if a == actions[r] else _F32(0.0)))
                                              * inverse_rows + logit_scale * logit)
    _backward(flat, grads, sizes, states, work, grad, True, np.empty((0, 0), np.float32))
    return (_F32(td / rows), _F32(nll / rows), _F32(penalty * squares / (rows * actions_count)), chosen, targets,
            out)


def _state_actions(observations, pre_activations, scale, centre):
    """[s, tanh(pre) * scale + centre] row by row (the critic's input on the actor's actions) and tanh(pre)."""
    rows, observed = observations.shape
    acted = pre_activations.shape[1]
    inputs = _aligned(rows * (observed + acted)).reshape((rows, observed + acted))
    squashed = np.empty(pre_activations.shape, np.float32)
    for r in range(rows):
        for j in range(observed):
            inputs[r, j] = observations[r, j]
        for j in range(acted):
            squashed[r, j] = np.tanh(pre_activations[r, j])
            inputs[r, observed + j] = squashed[r, j] * scale[j] + centre[j]
    return inputs, squashed


def _ddpg_critic_gradients(critic, critic_grads, target_actor, target_critic, actor_sizes, critic_sizes, scale,
                           centre, observations, actions, rewards, next_observations, terminated, gamma):
    """DDPG's critic loss, the mean squared TD error against r + gamma (1 - terminal) Q'(s', mu'(s')):
    its gradient into `critic_grads`; returns (loss, Q(s, a), the targets)."""
    rows, observed = observations.shape
    next_pre = _forward(target_actor, actor_sizes, next_observations, _work(actor_sizes, rows))
    next_inputs, _ = _state_actions(next_observations, next_pre, scale, centre)
    next_q = _forward(target_critic, critic_sizes, next_inputs, _work(critic_sizes, rows))
    targets = np.empty(rows, np.float32)
    for r in range(rows):
        targets[r] = rewards[r] + gamma * (_F32(1.0) - terminated[r]) * next_q[r, 0]
    inputs = _aligned(rows * (observed + actions.shape[1])).reshape((rows, observed + actions.shape[1]))
    for r in range(rows):
        for j in range(observed):
            inputs[r, j] = observations[r, j]
        for j in range(actions.shape[1]):
            inputs[r, observed + j] = actions[r, j]
    work = _work(critic_sizes, rows)
    out = _forward(critic, critic_sizes, inputs, work)
    grad = _aligned(rows).reshape((rows, 1))
    q = np.empty(rows, np.float32)
    scale_grad = _F32(2.0 / rows)
    total = 0.0
    for r in range(rows):
        q[r] = out[r, 0]
        error = q[r] - targets[r]
        grad[r, 0] = error * scale_grad
        total += error * error
    _backward(critic, critic_grads, critic_sizes, inputs, work, grad, True, np.empty((0, 0), np.float32))
    return _F32(total / rows), q, targets


def _ddpg_actor_gradients(actor, actor_grads, critic, actor_sizes, critic_sizes, scale, centre, observations):
    """DDPG's actor loss, -mean Q(s, mu(s)): its gradient into `actor_grads`, through the critic
    without the critic's own gradients; returns the loss."""
    rows, observed = observations.shape
    actor_work = _work(actor_sizes, rows)
    pre = _forward(actor, actor_sizes, observations, actor_work)
    inputs, squashed = _state_actions(observations, pre, scale, centre)
    critic_work = _work(critic_sizes, rows)
    out = _forward(critic, critic_sizes, inputs, critic_work)
    grad_q = _aligned(rows).reshape((rows, 1))
    grad_q[:] = _F32(-1.0 / rows)
    input_grad = _aligned(inputs.size).reshape(inputs.shape)
    _backward(critic, critic, critic_sizes, inputs, critic_work, grad_q, False, input_grad)
    grad_pre = _aligned(pre.size).reshape(pre.shape)
    total = 0.0
    for r in range(rows):
        total += out[r, 0]
        for j in range(pre.shape[1]):
            grad_pre[r, j] = input_grad[r, observed + j] * scale[j] * (_F32(1.0) - squashed[r, j] * squashed[r, j])
    _backward(actor, actor_grads, actor_sizes, observations, actor_work, grad_pre, True, np.empty((0, 0), np.float32))
    return _F32(-total / rows)


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled kernels, compiled or loaded from Numba's cache on first use; each function above
    is replaced by its compiled self under its own name, helpers first."""
    import llvmlite.binding
    from numba import types

    from .jit import njit as widest_njit

    njit = widest_njit()

    llvmlite.binding.add_symbol(SGEMM, sgemm_address())  # before any kernel compiles or loads
    pointer = types.voidptr
    module = globals()
    module["_sgemm"] = types.ExternalFunction(SGEMM, types.void(*[pointer] * 13))
    for name in ("_padded", "_aligned", "_gemm", "_layer", "_activation", "_work", "_forward", "_backward", "_max_rows", "_next_actions",
                 "_state_actions"):
        module[name] = njit(fastmath=False, boundscheck=False, error_model="numpy")(module[name])
    for name in ("_adam", "_lerp", "_dqn_gradients", "_offline_gradients", "_ddpg_critic_gradients",
                 "_ddpg_actor_gradients"):
        module[name] = njit(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy")(module[name])
    return SimpleNamespace(adam=_adam, lerp=_lerp, dqn_gradients=_dqn_gradients, offline_gradients=_offline_gradients,
                           ddpg_critic_gradients=_ddpg_critic_gradients, ddpg_actor_gradients=_ddpg_actor_gradients)


