"""MountainCar on a grid, solved by a Q-table and by the same table as a linear network.

The notebook's environment: each action is repeated for `action_repeat` underlying steps, then the
(position, velocity) state is snapped to the centre of its grid cell, so the agent lives on
bins[0] x bins[1] discrete states; leaving the grid truncates the episode. Exploration is the
greedy action on Q plus Gaussian noise scaled by 1/episode (the table starts at zero, above every
return of this all -1 reward task, which makes untried actions look best: optimism explores too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import InputError
from rlstudy.core.progress import progress

from .episodes import Returns, check_finite, make_env
from .nets import linear


@dataclass(frozen=True)
class TabularParams:
    """Config 'qtable.params' or 'linear_q.params' (the notebook's setting, shared by the Q-table and the
    linear network; config.yaml is the values' one home)."""
    SCHEMA: ClassVar[str] = "tabular_params"  # its definition in workflow/schemas/config.schema.yaml

    bins: tuple[int, ...]  # cells along position and velocity
    position_range: tuple[float, float]
    velocity_range: tuple[float, float]
    action_repeat: int  # underlying steps per agent step, enough to leave a cell
    episodes: int
    max_steps: int  # agent steps per episode
    learning_rate: float
    gamma: float
    log_every: int  # episodes per row of diagnostics.csv


class Grid:
    """Cells of equal width over a box; cell indices are flat (row-major over the dimensions)."""

    def __init__(self, low, high, bins):
        self.low, self.high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        self.bins = tuple(int(b) for b in bins)
        if not (len(self.low) == len(self.high) == len(self.bins)) or np.any(self.high <= self.low):
            raise InputError(f"grid: need low < high and one bin count per dimension, got {low}, {high}, {bins}")
        self.width = (self.high - self.low) / np.asarray(self.bins)
        self.n_cells = int(np.prod(self.bins))

    @classmethod
    def of(cls, params: TabularParams) -> "Grid":
        ranges = np.array([params.position_range, params.velocity_range])
        return cls(ranges[:, 0], ranges[:, 1], params.bins)

    def contains(self, state) -> bool:
        state = np.asarray(state)
        return bool(np.all(state >= self.low) and np.all(state <= self.high))

    def cell(self, state) -> int:
        """The flat index of the cell holding `state` (clipped into the grid first; the upper edge
        belongs to the last cell)."""
        state = np.clip(np.asarray(state, dtype=float), self.low, self.high)
        idx = np.minimum(((state - self.low) / self.width).astype(int), np.asarray(self.bins) - 1)
        return int(np.ravel_multi_index(tuple(idx), self.bins))

    def axis_centres(self, dim: int) -> np.ndarray:
        return self.low[dim] + (np.arange(self.bins[dim]) + 0.5) * self.width[dim]

    def centre(self, cells) -> np.ndarray:
        """Centres of flat cell indices: shape (dims,) for one index, (n, dims) for an array of them."""
        idx = np.stack(np.unravel_index(np.asarray(cells), self.bins), axis=-1)
        return self.low + (idx + 0.5) * self.width


class GridEnv(gym.Wrapper):
    """Discrete states: the action repeated, the state snapped to its cell centre, off-grid truncates."""

    def __init__(self, env: gym.Env, grid: Grid, action_repeat: int):
        super().__init__(env)
        self.grid, self.action_repeat = grid, action_repeat
        self.observation_space = gym.spaces.Discrete(grid.n_cells)

    def _snap(self, state) -> int:
        cell = self.grid.cell(state)
        self.env.unwrapped.state = self.grid.centre(cell)
        return cell

    def reset(self, **kwargs):
        state, info = self.env.reset(**kwargs)
        return self._snap(state), info

    def step(self, action):
        total = 0.0
        for _ in range(self.action_repeat):
            state, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        off_grid = not self.grid.contains(state)
        return self._snap(state), total, terminated, truncated or off_grid, info


def make_grid_env(env_id: str, params: TabularParams, where: str, render_mode: str | None = None) -> gym.Env:
    """The discretised task, at most params.max_steps agent steps an episode (the underlying time
    limit is removed: the agent-step limit replaces it, as in the notebook)."""
    base = make_env(env_id, gym.spaces.Discrete, where, render_mode=render_mode)
    if base.observation_space.shape != (len(params.bins),):
        raise InputError(f"config '{where}.env': {env_id} observations have shape {base.observation_space.shape}; "
                         f"the grid has {len(params.bins)} dimensions")
    grid = GridEnv(base.unwrapped, Grid.of(params), params.action_repeat)
    return gym.wrappers.TimeLimit(grid, params.max_steps)


def noisy_greedy(q_row: np.ndarray, episode: int, rng: np.random.Generator) -> int:
    return int(np.argmax(q_row + rng.standard_normal(q_row.shape) / episode))


def train_qtable(env: gym.Env, params: TabularParams, seed: int, rng: np.random.Generator,
                 log: DiagnosticsLog | None = None):
    """The table and the training returns; the first reset is seeded with `seed`. Each update's
    statistics go to `log` (a new one by default), a row every params.log_every episodes."""
    log = DiagnosticsLog() if log is None else log
    q = np.zeros((env.observation_space.n, env.action_space.n))
    returns, steps = Returns(), 0
    bar = progress(range(1, params.episodes + 1), desc="Q-table episodes")
    for episode in bar:
        x, _ = env.reset(seed=seed if episode == 1 else None)
        total, done = 0.0, False
        while not done:
            u = noisy_greedy(q[x], episode, rng)
            x_next, reward, terminated, truncated, _ = env.step(u)
            target = reward + (0.0 if terminated else params.gamma * q[x_next].max())
            log.add({"loss_q": 0.5 * (target - q[x, u]) ** 2, "q_mean": q[x, u], "target_mean": target,
                     "exploration_noise": 1.0 / episode})
            q[x, u] += params.learning_rate * (target - q[x, u])
            x, total, steps, done = x_next, total + reward, steps + 1, terminated or truncated
        returns.add(total, steps)
        bar.set_postfix(ret=total, refresh=False)
        log.write_at("episode", episode, params.log_every, params.episodes)
    return q, returns


def linear_q_network(env: gym.Env, generator: torch.Generator) -> nn.Linear:
    """The table as a network: one-hot cell in, Q of each action out, no bias (see linear_q_update)."""
    return linear(env.observation_space.n, env.action_space.n, generator, bias=False)


def linear_q_table(net: nn.Linear) -> np.ndarray:
    """Q(x, .) for every cell x: the network's output on the one-hot of x, i.e. its weights transposed."""
    with torch.no_grad():
        return net.weight.T.numpy().astype(np.float64)


def linear_q_update(net: nn.Linear, optimiser: torch.optim.Optimizer, x: int, u: int, reward: float,
                    x_next: int, terminated: bool, gamma: float) -> dict[str, float]:
    """One SGD step on 1/2 (Q(x, u) - target)^2, the Bellman target held fixed (semi-gradient).

    On a one-hot input the gradient touches weight[u, x] alone, by (Q(x, u) - target), so the step is
    the Q-table's update with the same learning rate. Two choices keep it so, where the notebook's
    cell did not: no bias (a bias is shared by every cell, so each update would move the value of
    action u everywhere), and the half squared error of the chosen action instead of the mean over
    all actions (which divides the learning rate by the number of actions, times two).
    Returns the update's statistics, the Q-table's (the gradient norm would be |Q(x, u) - target|,
    which loss_q already says).
    """
    one_hot = F.one_hot(torch.tensor([x, x_next]), net.in_features).to(net.weight.dtype)
    q, q_next = net(one_hot)
    with torch.no_grad():
        target = reward + (0.0 if terminated else gamma * float(q_next.max()))
    loss = 0.5 * (q[u] - target) ** 2
    optimiser.zero_grad()
    loss.backward()
    stats = {"loss_q": loss.item(), "q_mean": q[u].item(), "target_mean": target}
    optimiser.step()
    return stats


def train_linear_q(env: gym.Env, params: TabularParams, seed: int, rng: np.random.Generator,
                   generator: torch.Generator, log: DiagnosticsLog | None = None):
    """The table as a bias-free nn.Linear on one-hot states, one SGD step per transition towards the
    Bellman target (see linear_q_update); only the initial weights differ from the Q-table's zeros.
    Each update's statistics go to `log` (a new one by default), a row every params.log_every episodes."""
    log = DiagnosticsLog() if log is None else log
    net = linear_q_network(env, generator)
    optimiser = torch.optim.SGD(net.parameters(), lr=params.learning_rate)
    returns, steps = Returns(), 0
    bar = progress(range(1, params.episodes + 1), desc="linear Q episodes")
    for episode in bar:
        x, _ = env.reset(seed=seed if episode == 1 else None)
        total, done = 0.0, False
        while not done:
            with torch.no_grad():
                q_row = net.weight[:, x].numpy()  # = net(one_hot(x)), without building the one-hot
            u = noisy_greedy(q_row, episode, rng)
            x_next, reward, terminated, truncated, _ = env.step(u)
            stats = linear_q_update(net, optimiser, x, u, reward, x_next, terminated, params.gamma)
            log.add({**stats, "exploration_noise": 1.0 / episode})
            x, total, steps, done = x_next, total + reward, steps + 1, terminated or truncated
        check_finite(stats["loss_q"], "linear Q loss", steps)
        returns.add(total, steps)
        bar.set_postfix(ret=total, refresh=False)
        log.write_at("episode", episode, params.log_every, params.episodes)
    return net, returns
