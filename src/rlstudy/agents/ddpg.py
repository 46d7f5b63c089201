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

from rlstudy.core.compiled_updates import kernels
from rlstudy.core.dense import dense_layers, relu_forward
from rlstudy.core.diagnostics import STATISTICS_EVERY, DiagnosticsLog, grad_norm, td_statistics
from rlstudy.core.flat_networks import FlatAdam, flat_mlp, polyak
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
    """The Linear layers of an ActorCritic's actor (nets.Dense: NumPy views of the tensors) and its
    action scale: the actor's forward pass by hand, for acting (cheaper than PyTorch's per call)."""

    def __init__(self, model: ActorCritic):
        self.actor = dense_layers(model.actor)
        self.scale, self.centre = model.actor.scale.numpy(), model.actor.centre.numpy()

    def actions(self, observations: np.ndarray) -> np.ndarray:
        return np.tanh(relu_forward(self.actor, observations)[-1]) * self.scale + self.centre


class Updates:
    """DDPG's updates on the actor, the critic and their targets as flat buffers
    (core/flat_networks.py: their parameters become views of them): each loss's gradient in one
    compiled call (core/compiled_updates.py), each Adam step and the targets' Polyak update one
    compiled pass."""

    def __init__(self, model: ActorCritic, target: ActorCritic, params: DDPGParams):
        self.actor, self.critic = flat_mlp(model.actor.net), flat_mlp(model.critic.net)
        self.target_actor, self.target_critic = flat_mlp(target.actor.net), flat_mlp(target.critic.net)
        self.actor_optimiser = FlatAdam(self.actor, params.actor_learning_rate)
        self.critic_optimiser = FlatAdam(self.critic, params.critic_learning_rate)
        self.scale, self.centre = model.actor.scale.numpy(), model.actor.centre.numpy()
        self.gamma, self.polyak = np.float32(params.gamma), params.polyak

    def critic_gradients(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The mean squared TD error against r + gamma (1 - terminal) Q'(s', mu'(s')), its gradient
        written into the critic's .grad; returns the loss, Q(s, a) and the targets."""
        loss, q, targets = kernels().ddpg_critic_gradients(
            self.critic.values, self.critic.grads, self.target_actor.values, self.target_critic.values,
            self.actor.sizes, self.critic.sizes, self.scale, self.centre, batch.observations.numpy(),
            batch.actions.numpy(), batch.rewards.numpy(), batch.next_observations.numpy(), batch.terminated.numpy(),
            self.gamma)
        return torch.from_numpy(np.asarray(loss, np.float32)), torch.from_numpy(q), torch.from_numpy(targets)

    def actor_gradients(self, observations: torch.Tensor) -> torch.Tensor:
        """The gradient of -mean Q(s, mu(s)) written into the actor's .grad, through the critic
        without its own parameters' gradients; returns that loss."""
        loss = kernels().ddpg_actor_gradients(self.actor.values, self.actor.grads, self.critic.values,
                                              self.actor.sizes, self.critic.sizes, self.scale, self.centre,
                                              observations.numpy())
        return torch.from_numpy(np.asarray(loss, np.float32))

    def polyak_update(self) -> None:
        """target <- target + polyak * (online - target), the actor's and the critic's."""
        polyak(self.target_actor, self.actor, self.polyak)
        polyak(self.target_critic, self.critic, self.polyak)


def greedy_action(layers: Layers, observation) -> np.ndarray:
    return layers.actions(np.asarray(observation, dtype=np.float32)[None])[0]


def train_ddpg(env: gym.Env, params: DDPGParams, seed: int, rng: np.random.Generator, generator: torch.Generator,
               log: DiagnosticsLog | None = None):
    """The trained actor-critic and the training returns; the first reset is seeded with `seed`.
    Each update's statistics go to `log` (a new one by default), a row every params.log_every steps."""
    log = DiagnosticsLog() if log is None else log
    model = ActorCritic(env, params, generator)
    target = copy.deepcopy(model)
    updates = Updates(model, target, params)
    online = Layers(model)  # views of the flat buffers (acting)
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
            critic_loss, q, targets = updates.critic_gradients(batch)
            measure = step % STATISTICS_EVERY == 0
            stats = {**td_statistics(critic_loss, q, targets), "grad_norm": grad_norm(model.critic.parameters()),
                     **noise_stats} if measure else {}
            updates.critic_optimiser.step()
            check_finite(critic_loss.item(), "DDPG critic loss", step)
            if step % params.policy_every == 0:
                actor_loss = updates.actor_gradients(batch.observations)
                if measure:
                    stats |= {"loss_policy": actor_loss.item(),
                              "grad_norm_policy": grad_norm(model.actor.parameters())}
                updates.actor_optimiser.step()
                updates.polyak_update()
            if stats:
                log.add(stats)
        log.write_at("step", step + 1, params.log_every, params.total_steps)
    return model, collector.returns
