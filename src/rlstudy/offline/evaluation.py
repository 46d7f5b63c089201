"""Evaluation: episodes of a policy on a fresh environment with a fixed seed, unclipped returns.

Every evaluation of a run (behavioural policy, BCQ, offline DQN) starts from the same seed, so
their returns are measured on the same initial states.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_csv

from .envs import AtariPreprocessing, make_env

EVALUATION_COLUMNS = ["iteration", "mean_return", "std_return", "episodes"]
PERFORMANCE_SOURCES = ("buffer", "behavioural")  # the rows of a buffer's performance.csv


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


def load_evaluations(path: str | Path, what: str) -> pd.DataFrame:
    """A learner's evaluations.csv: finite returns at increasing positive iterations."""
    curve = load_csv(path, what, columns=["iteration"], finite=EVALUATION_COLUMNS[1:])
    iterations = curve["iteration"].to_numpy()
    if iterations.dtype.kind not in "iu" or iterations[0] <= 0 or (np.diff(iterations) <= 0).any():
        raise InputError(f"{path} ({what}): iterations are not increasing positive integers; rerun its rule")
    return curve


def load_performance(path: str | Path) -> pd.DataFrame:
    """A buffer's performance.csv indexed by source: one finite row each for the buffer's episodes
    and the behavioural policy."""
    table = load_csv(path, "buffer performance", columns=["source"], finite=["mean_return"])
    if sorted(table["source"]) != sorted(PERFORMANCE_SOURCES):
        raise InputError(f"{path} (buffer performance): sources {list(table['source'])}, expected one row each "
                         f"of {list(PERFORMANCE_SOURCES)}; rerun its rule")
    return table.set_index("source")
