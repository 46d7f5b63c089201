"""The deep learners' updates on the CPU, each one Numba-compiled call: forward passes, loss,
hand-written backward pass, then one Adam pass and one Polyak pass over a flat parameter buffer.

At the agents' sizes (batches of 64-256, layers 2-256 wide) an update of separate NumPy calls spent
most of its time in the calls (1-2 µs each, about a hundred per update), not in their arithmetic.
Here the products still run in BLAS (Numba's np.dot: the SciPy wheel's OpenBLAS, a few hundred ns
a call), and everything between them (bias, ReLU and its mask, the loss and its gradient, the
bias gradients' sums) runs as compiled loops in the same call.

The networks are ReLU MLPs kept as one flat float32 buffer (FlatMLP): layer i's weight
(sizes[i+1] x sizes[i], row-major) then its bias, layer after layer; the torch module's parameters
and their .grad are views of the buffers, so the state dict, the saved model and the tests see the
same numbers. Layers that read the same input (BCQ's Q and imitation heads) are one layer of the
buffer, their weights stacked.

Determinism: fastmath off (no fused multiply-add, no reassociation), every loop in a fixed order,
one BLAS thread (the workflow's OMP_NUM_THREADS=1): a rerun is byte-identical on one machine.
The kernels are compiled (or loaded from Numba's on-disk cache, `__pycache__` beside this file) at
the first call; they call one another by their module-level names, as
bellman/numerics/compiled/trig.py explains (a closure would miss the cache in every process).
Every kernel lives in this one file because Numba's cache is invalidated by changes to a kernel's
own file only.
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numpy as np

_F32 = np.float32


def _layer(flat, sizes, layer):
    """Layer `layer`'s weight (out x in) and bias as views of a flat buffer."""
    offset = 0
    for i in range(layer):
        offset += sizes[i + 1] * (sizes[i] + 1)
    n_in, n_out = sizes[layer], sizes[layer + 1]
    weight = flat[offset:offset + n_out * n_in].reshape((n_out, n_in))
    return weight, flat[offset + n_out * n_in:offset + n_out * (n_in + 1)]


def _activation(work, sizes, rows, layer):
    """Layer `layer`'s output (rows x sizes[layer + 1]) in a forward pass's work buffer."""
    offset = 0
    for i in range(1, layer + 1):
        offset += rows * sizes[i]
    return work[offset:offset + rows * sizes[layer + 1]].reshape((rows, sizes[layer + 1]))


def _work(sizes, rows):
    """A work buffer for every layer's output of a forward pass over `rows` inputs."""
    total = 0
    for i in range(1, len(sizes)):
        total += sizes[i]
    return np.empty(rows * total, np.float32)


def _forward(flat, sizes, x, work):
    """Linear layers with ReLU between them (none after the last) over the rows of x; every
    layer's output goes into `work` (_activation); returns the last."""
    rows, layers = x.shape[0], len(sizes) - 1
    h = _activation(work, sizes, rows, 0)
    for i in range(layers):
        weight, bias = _layer(flat, sizes, i)
        out = _activation(work, sizes, rows, i)
        if i == 0:
            np.dot(x, weight.T, out)
        else:
            np.dot(h, weight.T, out)
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
    scratch = np.empty(2 * rows * widest, np.float32)
    g = grad
    for i in range(layers - 1, -1, -1):
        weight, _ = _layer(flat, sizes, i)
        h = x if i == 0 else _activation(work, sizes, rows, i - 1)
        if parameters:
            weight_grad, bias_grad = _layer(grads, sizes, i)
            np.dot(g.T, h, weight_grad)
            bias_grad[:] = 0
            for r in range(rows):
                for j in range(g.shape[1]):
                    bias_grad[j] += g[r, j]
        if i > 0:
            below = scratch[(i % 2) * rows * widest:(i % 2) * rows * widest + rows * sizes[i]].reshape((rows, sizes[i]))
            np.dot(g, weight, below)
            for r in range(rows):
                for j in range(sizes[i]):
                    if not h[r, j] > 0:
                        below[r, j] = 0
            g = below
        elif input_grad.shape[0]:
            np.dot(g, weight, input_grad)


def _adam(values, grads, exp_avg, exp_avg_sq, step_size, beta1, beta2, bias_correction2_sqrt, eps):
    """One Adam step (torch.optim.Adam's formula) over every parameter: the moments, then
    values -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t)."""
    one = _F32(1.0)
    for i in range(values.size):
        g = grads[i]
        m = exp_avg[i] + (one - beta1) * (g - exp_avg[i])
        v = beta2 * exp_avg_sq[i] + (one - beta2) * g * g
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
    grad = np.zeros((rows, columns), np.float32)
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


@functools.cache
def kernels() -> SimpleNamespace:
    """The compiled kernels, compiled or loaded from Numba's cache on first use; each function above
    is replaced by its compiled self under its own name, helpers first."""
    from numba import njit

    module = globals()
    for name in ("_layer", "_activation", "_work", "_forward", "_backward", "_max_rows"):
        module[name] = njit(fastmath=False, boundscheck=False, error_model="numpy")(module[name])
    for name in ("_adam", "_lerp", "_dqn_gradients"):
        module[name] = njit(cache=True, fastmath=False, boundscheck=False, nogil=True, error_model="numpy")(module[name])
    return SimpleNamespace(adam=_adam, lerp=_lerp, dqn_gradients=_dqn_gradients)


class FlatMLP:
    """A ReLU MLP's Linear layers as one flat float32 buffer of values and one of gradients (the
    layout above), which the module's parameters and their .grad become views of. `layers` lists
    the network's layers in order, each a list of the nn.Linear that read the same input (one,
    or a network's heads, stacked in that order)."""

    def __init__(self, layers):
        import torch

        self.sizes = np.array([layers[0][0].in_features] + [sum(linear.out_features for linear in group)
                                                             for group in layers], np.int64)
        total = int(sum(self.sizes[i + 1] * (self.sizes[i] + 1) for i in range(len(self.sizes) - 1)))
        values, grads = torch.empty(total), torch.zeros(total)
        offset = 0
        for group in layers:
            for name in ("weight", "bias"):
                for linear in group:
                    parameter = getattr(linear, name)
                    size = parameter.numel()
                    view = values[offset:offset + size].view_as(parameter)
                    view.copy_(parameter.detach())
                    parameter.data = view
                    parameter.grad = grads[offset:offset + size].view_as(parameter)
                    offset += size
        self.values, self.grads = values.numpy(), grads.numpy()


def flat_mlp(network) -> FlatMLP:
    """FlatMLP of a Sequential of Linear and ReLU layers (nets.mlp)."""
    from torch import nn

    return FlatMLP([[module] for module in network.modules() if isinstance(module, nn.Linear)])


class FlatAdam:
    """torch.optim.Adam's update (no weight decay, no amsgrad) over a FlatMLP, one compiled pass a
    step; its state dict holds the step count and the two moments."""

    def __init__(self, network: FlatMLP, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.network, self.lr, self.betas, self.eps = network, lr, betas, eps
        self.steps = 0
        self.exp_avg, self.exp_avg_sq = np.zeros_like(network.values), np.zeros_like(network.values)

    def step(self) -> None:
        self.steps += 1
        beta1, beta2 = self.betas
        step_size = self.lr / (1 - beta1 ** self.steps)
        kernels().adam(self.network.values, self.network.grads, self.exp_avg, self.exp_avg_sq, _F32(step_size),
                       _F32(beta1), _F32(beta2), _F32(math.sqrt(1 - beta2 ** self.steps)), _F32(self.eps))

    def state_dict(self) -> dict:
        import torch

        return {"steps": self.steps, "exp_avg": torch.from_numpy(self.exp_avg.copy()),
                "exp_avg_sq": torch.from_numpy(self.exp_avg_sq.copy())}

    def load_state_dict(self, state: dict) -> None:
        self.steps = int(state["steps"])
        self.exp_avg[:] = state["exp_avg"].numpy()
        self.exp_avg_sq[:] = state["exp_avg_sq"].numpy()


def polyak(target: FlatMLP, online: FlatMLP, rate: float) -> None:
    """target <- target + rate * (online - target), every parameter in one compiled pass."""
    kernels().lerp(target.values, online.values, _F32(rate))
