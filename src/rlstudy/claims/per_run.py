"""The per-run test of a claim about every run's expected return ("every run solves", "BCQ at least
the buffer"): each run's evaluation episodes are independent draws of a bounded return, so each run
is tested by core/bounded_mean.py (valid for every law on the range: capped, timed-out and
left-tailed returns, all-equal episodes) from its episodes' count, mean and spread, and the runs
combine by intersection-union (rules.share).

The range of an episode's return is stated per environment in the claim's `run_noise.range`
(claims.yaml), and follows from the environment's reward bounds per underlying step and the most
underlying steps an episode of that run can take (core/bounded_mean.episode_range; tests/unit/claims checks the
shipped ranges against config.yaml):

- CartPole-v1: reward +1 per step, at most 500 steps: [0, 500].
- MountainCar-v0: reward -1 per step: [-200, 0] under gymnasium's 200-step limit; the tabular agents
  replace it by max_steps agent steps of action_repeat underlying steps (50 x 10: [-500, 0]).
- Pendulum-v1: reward -(theta^2 + 0.1 theta_dot^2 + 0.001 u^2) per step with theta in [-pi, pi],
  theta_dot clipped to [-8, 8] and u to [-2, 2], 200 steps: [-200 (pi^2 + 6.4 + 0.004), 0], about
  [-3254.7, 0].
- PongNoFrameskip-v4: the game ends when a side scores 21, the return is the agent's points minus the
  opponent's: [-21, 21].

A run of an environment the claim gives no range for is not tested (p = 1 both ways, its evidence
says why): without a range the test has no bound to be valid by.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rlstudy.core.bounded_mean import bounded_mean_p_values, episodes_needed
from rlstudy.core.errors import InputError

TEST_WORDS = "each run by the bounded-mean betting test of its evaluation episodes (core/bounded_mean.py)"


def column_or_number(rows: pd.DataFrame, value, claim: str) -> np.ndarray:
    if isinstance(value, str):
        if value not in rows.columns:
            raise InputError(f"claim {claim!r}: no column {value!r} in its table (columns: {list(rows.columns)})")
        return rows[value].to_numpy(dtype=np.float64)
    return np.full(len(rows), float(value))


def per_run_p_values(test: dict, rows: pd.DataFrame, metric: np.ndarray, bound: np.ndarray, at_most: bool,
                     claim: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Each run's one-sided p-values of 'its expected return passes the bar' and of 'it fails it', and
    each run's episodes in words (count, and those needed at the level when all sit at the top)."""
    noise = test["run_noise"]
    episodes = column_or_number(rows, noise["episodes"], claim)
    if (episodes < 1).any() or np.isnan(episodes).any():
        raise InputError(f"claim {claim!r}: run_noise needs at least 1 evaluation episode per run")
    sd = column_or_number(rows, noise["sd"], claim)
    sd = np.where(episodes > 1, np.nan_to_num(sd), 0.0)
    variance = sd ** 2 if noise.get("sd_ddof", 1) == 0 else sd ** 2 * (episodes - 1) / np.maximum(episodes, 1)
    if "env" not in rows.columns:
        raise InputError(f"claim {claim!r}: a per-run test needs an 'env' column (the return's range)")
    p_pass, p_fail, needed = np.ones(len(rows)), np.ones(len(rows)), []
    for i, env in enumerate(rows["env"]):
        if env not in noise["range"]:
            needed.append(f"no return range for {env} in the claim: not tested")
            continue
        low, high = noise["range"][env]
        if not low < high:
            raise InputError(f"claim {claim!r}: run_noise range of {env} is [{low:g}, {high:g}]: low must be below high")
        if not (low <= metric[i] <= high and low <= bound[i] <= high):
            raise InputError(f"claim {claim!r}: a mean return {metric[i]:g} or bar {bound[i]:g} outside the return "
                             f"range [{low:g}, {high:g}] its run_noise gives {env}; fix the range or rebuild the table")
        above, below = bounded_mean_p_values(episodes[i], metric[i], variance[i], bound[i], low, high)
        p_pass[i], p_fail[i] = (below, above) if at_most else (above, below)
        top = (bound[i] - low) / (high - low) if not at_most else (high - bound[i]) / (high - low)
        needed.append(episodes_needed(top, test["level"]) if 0 < top < 1 else None)
    return p_pass, p_fail, ", ".join(_episode_words(n, k, test["level"]) for n, k in zip(episodes, needed))


def _episode_words(episodes: float, needed: int | str | None, level: float) -> str:
    """A run's episodes, with those the level needs when they are more, or why it was not tested."""
    if isinstance(needed, str):
        return needed
    more = f" (at least {needed} needed at level {level:g})" if needed and needed > episodes else ""
    return f"{int(episodes)} episodes{more}"
