"""MPO's networks' passes written by hand in NumPy (their element-wise stretches compiled:
kernels.py), on arrays that share the torch modules' memory (core/dense.py's `Dense`; a LayerNorm's
affine weight and bias are wrapped the same way): the forward passes the update differentiates,
their backward passes into the parameters' .grad, and the target critic's evaluation over the
sampled actions, most of an update's arithmetic.

That evaluation (2 x batch x action_samples rows) runs without a gradient, so it is organised for
speed: the LayerNorm's mean is folded into the first layer's weights (their rows centred: the
product is then already centred), its variance comes from a few numbers per state (the sampled
rows of a state differ only in the action's columns), its scale and shift ride in that product,
each bias in the next product (a column of ones), and the rows go in blocks whose activations stay
in the L2 cache. The mathematics is nn.LayerNorm's, tanh's and ELU's; the rounding differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from rlstudy.core.dense import Dense

from .kernels import kernels
from .networks import MAX_LOG_STD, MIN_LOG_STD, Critic, GaussianPolicy

LAYER_NORM_EPS = 1e-5  # nn.LayerNorm's default, as networks.layer_norm_mlp builds it
BLOCK_ROWS = 512  # rows of the critic evaluation per block: its 0.25 MB activations stay in the L2 cache


class Torso:
    """A layer_norm_mlp's parameters as NumPy views: the first Linear, its LayerNorm (and its tensors,
    for torch's LayerNorm kernel), the ELU layers."""

    def __init__(self, torso: nn.Sequential):
        linears = [module for module in torso if isinstance(module, nn.Linear)]
        norm = next(module for module in torso if isinstance(module, nn.LayerNorm))
        self.first, self.norm, self.rest = Dense(linears[0]), Dense(norm), [Dense(layer) for layer in linears[1:]]
        self.norm_tensors = norm.weight.detach(), norm.bias.detach()


@dataclass
class TorsoCache:
    """What the backward pass reads: the input, the first layer's output and its mean and 1/std over
    the features (rows x 1, the LayerNorm's), and every layer's activation (tanh, then ELUs)."""
    inputs: np.ndarray
    pre: np.ndarray
    mean: np.ndarray
    inverse_std: np.ndarray
    activations: list[np.ndarray]


def torso_forward(torso: Torso, x: np.ndarray) -> TorsoCache:
    """Linear -> LayerNorm -> tanh, then Linear -> ELU per further layer, keeping what backward needs."""
    pre = x @ torso.first.weight.T
    pre += torso.first.bias
    normalised, mean, inverse_std = torch.native_layer_norm(torch.from_numpy(pre), pre.shape[1:], *torso.norm_tensors,
                                                            LAYER_NORM_EPS)
    activations = [np.tanh(normalised.numpy(), out=normalised.numpy())]
    for layer in torso.rest:
        z = activations[-1] @ layer.weight.T
        z += layer.bias
        activations.append(kernels().elu(z))
    return TorsoCache(x, pre, mean.numpy(), inverse_std.numpy(), activations)


def torso_backward(torso: Torso, cache: TorsoCache, grad: np.ndarray) -> None:
    """Writes the gradient of every parameter into its .grad, given d loss / d the last activation
    (a fresh array: overwritten)."""
    compiled = kernels()
    for layer, below, output in zip(reversed(torso.rest), reversed(cache.activations[:-1]),
                                    reversed(cache.activations[1:])):
        compiled.elu_backward(grad, output, layer.bias_grad)
        np.matmul(grad.T, below, out=layer.weight_grad)
        grad = grad @ layer.weight
    grad_pre = np.empty_like(grad)
    compiled.tanh_layer_norm_backward(grad, cache.activations[0], cache.pre, cache.mean, cache.inverse_std,
                                      torso.norm.weight, torso.norm.weight_grad, torso.norm.bias_grad, grad_pre,
                                      torso.first.bias_grad)
    np.matmul(grad_pre.T, cache.inputs, out=torso.first.weight_grad)


class CriticPasses:
    """networks.Critic's passes: Q(s, a) with its cache and backward, and the evaluation over sampled actions."""

    def __init__(self, critic: Critic):
        self.torso, self.head = Torso(critic.torso), Dense(critic.head)
        self.low, self.high = critic.low.numpy(), critic.high.numpy()

    def forward(self, observations: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, TorsoCache]:
        """Q(s, a) of (B, .) rows, shape (B,), and the cache of backward."""
        inputs = np.concatenate([observations, np.minimum(np.maximum(actions, self.low), self.high)], axis=1)
        cache = torso_forward(self.torso, inputs)
        return (cache.activations[-1] @ self.head.weight[0]) + self.head.bias[0], cache

    def backward(self, cache: TorsoCache, grad_q: np.ndarray) -> None:
        """Every parameter's gradient, given d loss / d Q (shape (B,))."""
        np.matmul(grad_q, cache.activations[-1], out=self.head.weight_grad[0])
        self.head.bias_grad[0] = grad_q.sum()
        torso_backward(self.torso, cache, np.outer(grad_q, self.head.weight[0]))

    def values(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Q(s, a_i) for every state s (S, obs) and its sampled actions a_i (S, N, act): shape (S, N)."""
        count, samples, act_dim = actions.shape
        first, norm = self.torso.first, self.torso.norm
        width = first.weight.shape[0]
        obs_dim = first.weight.shape[1] - act_dim
        centred = first.weight - first.weight.mean(axis=0)  # rows centred: the product's mean over features is 0
        centred_bias = first.bias - first.bias.mean()
        actions = np.minimum(np.maximum(actions, self.low), self.high)
        # the variance over features of  p_s + W_a a  (p_s the state's part): |p|^2 + 2 a.(W_a^T p) + a^T W_a^T W_a a
        state_part = (states @ centred[:, :obs_dim].T + centred_bias).astype(np.float64)
        action_weight = centred[:, obs_dim:].astype(np.float64)
        cross = state_part @ action_weight  # (S, act)
        gram = action_weight.T @ action_weight
        a64 = actions.astype(np.float64)
        variance = ((state_part * state_part).sum(axis=1)[:, None] + 2.0 * np.einsum("sia,sa->si", a64, cross)
                    + np.einsum("sia,ab,sib->si", a64, gram, a64)) / width
        inverse_std = (1.0 / np.sqrt(variance + LAYER_NORM_EPS)).astype(np.float32)[..., None]  # (S, N, 1)
        # [s / std, a / std, 1 / std, 1] @ [gamma W_c^T; gamma b_c; beta] is the LayerNorm's output
        rows = np.empty((count, samples, obs_dim + act_dim + 2), dtype=np.float32)
        np.multiply(states[:, None, :], inverse_std, out=rows[..., :obs_dim])
        np.multiply(actions, inverse_std, out=rows[..., obs_dim:obs_dim + act_dim])
        rows[..., -2:-1] = inverse_std
        rows[..., -1] = 1.0
        weights = np.zeros((obs_dim + act_dim + 2, width + 1), dtype=np.float32)  # its last column: the ones
        weights[:-2, :width] = centred.T * norm.weight
        weights[-2, :width] = centred_bias * norm.weight
        weights[-1, :width] = norm.bias
        layers = [np.vstack([layer.weight.T, layer.bias]) for layer in self.torso.rest]  # bias as the last row
        rows = rows.reshape(count * samples, -1)
        q = np.empty(count * samples, dtype=np.float32)
        head, head_bias = self.head.weight[0], self.head.bias[0]
        elu = kernels().elu
        for start in range(0, len(rows), BLOCK_ROWS):
            block = rows[start:start + BLOCK_ROWS]
            activation = block @ weights
            np.tanh(activation, out=activation)
            for i, layer in enumerate(layers):
                activation[:, -1] = 1.0
                z = activation @ layer
                elu(z)
                if i + 1 < len(layers):
                    z = np.concatenate([z, np.empty((len(z), 1), dtype=np.float32)], axis=1)
                activation = z
            if not layers:
                activation = activation[:, :width]
            np.matmul(activation, head, out=q[start:start + BLOCK_ROWS])
        q += head_bias
        return q.reshape(count, samples)


class PolicyPasses:
    """networks.GaussianPolicy's passes: (mean, log std) with its cache, and backward."""

    def __init__(self, policy: GaussianPolicy):
        self.torso, self.mean, self.log_std = Torso(policy.torso), Dense(policy.mean), Dense(policy.log_std)

    def forward(self, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[TorsoCache, np.ndarray]]:
        """(mean, log std clamped to [MIN_LOG_STD, MAX_LOG_STD]) of (B, obs) rows, and the cache of backward."""
        cache = torso_forward(self.torso, observations)
        features = cache.activations[-1]
        mean = features @ self.mean.weight.T
        mean += self.mean.bias
        raw = features @ self.log_std.weight.T
        raw += self.log_std.bias
        return mean, np.minimum(np.maximum(raw, MIN_LOG_STD), MAX_LOG_STD), (cache, raw)

    def backward(self, cache: tuple[TorsoCache, np.ndarray], grad_mean: np.ndarray, grad_log_std: np.ndarray) -> None:
        """Every parameter's gradient, given d loss / d mean and d loss / d log std (clamped: no gradient outside)."""
        torso_cache, raw = cache
        grad_log_std = grad_log_std * ((raw >= MIN_LOG_STD) & (raw <= MAX_LOG_STD))
        features = torso_cache.activations[-1]
        for layer, grad in ((self.mean, grad_mean), (self.log_std, grad_log_std)):
            np.matmul(grad.T, features, out=layer.weight_grad)
            np.sum(grad, axis=0, out=layer.bias_grad)
        torso_backward(self.torso, torso_cache, grad_mean @ self.mean.weight + grad_log_std @ self.log_std.weight)
