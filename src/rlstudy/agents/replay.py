"""A fixed-size replay buffer of transitions, sampled uniformly with the run's generator (single
transitions, or runs of consecutive ones), and the collector that fills it from an environment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import torch

from .episodes import Returns


class Batch(NamedTuple):
    observations: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    next_observations: torch.Tensor
    terminated: torch.Tensor  # 1.0 where the episode ended in a terminal state: no bootstrapping there


class ReplayBuffer:
    """The last `capacity` transitions in preallocated arrays (oldest overwritten first).

    `extras` names further float32 fields an agent keeps of each transition, with their shapes
    (MPO: the raw action, its behaviour log-probability, the episode end); `add` takes them by name.
    """

    def __init__(self, capacity: int, observation_shape: tuple[int, ...], action_shape: tuple[int, ...],
                 action_dtype: type = np.float32, extras: Mapping[str, tuple[int, ...]] | None = None):
        self.observations = np.zeros((capacity, *observation_shape), np.float32)
        self.next_observations = np.zeros((capacity, *observation_shape), np.float32)
        self.actions = np.zeros((capacity, *action_shape), action_dtype)
        self.rewards = np.zeros(capacity, np.float32)
        self.terminated = np.zeros(capacity, np.float32)
        self.extras = {name: np.zeros((capacity, *shape), np.float32) for name, shape in (extras or {}).items()}
        self.capacity, self.size, self.position = capacity, 0, 0

    def add(self, observation, action, reward: float, next_observation, terminated: bool, **extras) -> None:
        i = self.position
        self.observations[i], self.actions[i], self.rewards[i] = observation, action, reward
        self.next_observations[i], self.terminated[i] = next_observation, terminated
        for name, values in self.extras.items():
            values[i] = extras[name]
        self.position = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def fields(self) -> dict[str, np.ndarray]:
        return {"observations": self.observations, "actions": self.actions, "rewards": self.rewards,
                "next_observations": self.next_observations, "terminated": self.terminated, **self.extras}

    def sample_sequences(self, batch_size: int, length: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
        """`batch_size` runs of `length` consecutive transitions by field name, shape (B, length, ...), in
        insertion order (a run never passes the newest transition; the agent marks episode ends)."""
        if self.size < length:
            raise ValueError(f"cannot sample runs of {length} from a replay buffer of {self.size} transitions")
        oldest = (self.position - self.size) % self.capacity
        starts = rng.integers(0, self.size - length + 1, size=batch_size)
        rows = (oldest + starts[:, None] + np.arange(length)) % self.capacity
        return {name: torch.from_numpy(values[rows]) for name, values in self.fields().items()}

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        if self.size == 0:
            raise ValueError("cannot sample an empty replay buffer")
        idx = rng.integers(0, self.size, batch_size)
        return Batch(*(torch.from_numpy(a[idx]) for a in
                       (self.observations, self.actions, self.rewards, self.next_observations, self.terminated)))


class Collector:
    """Steps the environment with the agent's actions, stores every transition, logs each episode's
    return, and resets when an episode ends (time-limit truncations are stored as non-terminal)."""

    def __init__(self, env, buffer: ReplayBuffer, seed: int, bar):
        self.env, self.buffer, self.bar = env, buffer, bar
        self.returns, self.episode_return = Returns(), 0.0
        self.observation, _ = env.reset(seed=seed)

    def step(self, action, step: int) -> None:
        next_observation, reward, terminated, truncated, _ = self.env.step(action)
        self.buffer.add(self.observation, action, reward, next_observation, terminated)
        self.episode_return += float(reward)
        self.observation = next_observation
        if terminated or truncated:
            self.returns.add(self.episode_return, step + 1)
            self.bar.set_postfix(ret=self.episode_return, refresh=False)
            self.episode_return = 0.0
            self.observation, _ = self.env.reset()
