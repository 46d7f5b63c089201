"""DQN (CleanRL-style) for discrete actions: epsilon-greedy acting, a replay buffer, a periodically
copied target network, one Adam step on the TD error every `train_every` environment steps.
The statistics of every STATISTICS_EVERY-th update (TD loss, Q and its targets, gradient norm,
epsilon) are averaged every `log_every` steps, with what the replay buffer then holds (diagnostics.csv)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rlstudy.core.compiled_updates import kernels
from rlstudy.core.dense import Dense, dense_layers, relu_forward
from rlstudy.core.diagnostics import STATISTICS_EVERY, DiagnosticsLog, grad_norm, td_statistics
from rlstudy.core.flat_networks import FlatAdam, flat_mlp
from rlstudy.core.progress import progress

from .episodes import check_finite
from .nets import mlp
from .replay import Batch, Collector, ReplayBuffer


@dataclass(frozen=True)
class DQNParams:
    """Config 'dqn.params' (the notebook's CartPole setting; config.yaml is the values' one home)."""
    SCHEMA: ClassVar[str] = "dqn_params"  # its definition in workflow/schemas/config.schema.yaml

    total_steps: int
    buffer_size: int
    batch_size: int
    learning_rate: float
    gamma: float
    train_every: int  # environment steps between updates
    learning_starts: float  # fraction of total_steps before the first update
    target_every: int  # environment steps between copies of the network into the target
    epsilon_start: float
    epsilon_end: float
    exploration_fraction: float  # epsilon decays linearly over this fraction of the run
    hidden: tuple[int, ...]
    log_every: int  # environment steps per row of diagnostics.csv


def q_network(env: gym.Env, params: DQNParams, generator: torch.Generator) -> nn.Sequential:
    sizes = [int(np.prod(env.observation_space.shape)), *params.hidden, int(env.action_space.n)]
    return mlp(sizes, generator)


def epsilon_at(step: int, params: DQNParams) -> float:
    slope = (params.epsilon_end - params.epsilon_start) / (params.exploration_fraction * params.total_steps)
    return max(params.epsilon_end, params.epsilon_start + slope * step)


class TDUpdate:
    """DQN's update on the network and its target as flat buffers (core/compiled_updates.py: their
    parameters become views of them): gradients() computes the mean squared TD error against
    r + gamma (1 - terminal) max_a' Q_target(s', a') and its gradient, into the parameters' .grad,
    in one compiled call; step() is one Adam pass."""

    def __init__(self, network: nn.Module, target: nn.Module, params: DQNParams):
        self.online, self.target = flat_mlp(network), flat_mlp(target)
        self.optimiser = FlatAdam(self.online, params.learning_rate)
        self.gamma = np.float32(params.gamma)

    def gradients(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The loss, Q(s, a) and the targets, the loss's gradient written into the parameters' .grad."""
        loss, chosen, targets = kernels().dqn_gradients(
            self.online.values, self.online.grads, self.target.values, self.online.sizes, batch.observations.numpy(),
            batch.actions.numpy(), batch.rewards.numpy(), batch.next_observations.numpy(), batch.terminated.numpy(),
            self.gamma)
        return torch.from_numpy(np.asarray(loss, np.float32)), torch.from_numpy(chosen), torch.from_numpy(targets)

    def step(self) -> None:
        self.optimiser.step()


def greedy_action(layers: list[Dense], observation) -> int:
    return int(relu_forward(layers, np.asarray(observation, dtype=np.float32)[None])[-1].argmax())


def buffer_composition(buffer: ReplayBuffer) -> dict[str, float]:
    """What the replay buffer holds: the share of terminal transitions (failures) and the mean
    |observation| per dimension (CartPole: cart position, cart velocity, pole angle, pole angular velocity)."""
    held = buffer.observations[:buffer.size].reshape(buffer.size, -1)
    return {"buffer_terminal_share": float(buffer.terminated[:buffer.size].mean()),
            **{f"buffer_abs_obs_{i}": float(value) for i, value in enumerate(np.abs(held).mean(axis=0))}}


def train_dqn(env: gym.Env, params: DQNParams, seed: int, rng: np.random.Generator, generator: torch.Generator,
              log: DiagnosticsLog | None = None):
    """The trained Q network and the training returns; the first reset is seeded with `seed`.
    Each update's statistics go to `log` (a new one by default), a row every params.log_every steps."""
    log = DiagnosticsLog() if log is None else log
    network = q_network(env, params, generator)
    target_network = copy.deepcopy(network)
    update = TDUpdate(network, target_network, params)
    layers = dense_layers(network)  # views of the flat buffer (acting)
    buffer = ReplayBuffer(min(params.buffer_size, params.total_steps), env.observation_space.shape, (), np.int64)
    learning_starts = int(params.learning_starts * params.total_steps)
    bar = progress(range(params.total_steps), desc="DQN steps")
    collector = Collector(env, buffer, seed, bar)
    for step in bar:
        if rng.random() < epsilon_at(step, params):
            action = int(rng.integers(env.action_space.n))
        else:
            action = greedy_action(layers, collector.observation)
        collector.step(action, step)

        if step > learning_starts and step % params.train_every == 0:
            batch = buffer.sample(params.batch_size, rng)
            loss, chosen, targets = update.gradients(batch)
            if (step // params.train_every) % STATISTICS_EVERY == 0:
                log.add({**td_statistics(loss, chosen, targets), "grad_norm": grad_norm(network.parameters()),
                         "epsilon": epsilon_at(step, params)})
            update.step()
            check_finite(loss.item(), "DQN loss", step)
        if step % params.target_every == 0:
            target_network.load_state_dict(network.state_dict())
        log.write_at("step", step + 1, params.log_every, params.total_steps, lambda: buffer_composition(buffer))
    return network, collector.returns
