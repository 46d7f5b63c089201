"""The notebook's Q network, written as a pure function of a flat parameter vector.

    features(s) = (sin s, cos s)
    h1 = cos(W1 features + b1),  h2 = cos(W2 h1 + b2),  Q(s, .) = W3 h2 + b3

One flat vector per network lets SGD (one vector) and CBO (a matrix of particles, one row each) share
the same forward pass and the same initialisation. forward() is the plain pass (autograd through it:
numerics/reference.py); forward_no_grad is the compiled backend's (numerics/compiled/backend.py),
trig.py's kernels where they apply, and forward_cached/backward the chain rule written out in PyTorch's
operations, for the networks and tensors those kernels do not take (SGD's compiled mini-batch is one
call of residual_kernels.py).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_tensors
from rlstudy.core.sgemm import matmul

from . import trig


@dataclass(frozen=True)
class QNetShape:
    inputs: int = 2  # (sin s, cos s)
    hidden: int = 50
    actions: int = 2

    @property
    def layers(self) -> list[tuple[int, int]]:
        """(fan_in, fan_out) of the three linear layers."""
        return [(self.inputs, self.hidden), (self.hidden, self.hidden), (self.hidden, self.actions)]

    @property
    def size(self) -> int:
        return sum(i * o + o for i, o in self.layers)


SHAPE = QNetShape()


@functools.cache
def layer_offsets(shape: QNetShape = SHAPE) -> tuple[int, ...]:
    """Where W1, b1, W2, b2, W3 and b3 start in a flat parameter vector, and where it ends."""
    offsets = [0]
    for fan_in, fan_out in shape.layers:
        offsets += [offsets[-1] + fan_in * fan_out, offsets[-1] + fan_in * fan_out + fan_out]
    return tuple(offsets)


def unflatten(theta, shape: QNetShape = SHAPE) -> list[tuple]:
    """Views (W, b) of each layer inside a flat parameter vector (a tensor, or a NumPy array: the
    compiled passes slice it in NumPy, several times faster per call); W has shape (fan_out, fan_in)."""
    at = layer_offsets(shape)
    return [(theta[at[2 * i]:at[2 * i + 1]].reshape(fan_out, fan_in), theta[at[2 * i + 1]:at[2 * i + 2]])
            for i, (fan_in, fan_out) in enumerate(shape.layers)]


def init_params(n: int, generator: torch.Generator, shape: QNetShape = SHAPE) -> torch.Tensor:
    """n parameter vectors drawn as torch.nn.Linear initialises itself: U(-1/sqrt(fan_in), +1/sqrt(fan_in))."""
    theta = torch.empty(n, shape.size)
    offset = 0
    for fan_in, fan_out in shape.layers:
        count = fan_in * fan_out + fan_out
        bound = 1.0 / math.sqrt(fan_in)
        theta[:, offset:offset + count].uniform_(-bound, bound, generator=generator)
        offset += count
    return theta


def features(states: torch.Tensor) -> torch.Tensor:
    """(sin s, cos s) as float32, computed from float64 states so large |s| keeps its precision."""
    s = states.to(torch.float64)
    return torch.stack([torch.sin(s), torch.cos(s)], dim=-1).to(torch.float32)


def forward(theta: torch.Tensor, feats: torch.Tensor, shape: QNetShape = SHAPE) -> torch.Tensor:
    """Q values, shape (batch, actions), of one network at precomputed features (batch, 2)."""
    (w1, b1), (w2, b2), (w3, b3) = unflatten(theta, shape)
    h = torch.cos(torch.addmm(b1, feats, w1.t()))
    h = torch.cos(torch.addmm(b2, h, w2.t()))
    return torch.addmm(b3, h, w3.t())


class Network:
    """A parameter vector ready to be evaluated many times as it is: whether trig's compiled float32
    passes may run on it (on the CPU, without autograd, in float32, and with both cosine layers'
    pre-activations bounded below trig.LIMIT by their weights: the network's inputs, (sin s, cos s),
    and the first layer's cosines are all within [-1, 1]) is decided once, not at every call (the
    bound reads every weight: SGD evaluates one network on several parts of a mini-batch, CBO each
    particle on two sets of rows). A diverging network falls back to the library cosine, which is
    exact there. Valid while theta is not changed: make a new one after each step."""

    def __init__(self, theta: torch.Tensor, shape: QNetShape = SHAPE):
        self.theta, self.shape = theta, shape
        self.layers = None  # NumPy views of theta's layers where the compiled passes may run
        if theta.device.type == "cpu" and not theta.requires_grad and theta.dtype == torch.float32:
            layers = unflatten(theta.numpy(), shape)
            if all(trig.bounded(weight, bias) for weight, bias in layers[:2]):
                self.layers = layers


def _network(theta, shape: QNetShape) -> Network:
    return theta if isinstance(theta, Network) else Network(theta, shape)


def _compiled_layers(net: Network, feats: torch.Tensor) -> list | None:
    """The network's layers where the compiled passes may run on these inputs (contiguous float32 on
    the CPU), else None."""
    if feats.device.type == "cpu" and feats.dtype == torch.float32 and feats.is_contiguous():
        return net.layers
    return None


_NONE = np.empty((0, 0), np.float32)  # an absent operand of trig's layer kernels


@dataclass(frozen=True)
class Cache:
    """What backward() needs of a forward pass: its inputs, each cosine layer's output and derivative
    (-sin of the pre-activation)."""
    feats: torch.Tensor
    h1: torch.Tensor
    dcos1: torch.Tensor
    h2: torch.Tensor
    dcos2: torch.Tensor


ROWS_PER_PART = 2048  # forward_no_grad's rows per part: a part's activations (400 KB each) stay in L2


def _compiled_forward(layers: list, feats: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Q (a tensor: out, where given) by trig's kernels: each cosine layer one pass over its rows (the
    input layer's two-column product summed inside it), the 50x50 product by the CPU's faster BLAS
    (core/sgemm.py), the narrow output product by NumPy's."""
    (w1, b1), (w2, b2), (w3, b3) = layers
    x = feats.numpy()
    q = np.empty((len(x), len(b3)), np.float32) if out is None else out.numpy()
    _forward_by_parts(trig.kernels(), x, np.ascontiguousarray(w1.T), b1, w2, b2, w3, b3, q,
                      PartBuffers(len(x), len(b1)))
    return torch.from_numpy(q) if out is None else out


class PartBuffers:
    """_forward_by_parts' activations of one part (h1, z2, h2), made once for many networks."""

    def __init__(self, rows: int, width: int = SHAPE.hidden):
        self.rows = max(1, min(rows, ROWS_PER_PART))
        self.h1, self.z2, self.h2 = (np.empty((self.rows, width), np.float32) for _ in range(3))


def _forward_by_parts(kern, x, w1_t, b1, w2, b2, w3, b3, q: np.ndarray, buffers: PartBuffers) -> None:
    """Q of every row of x into q, buffers.rows rows at a time: a part's activations stay in the cache
    from one layer to the next (CBO's 3e4 rows a particle went to memory and back between every pass)."""
    part, h1, z2, h2 = buffers.rows, buffers.h1, buffers.z2, buffers.h2
    w2_t, w3_t = w2.T, np.ascontiguousarray(w3.T)  # BLAS's narrow product runs twice as fast on a contiguous operand
    for start in range(0, len(x), part):
        stop = min(start + part, len(x))
        n = stop - start
        kern.cos_layer(x[start:stop], w1_t, b1, _NONE, _NONE, h1[:n])
        matmul(h1[:n], w2_t, out=z2[:n])
        kern.cos_layer(_NONE, _NONE, b2, z2[:n], _NONE, h2[:n])
        np.matmul(h2[:n], w3_t, out=q[start:stop])
    _add_bias(q, b3)


def _add_bias(q: np.ndarray, bias: np.ndarray) -> None:
    """q += bias, a column at a time: NumPy's broadcast over rows of two runs a loop of two per row,
    several times slower (13 against 4 us for 3000 rows); the same float32 additions."""
    for column, value in enumerate(bias):
        q[:, column] += value


def forward_no_grad(theta: torch.Tensor | Network, feats: torch.Tensor, shape: QNetShape = SHAPE,
                    out: torch.Tensor | None = None) -> torch.Tensor:
    """forward() for inference (CBO's hot loop, SGD's next states): the compiled passes where they
    apply, no autograd bookkeeping. theta: a parameter vector, or a Network made of one; out: a
    contiguous float32 tensor of Q's shape to write Q into (CBO's stack of particles), or None."""
    net = _network(theta, shape)
    layers = _compiled_layers(net, feats)
    if layers is not None and (out is None or (out.dtype == torch.float32 and out.is_contiguous()
                                               and out.device.type == "cpu")):
        return _compiled_forward(layers, feats, out)
    with torch.no_grad():
        q = forward(net.theta, feats, net.shape)
    return q if out is None else out.copy_(q)


def q_values(theta: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
    """Q(s, a) for every state and action, shape (n, actions)."""
    return forward(theta, features(states))


LAYER_NAMES = ("fc1", "fc2", "fc3")


def to_state_dict(theta: torch.Tensor, shape: QNetShape = SHAPE) -> dict[str, torch.Tensor]:
    """The notebook's `Net` state dict (fc1.weight, fc1.bias, ...) of a flat parameter vector."""
    state = {}
    for name, (weight, bias) in zip(LAYER_NAMES, unflatten(theta.detach(), shape)):
        state[f"{name}.weight"] = weight.clone()
        state[f"{name}.bias"] = bias.clone()
    return state


def from_state_dict(state: dict[str, torch.Tensor], shape: QNetShape = SHAPE) -> torch.Tensor:
    """The flat parameter vector of a `Net` state dict; raises KeyError/ValueError on a mismatch."""
    parts = []
    for name, (fan_in, fan_out) in zip(LAYER_NAMES, shape.layers):
        weight, bias = state[f"{name}.weight"], state[f"{name}.bias"]
        if tuple(weight.shape) != (fan_out, fan_in) or tuple(bias.shape) != (fan_out,):
            raise ValueError(f"{name}: expected weight {(fan_out, fan_in)} and bias {(fan_out,)}, "
                             f"got {tuple(weight.shape)} and {tuple(bias.shape)}")
        parts += [weight.reshape(-1), bias.reshape(-1)]
    return torch.cat(parts).to(torch.float32)


def load_network(path, what: str) -> torch.Tensor:
    """The flat parameters of a network saved with to_state_dict (Q* or a run's result)."""
    state = load_tensors(path, what)
    try:
        return from_state_dict(state)
    except (KeyError, ValueError) as err:
        raise InputError(f"{path}: not a Q network state dict ({err})") from err


def forward_cached(theta: torch.Tensor, feats: torch.Tensor, shape: QNetShape = SHAPE) -> tuple[torch.Tensor, Cache]:
    """Q values and what backward() needs: each cosine layer's output and its derivative (-sin),
    nothing else (PyTorch's operations: any dtype and device)."""
    (w1, b1), (w2, b2), (w3, b3) = unflatten(theta, shape)
    z1 = torch.addmm(b1, feats, w1.t())
    h1 = torch.cos(z1)
    z2 = torch.addmm(b2, h1, w2.t())
    h2 = torch.cos(z2)
    return torch.addmm(b3, h2, w3.t()), Cache(feats, h1, torch.sin(z1).neg_(), h2, torch.sin(z2).neg_())


@dataclass(frozen=True)
class GradientSums:
    """d(sum(grad_q * Q))/d(theta) by layer, summed over rows in float64: the compiled passes add each
    part of a mini-batch's rows to the same sums. flat() is the parameter vector's gradient."""
    w1_t: np.ndarray  # (fan_in, width): the input layer's weights, transposed
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    w3: np.ndarray
    b3: np.ndarray

    @classmethod
    def zeros(cls, shape: QNetShape = SHAPE) -> "GradientSums":
        (fan_in, width), _, (_, actions) = shape.layers
        return cls(*(np.zeros(size) for size in ((fan_in, width), width, (width, width), width, (actions, width),
                                                 actions)))

    def flat(self) -> torch.Tensor:
        return torch.from_numpy(np.concatenate([self.w1_t.T.ravel(), self.b1, self.w2.ravel(), self.b2,
                                                self.w3.ravel(), self.b3]).astype(np.float32))


def backward(theta: torch.Tensor, cache: Cache, grad_q: torch.Tensor, shape: QNetShape = SHAPE) -> torch.Tensor:
    """d(sum(grad_q * Q))/d(theta) as a flat vector: the chain rule of forward(), written out (the tests
    check it against autograd)."""
    (_, _), (w2, _), (w3, _) = unflatten(theta, shape)
    grad = torch.empty_like(theta)
    (gw1, gb1), (gw2, gb2), (gw3, gb3) = unflatten(grad, shape)
    torch.mm(grad_q.t(), cache.h2, out=gw3)
    torch.sum(grad_q, dim=0, out=gb3)
    g2 = torch.mm(grad_q, w3).mul_(cache.dcos2)  # d/dz2
    torch.mm(g2.t(), cache.h1, out=gw2)
    torch.sum(g2, dim=0, out=gb2)
    g1 = torch.mm(g2, w2).mul_(cache.dcos1)
    gw1.copy_(torch.mm(cache.feats.t(), g1).t())
    torch.sum(g1, dim=0, out=gb1)
    return grad
