"""Evaluation: episodes of a policy on a fresh environment with a fixed seed, unclipped returns.

Every evaluation of a run (behavioural policy, BCQ, offline DQN) starts from the same seed, so
their returns are measured on the same initial states.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .envs import AtariPreprocessing, make_env

EVALUATION_COLUMNS = ["iteration", "mean_return", "std_return"]


def evaluate(act: Callable[[np.ndarray, np.random.Generator], int], env_id: str, atari: AtariPreprocessing,
             env_seed: int, rng: np.random.Generator, episodes: int = 10) -> np.ndarray:
    """Returns of `episodes` episodes, the first reset with env_seed; act(state, rng) picks actions."""
    env, _ = make_env(env_id, atari)
    returns = np.zeros(episodes)
    for episode in range(episodes):
        state, _ = env.reset(seed=env_seed if episode == 0 else None)
        done = False
        while not done:
            state, reward, terminated, truncated, _ = env.step(act(state, rng))
            returns[episode] += reward
            done = terminated or truncated
    env.close()
    return returns
