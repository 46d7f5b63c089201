"""DDPG (CleanRL-style) for continuous actions: a deterministic tanh actor, a Q critic, Gaussian
exploration noise, Polyak-averaged targets; the critic learns every step, the actor and the
targets every `policy_every` steps, after a phase of uniformly random actions. The statistics of
every STATISTICS_EVERY-th update are averaged every `log_every` steps (diagnostics.csv)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rlstudy.core.dense import dense_layers, relu_backward, relu_forward
from rlstudy.core.diagnostics import STATISTICS_EVERY, DiagnosticsLog, grad_norm, td_statistics
from rlstudy.core.progress import progress

from .episodes import check_finite
from .nets import mlp
from .replay import Batch, Collector, ReplayBuffer


@dataclass(frozen=True)
class DDPGParams:
    """Config 'ddpg.params' (the notebook's Pendulum setting; config.yaml is the values' one home)."""
    SCHEMA: ClassVar[str] = "ddpg_params"  # its definition in workflow/schemas/config.schema.yaml

    total_steps: int
    buffer_size: int
    batch_size: int
    actor_learning_rate: float
    critic_learning_rate: float
    gamma: float
    polyak: float  # Polyak rate of the target networks (the notebook's tau)
    policy_every: int  # steps between actor (and target) updates; the critic updates every step
    exploration_noise: float  # standard deviation, in units of the action scale
    random_fraction: float  # fraction of total_steps with uniform random actions; learning starts after
    hidden: tuple[int, ...]
    log_every: int  # environment steps per row of diagnostics.csv


class Actor(nn.Module):
    """mu(s) = tanh(f(s)) rescaled to the action box."""

    def __init__(self, observation_dim: int, space: gym.spaces.Box, hidden, generator: torch.Generator):
        super().__init__()
        self.net = mlp([observation_dim, *hidden, int(np.prod(space.shape))], generator)
        self.register_buffer("scale", torch.as_tensor((space.high - space.low) / 2, dtype=torch.float32))
        self.register_buffer("centre", torch.as_tensor((space.high + space.low) / 2, dtype=torch.float32))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.net(observations)) * self.scale + self.centre


class Critic(nn.Module):
    """Q(s, a), one value per row."""

    def __init__(self, observation_dim: int, action_dim: int, hidden, generator: torch.Generator):
        super().__init__()
        self.net = mlp([observation_dim + action_dim, *hidden, 1], generator)

    def forward(self, observations: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([observations, actions], dim=-1)).squeeze(-1)


class ActorCritic(nn.Module):
    """The saved model: actor and critic, one state dict."""

    def __init__(self, env: gym.Env, params: DDPGParams, generator: torch.Generator):
        super().__init__()
        observation_dim = int(np.prod(env.observation_space.shape))
        self.actor = Actor(observation_dim, env.action_space, params.hidden, generator)
        self.critic = Critic(observation_dim, int(np.prod(env.action_space.shape)), params.hidden, generator)


class Layers:
    """The Linear layers of an ActorCritic's actor and critic (nets.Dense: NumPy views of the
    tensors) and the actor's action scale, for the updates' hand-written passes."""

    def __init__(self, model: ActorCritic):
        self.actor, self.critic = dense_layers(model.actor), dense_layers(model.critic)
        self.scale, self.centre = model.actor.scale.numpy(), model.actor.centre.numpy()

    def act(self, observations: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """The actor's outputs by layer and tanh(f(s)) (before scaling)."""
        outputs = relu_forward(self.actor, observations)
        return outputs, np.tanh(outputs[-1])

    def actions(self, observations: np.ndarray) -> np.ndarray:
        return self.act(observations)[1] * self.scale + self.centre

    def values(self, observations: np.ndarray, actions: np.ndarray) -> list[np.ndarray]:
        """The critic's outputs by layer, its input [s, a] first and Q(s, a) (shape (B, 1)) last."""
        return relu_forward(self.critic, np.concatenate([observations, actions], axis=1))


def adams(model: ActorCritic, params: DDPGParams) -> tuple[torch.optim.Adam, torch.optim.Adam]:
    """The actor's and the critic's optimiser: each one fused Adam step over its parameters."""
    return (torch.optim.Adam(model.actor.parameters(), lr=params.actor_learning_rate, fused=True),
            torch.optim.Adam(model.critic.parameters(), lr=params.critic_learning_rate, fused=True))


def critic_targets(target: Layers, batch: Batch, gamma: float) -> np.ndarray:
    """r + gamma * Q_target(s', mu_target(s')), without the bootstrap after a terminal state."""
    next_observations = batch.next_observations.numpy()
    next_values = target.values(next_observations, target.actions(next_observations))[-1][:, 0]
    return batch.rewards.numpy() + np.float32(gamma) * (1.0 - batch.terminated.numpy()) * next_values


def critic_gradients(online: Layers, target: Layers, batch: Batch,
                     gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The critic's mean squared TD error's gradient written into its layers' .grad by hand;
    returns the loss, Q(s, a) and the targets."""
    targets = critic_targets(target, batch, gamma)
    outputs = online.values(batch.observations.numpy(), batch.actions.numpy())
    q = outputs[-1][:, 0]
    error = q - targets
    relu_backward(online.critic, outputs, (error * np.float32(2.0 / len(error)))[:, None])
    return torch.from_numpy(np.asarray(np.mean(error * error))), torch.from_numpy(q), torch.from_numpy(targets)


def actor_gradients(online: Layers, observations: torch.Tensor) -> torch.Tensor:
    """The gradient of -mean Q(s, mu(s)) written into the actor's layers' .grad by hand, through
    the critic without its own parameters' gradients; returns that loss."""
    observations = observations.numpy()
    actor_outputs, squashed = online.act(observations)
    critic_outputs = online.values(observations, squashed * online.scale + online.centre)
    rows = len(observations)
    grad_q = np.full((rows, 1), -1.0 / rows, dtype=np.float32)
    grad_input = relu_backward(online.critic, critic_outputs, grad_q, parameters=False, inputs=True)
    grad_actions = grad_input[:, observations.shape[1]:] * online.scale
    relu_backward(online.actor, actor_outputs, grad_actions * (1.0 - squashed * squashed))
    return torch.from_numpy(np.asarray(-np.mean(critic_outputs[-1])))


def polyak_update(target: nn.Module, online: nn.Module, polyak: float) -> None:
    """target <- target + polyak * (online - target), every parameter in one fused call."""
    with torch.no_grad():
        torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), polyak)


def greedy_action(layers: Layers, observation) -> np.ndarray:
    return layers.actions(np.asarray(observation, dtype=np.float32)[None])[0]


def train_ddpg(env: gym.Env, params: DDPGParams, seed: int, rng: np.random.Generator, generator: torch.Generator,
               log: DiagnosticsLog | None = None):
    """The trained actor-critic and the training returns; the first reset is seeded with `seed`.
    Each update's statistics go to `log` (a new one by default), a row every params.log_every steps."""
    log = DiagnosticsLog() if log is None else log
    model = ActorCritic(env, params, generator)
    target = copy.deepcopy(model)
    online, target_layers = Layers(model), Layers(target)
    actor_optimiser, critic_optimiser = adams(model, params)
    space = env.action_space
    buffer = ReplayBuffer(min(params.buffer_size, params.total_steps), env.observation_space.shape, space.shape)
    noise_scale = params.exploration_noise * (space.high - space.low) / 2
    noise_stats = {"exploration_noise": float(noise_scale.mean())}
    random_steps = int(params.random_fraction * params.total_steps)
    bar = progress(range(params.total_steps), desc="DDPG steps")
    collector = Collector(env, buffer, seed, bar)
    for step in bar:
        if step < random_steps:
            action = rng.uniform(space.low, space.high).astype(np.float32)
        else:
            action = greedy_action(online, collector.observation) + rng.normal(0.0, noise_scale)
            action = np.clip(action, space.low, space.high).astype(np.float32)
        collector.step(action, step)

        if step > random_steps:
            batch = buffer.sample(params.batch_size, rng)
            critic_loss, q, targets = critic_gradients(online, target_layers, batch, params.gamma)
            measure = step % STATISTICS_EVERY == 0
            stats = {**td_statistics(critic_loss, q, targets), "grad_norm": grad_norm(model.critic.parameters()),
                     **noise_stats} if measure else {}
            critic_optimiser.step()
            check_finite(critic_loss.item(), "DDPG critic loss", step)
            if step % params.policy_every == 0:
                actor_loss = actor_gradients(online, batch.observations)
                if measure:
                    stats |= {"loss_policy": actor_loss.item(),
                              "grad_norm_policy": grad_norm(model.actor.parameters())}
                actor_optimiser.step()
                polyak_update(target, model, params.polyak)
            if stats:
                log.add(stats)
        log.write_at("step", step + 1, params.log_every, params.total_steps)
    return model, collector.returns
