"""Each agent's environment, training function, greedy policy and model file, behind one interface,
so that the training and plotting commands treat the four agents alike."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import InputError
from rlstudy.core.io import load_npy, load_tensors, save_npy, save_tensors

from . import ddpg, dqn, tabular
from .episodes import make_env


class Agent(ABC):
    """What the commands need of an agent."""

    name: str
    params: type
    model_file = "model.pt"

    @abstractmethod
    def make_env(self, env_id: str, params, render_mode: str | None = None) -> gym.Env: ...

    @abstractmethod
    def train(self, env: gym.Env, params, seed: int, rng: np.random.Generator, generator: torch.Generator,
              log: DiagnosticsLog | None = None):
        """(model, Returns); each update's statistics go to `log`."""

    @abstractmethod
    def policy(self, model) -> Callable[[object], object]:
        """The greedy action of an observation."""

    @abstractmethod
    def save(self, path, model, record: dict) -> None: ...

    @abstractmethod
    def load(self, path, env: gym.Env, params): ...


class NetworkAgent(Agent):
    """An agent whose model is a torch module, saved as its state dict."""

    @abstractmethod
    def build(self, env: gym.Env, params) -> nn.Module:
        """An untrained model of the right shape, to load a state dict into."""

    def save(self, path, model: nn.Module, record: dict) -> None:
        save_tensors(path, model.state_dict(), record)

    def load(self, path, env: gym.Env, params):
        model = self.build(env, params)
        try:
            model.load_state_dict(load_tensors(path, f"{self.name} model"))
        except RuntimeError as err:
            raise InputError(f"{path}: not a {self.name} model for this config ({err})") from err
        return model.eval()


class GridAgent(Agent):
    """An agent of the discretised MountainCar: its model gives a table Q(cell, action)."""

    params = tabular.TabularParams

    def make_env(self, env_id, params, render_mode=None):
        return tabular.make_grid_env(env_id, params, self.name, render_mode)

    @abstractmethod
    def table(self, model) -> np.ndarray: ...

    def policy(self, model):
        table = self.table(model)
        return lambda cell: int(np.argmax(table[cell]))


class QTable(GridAgent):
    name, model_file = "qtable", "q_table.npy"

    def train(self, env, params, seed, rng, generator, log=None):
        return tabular.train_qtable(env, params, seed, rng, log)

    def table(self, model):
        return model

    def save(self, path, model, record):
        save_npy(path, model, record)

    def load(self, path, env, params):
        table = load_npy(path, "Q-table")
        if table.shape != (env.observation_space.n, env.action_space.n):
            raise InputError(f"{path}: Q-table of shape {table.shape}, the config's grid needs "
                             f"{(env.observation_space.n, env.action_space.n)}")
        if table.dtype.kind != "f" or not np.isfinite(table).all():
            raise InputError(f"{path}: a Q-table of finite numbers expected (dtype {table.dtype}); rerun its rule")
        return table


class LinearQ(GridAgent, NetworkAgent):
    name = "linear_q"

    def train(self, env, params, seed, rng, generator, log=None):
        return tabular.train_linear_q(env, params, seed, rng, generator, log)

    def table(self, model):
        return tabular.linear_q_table(model)

    def build(self, env, params):
        return tabular.linear_q_network(env, torch.Generator())


class DQN(NetworkAgent):
    name, params = "dqn", dqn.DQNParams

    def make_env(self, env_id, params, render_mode=None):
        return make_env(env_id, gym.spaces.Discrete, self.name, render_mode=render_mode)

    def train(self, env, params, seed, rng, generator, log=None):
        return dqn.train_dqn(env, params, seed, rng, generator, log)

    def policy(self, model):
        return lambda observation: dqn.greedy_action(model, observation)

    def build(self, env, params):
        return dqn.q_network(env, params, torch.Generator())


class DDPG(NetworkAgent):
    name, params = "ddpg", ddpg.DDPGParams

    def make_env(self, env_id, params, render_mode=None):
        return make_env(env_id, gym.spaces.Box, self.name, render_mode=render_mode)

    def train(self, env, params, seed, rng, generator, log=None):
        return ddpg.train_ddpg(env, params, seed, rng, generator, log)

    def policy(self, model):
        return lambda observation: ddpg.greedy_action(model, observation)

    def build(self, env, params):
        return ddpg.ActorCritic(env, params, torch.Generator())


AGENTS: dict[str, Agent] = {agent.name: agent for agent in (QTable(), LinearQ(), DQN(), DDPG())}
