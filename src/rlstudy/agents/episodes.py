"""What every agent shares around its algorithm: making its environment, logging episode returns
(and reading them back, checked), greedy evaluation, and failing loudly on a diverging loss."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd

from rlstudy.core.errors import DivergenceError, InputError
from rlstudy.core.loaders import load_csv


def make_env(env_id: str, action_space: type[gym.Space], where: str, **kwargs) -> gym.Env:
    """gym.make(env_id), refusing an unknown id or the wrong kind of action space with the config key's name."""
    try:
        env = gym.make(env_id, **kwargs)
    except gym.error.Error as err:
        raise InputError(f"config '{where}.env': cannot make environment {env_id!r}: {err}") from err
    if not isinstance(env.action_space, action_space):
        raise InputError(f"config '{where}.env': {env_id} has a {type(env.action_space).__name__} action space; "
                         f"this agent needs {action_space.__name__}")
    return env


@dataclass
class Returns:
    """One row per finished training episode: its number, the env steps taken so far, its return."""

    episode_returns: list[float] = field(default_factory=list)
    end_steps: list[int] = field(default_factory=list)

    def add(self, episode_return: float, total_steps: int) -> None:
        self.episode_returns.append(float(episode_return))
        self.end_steps.append(int(total_steps))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"episode": np.arange(1, len(self.episode_returns) + 1), "step": self.end_steps,
                             "return": self.episode_returns})


def load_returns(path: str | Path, what: str) -> pd.DataFrame:
    """A run's returns.csv (Returns.frame): finite returns of episodes ending at increasing steps."""
    frame = load_csv(path, what, columns=["episode"], finite=["step", "return"])
    if (np.diff(frame["step"].to_numpy()) <= 0).any():
        raise InputError(f"{path} ({what}): episode end steps do not increase; rerun its rule")
    return frame


def load_evaluation(path: str | Path, what: str) -> pd.DataFrame:
    """A run's evaluation.csv: the finite return of each greedy episode."""
    return load_csv(path, what, columns=["episode"], finite=["return"])


def evaluate(env: gym.Env, act: Callable[[np.ndarray], object], seed: int, episodes: int) -> list[float]:
    """Undiscounted returns of `episodes` greedy episodes; the first reset is seeded, the rest follow on."""
    returns = []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed if episode == 0 else None)
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(act(observation))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def evaluation_frame(returns: list[float]) -> pd.DataFrame:
    """evaluation.csv's table of `evaluate`'s returns: episode (from 1), return."""
    return pd.DataFrame({"episode": np.arange(1, len(returns) + 1), "return": returns})


def check_finite(loss: float, what: str, step: int) -> None:
    if not math.isfinite(loss):
        raise DivergenceError(f"{what} became {loss} at step {step}; lower the learning rate")
