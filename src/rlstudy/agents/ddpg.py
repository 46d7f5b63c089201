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
import torch.nn.functional as F
from torch import nn

from rlstudy.core.diagnostics import STATISTICS_EVERY, DiagnosticsLog, grad_norm, td_statistics
from rlstudy.core.progress import progress

from .episodes import check_finite
from .nets import frozen, mlp
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


def critic_targets(target: ActorCritic, batch: Batch, gamma: float) -> torch.Tensor:
    """r + gamma * Q_target(s', mu_target(s')), without the bootstrap after a terminal state."""
    with torch.no_grad():
        next_values = target.critic(batch.next_observations, target.actor(batch.next_observations))
    return batch.rewards + gamma * (1.0 - batch.terminated) * next_values


def polyak_update(target: nn.Module, online: nn.Module, polyak: float) -> None:
    """target <- target + polyak * (online - target), parameter by parameter."""
    with torch.no_grad():
        for t, p in zip(target.parameters(), online.parameters()):
            t.lerp_(p, polyak)


def greedy_action(model: ActorCritic, observation) -> np.ndarray:
    with torch.no_grad():
        return model.actor(torch.as_tensor(observation, dtype=torch.float32)).numpy()


def train_ddpg(env: gym.Env, params: DDPGParams, seed: int, rng: np.random.Generator, generator: torch.Generator,
               log: DiagnosticsLog | None = None):
    """The trained actor-critic and the training returns; the first reset is seeded with `seed`.
    Each update's statistics go to `log` (a new one by default), a row every params.log_every steps."""
    log = DiagnosticsLog() if log is None else log
    model = ActorCritic(env, params, generator)
    target = copy.deepcopy(model)
    actor_optimiser = torch.optim.Adam(model.actor.parameters(), lr=params.actor_learning_rate)
    critic_optimiser = torch.optim.Adam(model.critic.parameters(), lr=params.critic_learning_rate)
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
            action = greedy_action(model, collector.observation) + rng.normal(0.0, noise_scale)
            action = np.clip(action, space.low, space.high).astype(np.float32)
        collector.step(action, step)

        if step > random_steps:
            batch = buffer.sample(params.batch_size, rng)
            q = model.critic(batch.observations, batch.actions)
            targets = critic_targets(target, batch, params.gamma)
            critic_loss = F.mse_loss(q, targets)
            critic_optimiser.zero_grad()
            critic_loss.backward()
            measure = step % STATISTICS_EVERY == 0
            stats = {**td_statistics(critic_loss, q, targets), "grad_norm": grad_norm(model.critic.parameters()),
                     **noise_stats} if measure else {}
            critic_optimiser.step()
            check_finite(critic_loss.item(), "DDPG critic loss", step)
            if step % params.policy_every == 0:
                with frozen(model.critic):
                    actor_loss = -model.critic(batch.observations, model.actor(batch.observations)).mean()
                    actor_optimiser.zero_grad()
                    actor_loss.backward()
                if measure:
                    stats |= {"loss_policy": actor_loss.item(),
                              "grad_norm_policy": grad_norm(model.actor.parameters())}
                actor_optimiser.step()
                polyak_update(target, model, params.polyak)
            if stats:
                log.add(stats)
        log.write_at("step", step + 1, params.log_every, params.total_steps)
    return model, collector.returns
