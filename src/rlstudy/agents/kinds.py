"""The agents' classes: each agent's environment, greedy policy and model file, behind one interface,
so that every step treats the agents alike; the basics notebook's four agents (trained by
train_agent, drawn by plot_basics) add their training function and their value/policy maps. The
registry (registry.py) names each class with its files and runtime, and builds it from here: its
name, model file and training step are the registry entry's, not written again in the class."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rlstudy.core.atomic_writes import save_npy, save_tensors
from rlstudy.core.dense import dense_layers
from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import InputError
from rlstudy.core.loaders import load_npy, load_tensors

from . import ddpg, dqn, tabular
from .episodes import make_env
from .mpo import environment as mpo_environment
from .mpo import networks as mpo_networks
from .mpo.config import MPOParams
from .registry import AgentEntry


class Agent(ABC):
    """What every step needs of an agent: its environment, its greedy policy, its model file."""

    params: type
    curve_x = "step"  # the x axis of its learning curves: "step" (a budget of steps) or "episode"

    def __init__(self, entry: AgentEntry):
        self.entry = entry
        self.name = entry.name  # its config section, run folders and random streams
        self.model_file = entry.model_file  # results/agents/<name>/seed<N>/<model_file>
        self.train_step = entry.train_step  # the step (agents/cli/<train_step>.py) that trains it

    @abstractmethod
    def make_env(self, env_id: str, params, render_mode: str | None = None) -> gym.Env: ...

    @abstractmethod
    def policy(self, model) -> Callable[[object], object]:
        """The greedy action of an observation."""

    @abstractmethod
    def save(self, path, model, record: dict) -> None: ...

    @abstractmethod
    def load(self, path, env: gym.Env, params): ...


class BasicsAgent(Agent):
    """An agent of the basics notebook: train_agent trains it, plot_basics draws its maps."""

    value_map: str  # the kind of its value/policy maps (figures.VALUE_MAPS: grid, max_q, pendulum)

    @abstractmethod
    def train(self, env: gym.Env, params, seed: int, rng: np.random.Generator, generator: torch.Generator,
              log: DiagnosticsLog | None = None):
        """(model, Returns); each update's statistics go to `log`."""

    @property
    def value_figure_name(self) -> str:
        """Its value/policy figure's file: figures/agents/<value_figure_name>.<fmt> (the registry's)."""
        return self.entry.value_figure


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


class GridAgent(BasicsAgent):
    """An agent of the discretised MountainCar: its model gives a table Q(cell, action)."""

    params = tabular.TabularParams
    curve_x, value_map = "episode", "grid"  # its budget is episodes

    def make_env(self, env_id, params, render_mode=None):
        return tabular.make_grid_env(env_id, params, self.name, render_mode)

    @abstractmethod
    def table(self, model) -> np.ndarray: ...

    def grid(self, params) -> tabular.Grid:
        return tabular.Grid.of(params)

    def policy(self, model):
        table = self.table(model)
        return lambda cell: int(np.argmax(table[cell]))


class QTable(GridAgent):
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
    def train(self, env, params, seed, rng, generator, log=None):
        return tabular.train_linear_q(env, params, seed, rng, generator, log)

    def table(self, model):
        return tabular.linear_q_table(model)

    def build(self, env, params):
        return tabular.linear_q_network(env, torch.Generator())


class DQN(BasicsAgent, NetworkAgent):
    params, value_map = dqn.DQNParams, "max_q"

    def make_env(self, env_id, params, render_mode=None):
        return make_env(env_id, gym.spaces.Discrete, self.name, render_mode=render_mode)

    def train(self, env, params, seed, rng, generator, log=None):
        return dqn.train_dqn(env, params, seed, rng, generator, log)

    def policy(self, model):
        layers = dense_layers(model)
        return lambda observation: dqn.greedy_action(layers, observation)

    def build(self, env, params):
        return dqn.q_network(env, params, torch.Generator())


class DDPG(BasicsAgent, NetworkAgent):
    params, value_map = ddpg.DDPGParams, "pendulum"

    def make_env(self, env_id, params, render_mode=None):
        return make_env(env_id, gym.spaces.Box, self.name, render_mode=render_mode)

    def train(self, env, params, seed, rng, generator, log=None):
        return ddpg.train_ddpg(env, params, seed, rng, generator, log)

    def policy(self, model):
        layers = ddpg.Layers(model)
        return lambda observation: ddpg.greedy_action(layers, observation)

    def build(self, env, params):
        return ddpg.ActorCritic(env, params, torch.Generator())


class MPO(Agent):
    """MPO (agents/mpo/): its own training step (train_mpo: its seed streams and records), figures
    (plot_mpo, beside DDPG) and rollout (rollout_mpo). Its model file holds the whole learner's
    state; loaded, it is the trained Gaussian policy, acting with its (clipped) mean."""

    params = MPOParams

    def make_env(self, env_id, params, render_mode=None):
        return mpo_environment.make_env(env_id, render_mode=render_mode)

    def policy(self, model):
        def act(observation):
            with torch.no_grad():
                mean, _ = model(torch.as_tensor(observation, dtype=torch.float32).unsqueeze(0))
                return model.clip(mean)[0].numpy()
        return act

    def save(self, path, model, record):
        save_tensors(path, model.state_dict(), record)

    def load(self, path, env, params):
        try:
            policy = mpo_networks.policy_from_state_dict(load_tensors(path, "MPO model"), params.policy_layer_sizes)
        except (KeyError, RuntimeError) as err:
            raise InputError(f"{path}: not an MPO model for this config ({err})") from err
        if policy.low.shape != env.action_space.shape:
            raise InputError(f"{path}: an MPO policy of {policy.low.shape} actions, {env.spec.id} takes "
                             f"{env.action_space.shape}")
        return policy

