"""Networks as flat float32 buffers for the compiled updates of core/compiled_updates.py, and the
optimiser and target update that run on them: one compiled pass over every parameter each.

FlatMLP lays a ReLU MLP's Linear layers out as compiled_updates reads them: layer after layer, its
weight (out x in, row-major) then its bias, each starting 64-byte aligned (ALIGN); the torch
module's parameters and their .grad become views of the two buffers, so the optimiser's steps,
the target updates, the state dict, the saved model and the tests all see the same numbers."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .compiled_updates import _padded, flat_size, kernels

_F32 = np.float32


class FlatMLP:
    """A ReLU MLP's Linear layers as one flat float32 buffer of values and one of gradients (the
    layout above), which the module's parameters and their .grad become views of. `layers` lists
    the network's layers in order, each a list of the nn.Linear that read the same input (one,
    or a network's heads, stacked in that order)."""

    def __init__(self, layers):
        self.sizes = np.array([layers[0][0].in_features] + [sum(linear.out_features for linear in group)
                                                             for group in layers], np.int64)
        values, grads = torch.zeros(flat_size(self.sizes)), torch.zeros(flat_size(self.sizes))  # 64-byte aligned
        offset = 0
        for group in layers:
            for name in ("weight", "bias"):
                start = offset
                for linear in group:
                    parameter = getattr(linear, name)
                    size = parameter.numel()
                    view = values[offset:offset + size].view_as(parameter)
                    view.copy_(parameter.detach())
                    parameter.data = view
                    parameter.grad = grads[offset:offset + size].view_as(parameter)
                    offset += size
                offset = start + _padded(offset - start)
        self.values, self.grads = values.numpy(), grads.numpy()


def flat_mlp(network) -> FlatMLP:
    """FlatMLP of a Sequential of Linear and ReLU layers (nets.mlp)."""
    return FlatMLP([[module] for module in network.modules() if isinstance(module, nn.Linear)])


class FlatAdam:
    """torch.optim.Adam's update (no weight decay, no amsgrad) over a FlatMLP, or anything with a
    flat float32 `values` and its `grads` (MPO's FlatParameters and their parts), one compiled pass
    a step; its state dict holds the step count and the two moments."""

    def __init__(self, network, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
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
        return {"steps": self.steps, "exp_avg": torch.from_numpy(self.exp_avg.copy()),
                "exp_avg_sq": torch.from_numpy(self.exp_avg_sq.copy())}

    def load_state_dict(self, state: dict) -> None:
        self.steps = int(state["steps"])
        self.exp_avg[:] = state["exp_avg"].numpy()
        self.exp_avg_sq[:] = state["exp_avg_sq"].numpy()


def polyak(target: FlatMLP, online: FlatMLP, rate: float) -> None:
    """target <- target + rate * (online - target), every parameter in one compiled pass."""
    kernels().lerp(target.values, online.values, _F32(rate))


def warm_up() -> None:
    """Compile each kernel, or load it from the cache, for the argument types the learners pass
    (C-contiguous float32 arrays, int64 actions and sizes, float32 scalars): what a first update
    does, for a process whose forks will run updates (runtime/warmstart/). Runs each on two rows."""
    k, f32 = kernels(), np.float32
    sizes, rows = np.array([2, 4, 2], np.int64), np.zeros((2, 2), f32)
    flat = np.zeros(flat_size(sizes), f32)
    vector, actions = np.zeros(2, f32), np.zeros(2, np.int64)
    k.adam(flat, flat.copy(), flat.copy(), flat.copy(), f32(0.1), f32(0.9), f32(0.9), f32(0.5), f32(1.0))
    k.lerp(flat, flat.copy(), f32(0.5))
    k.dqn_gradients(flat, flat.copy(), flat, sizes, rows, actions, vector, rows, vector, f32(0.5))
    for imitation in (False, True):
        heads = np.array([2, 4, 2 + 2 * imitation], np.int64)
        stacked = np.zeros(flat_size(heads), f32)
        k.offline_gradients(stacked, stacked.copy(), stacked, heads, rows, actions, vector, rows, vector, f32(0.5),
                            1, imitation, f32(0.3), f32(0.0))
    actor, critic = np.array([2, 4, 1], np.int64), np.array([3, 4, 1], np.int64)
    actor_flat, critic_flat = np.zeros(flat_size(actor), f32), np.zeros(flat_size(critic), f32)
    one = np.ones(1, f32)
    k.ddpg_critic_gradients(critic_flat, critic_flat.copy(), actor_flat, critic_flat, actor, critic, one, one, rows,
                            np.zeros((2, 1), f32), vector, rows, vector, f32(0.5))
    k.ddpg_actor_gradients(actor_flat, actor_flat.copy(), critic_flat, actor, critic, one, one, rows)
