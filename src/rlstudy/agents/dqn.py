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

from rlstudy.core.dense import Dense, dense_layers, relu_backward, relu_forward
from rlstudy.core.diagnostics import STATISTICS_EVERY, DiagnosticsLog, grad_norm, td_statistics
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


def adam(network: nn.Module, params: DQNParams) -> torch.optim.Adam:
    """One fused Adam step over every parameter (its element-wise update in one pass)."""
    return torch.optim.Adam(network.parameters(), lr=params.learning_rate, fused=True)


def epsilon_at(step: int, params: DQNParams) -> float:
    slope = (params.epsilon_end - params.epsilon_start) / (params.exploration_fraction * params.total_steps)
    return max(params.epsilon_end, params.epsilon_start + slope * step)


def td_targets(target_layers: list[Dense], batch: Batch, gamma: float) -> np.ndarray:
    """r + gamma * max_a' Q_target(s', a'), without the bootstrap after a terminal state."""
    next_values = relu_forward(target_layers, batch.next_observations.numpy())[-1].max(axis=1)
    return batch.rewards.numpy() + np.float32(gamma) * (1.0 - batch.terminated.numpy()) * next_values


def td_gradients(layers: list[Dense], target_layers: list[Dense], batch: Batch,
                 gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The mean squared TD error's gradient written into the layers' .grad, by hand (nets.relu_backward:
    the products autograd would run, without its graph); returns the loss, Q(s, a) and the targets."""
    targets = td_targets(target_layers, batch, gamma)
    outputs = relu_forward(layers, batch.observations.numpy())
    rows, actions = np.arange(len(targets)), batch.actions.numpy()
    chosen = outputs[-1][rows, actions]
    error = chosen - targets
    grad = np.zeros_like(outputs[-1])
    grad[rows, actions] = error * np.float32(2.0 / len(error))
    relu_backward(layers, outputs, grad)
    return torch.from_numpy(np.asarray(np.mean(error * error))), torch.from_numpy(chosen), torch.from_numpy(targets)


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
    layers, target_layers = dense_layers(network), dense_layers(target_network)
    optimiser = adam(network, params)
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
            loss, chosen, targets = td_gradients(layers, target_layers, batch, params.gamma)
            if (step // params.train_every) % STATISTICS_EVERY == 0:
                log.add({**td_statistics(loss, chosen, targets), "grad_norm": grad_norm(network.parameters()),
                         "epsilon": epsilon_at(step, params)})
            optimiser.step()
            check_finite(loss.item(), "DQN loss", step)
        if step % params.target_every == 0:
            target_network.load_state_dict(network.state_dict())
        log.write_at("step", step + 1, params.log_every, params.total_steps, lambda: buffer_composition(buffer))
    return network, collector.returns
