"""The notebook's Q network, written as a pure function of a flat parameter vector.

    features(s) = (sin s, cos s)
    h1 = cos(W1 features + b1),  h2 = cos(W2 h1 + b2),  Q(s, .) = W3 h2 + b3

One flat vector per network lets SGD (one vector with autograd) and CBO (a matrix of particles,
one row each) share the same forward pass and the same initialisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from rlstudy.core.errors import InputError
from rlstudy.core.io import load_tensors

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


def unflatten(theta: torch.Tensor, shape: QNetShape = SHAPE) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Views (W, b) of each layer inside a flat parameter vector; W has shape (fan_out, fan_in)."""
    layers, offset = [], 0
    for fan_in, fan_out in shape.layers:
        weight = theta[offset:offset + fan_in * fan_out].view(fan_out, fan_in)
        offset += fan_in * fan_out
        bias = theta[offset:offset + fan_out]
        offset += fan_out
        layers.append((weight, bias))
    return layers


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


def _compiled_applies(z: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> bool:
    """Whether the compiled float32 kernels of trig.py may take the cosine of z = addmm(bias, h, weight.t())
    with |h| <= 1: on the CPU, without autograd, and with |z| bounded below trig.LIMIT by the
    layer's weights (a diverging network falls back to the library cosine, which is exact there)."""
    return (z.device.type == "cpu" and not z.requires_grad and z.dtype == torch.float32 and z.is_contiguous()
            and trig.bounded(weight.numpy(), bias.numpy()))


def cos_layer(z: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """cos(z) of the pre-activation z = addmm(bias, h, weight.t()), |h| <= 1: trig.cos (1.4x NumPy's
    float32 cosine here, 3x PyTorch's; benchmarks/floor.py) where it applies, else torch.cos."""
    if _compiled_applies(z, weight, bias):
        return torch.from_numpy(trig.cos(z.numpy()))
    return torch.cos(z)


def dcos_cos_layer(z: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(-sin z, cos z) of a pre-activation, as cos_layer: the derivative of the cosine, for the backward
    pass, and the cosine, with one argument reduction for both."""
    if _compiled_applies(z, weight, bias):
        dcos, cosine = trig.sincos(z.numpy(), negate_sine=True)
        return torch.from_numpy(dcos), torch.from_numpy(cosine)
    return torch.sin(z).neg_(), torch.cos(z)


def forward_no_grad(theta: torch.Tensor, feats: torch.Tensor, shape: QNetShape = SHAPE) -> torch.Tensor:
    """forward() for inference: the compiled cosine, no autograd bookkeeping (CBO's hot loop).
    Inputs of the first layer are features, (sin s, cos s); of the second, cosines: both |h| <= 1."""
    (w1, b1), (w2, b2), (w3, b3) = unflatten(theta, shape)
    h = cos_layer(torch.addmm(b1, feats, w1.t()), w1, b1)
    h = cos_layer(torch.addmm(b2, h, w2.t()), w2, b2)
    return torch.addmm(b3, h, w3.t())


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


def forward_cached(theta: torch.Tensor, feats: torch.Tensor, shape: QNetShape = SHAPE):
    """Q values and what backward() needs: the cosine of each pre-activation and its derivative
    (-sin), nothing else."""
    (w1, b1), (w2, b2), (w3, b3) = unflatten(theta, shape)
    dcos1, h1 = dcos_cos_layer(torch.addmm(b1, feats, w1.t()), w1, b1)
    dcos2, h2 = dcos_cos_layer(torch.addmm(b2, h1, w2.t()), w2, b2)
    return torch.addmm(b3, h2, w3.t()), (feats, h1, dcos1, h2, dcos2)


def backward(theta: torch.Tensor, cache, grad_q: torch.Tensor, shape: QNetShape = SHAPE) -> torch.Tensor:
    """d(sum(grad_q * Q))/d(theta) as a flat vector: the chain rule of forward(), written out.

    Measured about 1.4x faster than autograd here (in-place products, no graph); the tests check
    it against autograd."""
    feats, h1, dcos1, h2, dcos2 = cache
    (_, _), (w2, _), (w3, _) = unflatten(theta, shape)
    grad = torch.empty_like(theta)
    (gw1, gb1), (gw2, gb2), (gw3, gb3) = unflatten(grad, shape)
    torch.mm(grad_q.t(), h2, out=gw3)
    torch.sum(grad_q, dim=0, out=gb3)
    g2 = torch.mm(grad_q, w3).mul_(dcos2)  # d/dz2 (dcos2 = -sin z2, the same bits as the product negated)
    torch.mm(g2.t(), h1, out=gw2)
    torch.sum(g2, dim=0, out=gb2)
    g1 = torch.mm(g2, w2).mul_(dcos1)
    gw1.copy_(torch.mm(feats.t(), g1).t())  # this orientation is 10x faster than g1.t() @ feats here
    torch.sum(g1, dim=0, out=gb1)
    return grad
