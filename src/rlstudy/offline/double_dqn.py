"""Double DQN with a Huber TD loss: the behavioural policy (online) and the offline baseline.

`Learner` holds what DQN and BCQ share: the network and its target copy, Adam, the update step
with its divergence check, and the target update (with polyak_target_update, Polyak averaging at
the rate `polyak` after every update; otherwise a full copy every `target_update_every` updates).
Every STATISTICS_EVERY-th update returns its statistics (docs/diagnostics.md), the others an empty
dict.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rlstudy.core.compiled_updates import kernels
from rlstudy.core.diagnostics import STATISTICS_EVERY, grad_norm, td_statistics
from rlstudy.core.errors import DivergenceError
from rlstudy.core.flat_networks import FlatAdam, FlatMLP, polyak

from .buffer import Batch
from .envs import EnvInfo
from .networks import QNetwork


@dataclass(frozen=True)
class LearnerParams:
    """Config 'offline.regular' (the notebook's `regular_parameters`) or 'offline.atari' (its `atari_parameters`):
    the values live in config.yaml alone."""
    SCHEMA: ClassVar[str] = "offline_learner"  # its definition in workflow/schemas/config.schema.yaml
    lr: float  # Adam
    adam_eps: float
    batch_size: int
    gamma: float
    polyak_target_update: bool  # false: a full copy every target_update_every updates
    polyak: float  # the Polyak rate (the notebook's tau); unused by a full copy
    target_update_every: int
    train_every: int  # env steps per update while collecting
    start_steps: int  # uniformly random actions first
    initial_eps: float  # epsilon-greedy exploration, decayed linearly after start_steps
    end_eps: float
    eps_decay_steps: int
    eval_every: int  # env steps (online) or updates (offline) between evaluations
    eval_eps: float

    def epsilon(self, step: int) -> float:
        """Exploration rate at an env step of online training."""
        if step < self.start_steps:
            return 1.0
        fraction = min(1.0, (step - self.start_steps) / self.eps_decay_steps)
        return self.initial_eps + fraction * (self.end_eps - self.initial_eps)


def double_q_target(next_actions: torch.Tensor, target_next_q: torch.Tensor, batch: Batch,
                    gamma: float) -> torch.Tensor:
    """r + gamma * (1 - terminal) * Q_target(s', a'), a' chosen by the online network."""
    next_value = target_next_q.gather(1, next_actions[:, None]).squeeze(1)
    return batch.rewards + gamma * batch.not_done * next_value


def compiled_network(network: nn.Module, heads: tuple[str, ...], info: EnvInfo, device: torch.device) -> FlatMLP | None:
    """The network as a flat buffer (core/compiled_updates.FlatMLP: the torso's Linear layers, then
    the named heads stacked as one layer) where a learner's update runs compiled (an MLP on the CPU),
    else None: autograd's (Atari's convolutions, a GPU)."""
    if info.is_atari or device.type != "cpu":
        return None
    torso = [[module] for module in network.torso if isinstance(module, nn.Linear)]
    return FlatMLP([*torso, [getattr(network, name) for name in heads]])


class Learner:
    """`heads`: for a learner whose update runs compiled (its `gradients` calls compiled_gradients),
    the network's heads in the order of their outputs (compiled_network); None: autograd's update."""

    def __init__(self, network: nn.Module, params: LearnerParams, device: torch.device,
                 heads: tuple[str, ...] | None = None):
        self.params = params
        self.device = device
        self.network = network.to(device)
        self.target = copy.deepcopy(self.network)
        self.flat, self.target_flat = ((compiled_network(self.network, heads, network.info, device),
                                        compiled_network(self.target, heads, network.info, device))
                                       if heads is not None else (None, None))
        if self.flat is None:
            self.optimizer = torch.optim.Adam(self.network.parameters(), lr=params.lr, eps=params.adam_eps,
                                              fused=True)  # one pass over every parameter
        else:
            self.optimizer = FlatAdam(self.flat, params.lr, eps=params.adam_eps)
        self.updates = 0

    def loss(self, batch: Batch, measure: bool) -> tuple[torch.Tensor, dict[str, float]]:
        """The loss of a batch and, if `measure`, its statistics."""
        raise NotImplementedError

    def greedy(self, states: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def act(self, state: np.ndarray, eps: float, rng: np.random.Generator) -> int:
        """Epsilon-greedy: a uniformly random action with probability eps."""
        if rng.random() < eps:
            return int(rng.integers(self.network.info.num_actions))
        with torch.no_grad():
            return int(self.greedy(torch.as_tensor(state, device=self.device)[None])[0])

    def update(self, batch: Batch) -> dict[str, float]:
        """One Adam step on the loss; on every STATISTICS_EVERY-th update its statistics (the loss's
        terms, Q, targets, gradient norm), else {}."""
        measure = self.updates % STATISTICS_EVERY == 0
        loss, stats = self.gradients(batch if self.flat is not None else batch.to(self.device), measure)
        if not math.isfinite(loss):
            raise DivergenceError(f"{type(self).__name__} loss is {loss} after {self.updates} updates; "
                                  "lower the learning rate")
        if measure:
            stats["grad_norm"] = (grad_norm(self.network.parameters()) if self.flat is None
                                  else float(np.linalg.norm(self.flat.grads)))
        self.optimizer.step()
        self.updates += 1
        self._update_target()
        return stats

    def gradients(self, batch: Batch, measure: bool) -> tuple[float, dict[str, float]]:
        """The loss (a float: a tensor made for it cost 5 % of a compiled update) and, if `measure`, its
        statistics, with its gradient in the parameters' .grad: autograd's, unless a learner computes
        them by hand."""
        loss, stats = self.loss(batch, measure)
        self.optimizer.zero_grad()
        loss.backward()
        return loss.item(), stats

    def compiled_gradients(self, batch: Batch, imitation: bool = False, threshold: float = 0.0, penalty: float = 0.0):
        """core/compiled_updates' double DQN loss (BCQ's with `imitation`, its filter's `threshold` and
        its logits' `penalty`): its gradient into the parameters' .grad; returns the TD loss, imitation loss, penalty term, Q(s, a), the targets
        and the network's output on s."""
        return kernels().offline_gradients(
            self.flat.values, self.flat.grads, self.target_flat.values, self.flat.sizes, batch.states.numpy(),
            batch.actions.numpy(), batch.rewards.numpy(), batch.next_states.numpy(), batch.not_done.numpy(),
            np.float32(self.params.gamma), self.network.info.num_actions, imitation, np.float32(threshold),
            np.float32(penalty))

    def _update_target(self) -> None:
        if self.params.polyak_target_update and self.flat is not None:
            polyak(self.target_flat, self.flat, self.params.polyak)
        elif self.params.polyak_target_update:
            with torch.no_grad():
                torch._foreach_lerp_(list(self.target.parameters()), list(self.network.parameters()),
                                     self.params.polyak)
        elif self.updates % self.params.target_update_every == 0:
            self.target.load_state_dict(self.network.state_dict())

    def state_dict(self) -> dict:
        return {"network": self.network.state_dict(), "target": self.target.state_dict(),
                "optimizer": self.optimizer.state_dict(), "updates": self.updates}

    def load_state_dict(self, state: dict) -> None:
        self.network.load_state_dict(state["network"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.updates = int(state["updates"])


class DQN(Learner):
    def __init__(self, info: EnvInfo, params: LearnerParams, device: torch.device):
        super().__init__(QNetwork(info), params, device, ("q",))

    def gradients(self, batch: Batch, measure: bool) -> tuple[float, dict[str, float]]:
        if self.flat is None:
            return super().gradients(batch, measure)
        loss, _, _, chosen, target, _ = self.compiled_gradients(batch)
        if not measure:
            return float(loss), {}
        return float(loss), td_statistics(torch.tensor(loss), torch.from_numpy(chosen), torch.from_numpy(target))

    def greedy(self, states: torch.Tensor) -> torch.Tensor:
        return self.network(states).argmax(1)

    def loss(self, batch: Batch, measure: bool) -> tuple[torch.Tensor, dict[str, float]]:
        with torch.no_grad():
            target = double_q_target(self.greedy(batch.next_states), self.target(batch.next_states), batch,
                                     self.params.gamma)
        q = self.network(batch.states).gather(1, batch.actions[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, target)
        return loss, td_statistics(loss, q, target) if measure else {}
