"""The toy MDP on the circle: an Euler-discretised SDE driven by a two-action policy.

    s_{m+1} = s_m + a_m * dt + sigma * sqrt(dt) * Z_m,   a_m in {-1, +1},   Z_m ~ N(0, 1)

States are not wrapped: the network sees (sin s, cos s), so the state lives on the circle.
Action index 0 means a = -1, index 1 means a = +1 (the authors' convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .laws import evaluation_plus, reward
from .laws import prob_plus as prob_plus  # the MDP's policy, read here by exact.py and stationary.py

ACTIONS = np.array([-1.0, 1.0])
TASKS = ("evaluation", "control")
POLICY_OF_TASK = {"evaluation": "evaluation", "control": "uniform"}  # the policy whose data each task learns from


@dataclass(frozen=True)
class Dynamics:
    """Parameters of the SDE and of the reward, config `problem.dynamics`."""
    SCHEMA: ClassVar[str] = "dynamics"  # its definition in workflow/schemas/config.schema.yaml

    dt: float  # dt: the SDE's time step (the notebook's eps; there 2*pi/32)
    sigma: float  # the noise's scale
    reward_of: str  # "current": r = sin(s_m) + 1 (the notebook's code); "next": sin(s_{m+1}) + 1

    def step(self, s, a, z):
        """Next state for states s, actions a in {-1,+1} and standard normals z (vectorised)."""
        return s + a * self.dt + self.sigma * math.sqrt(self.dt) * z

    def rewards(self, states: np.ndarray) -> np.ndarray:
        """The reward of each transition of a trajectory's states: sin(s_m) + 1, or sin(s_{m+1}) + 1
        with reward_of "next" (NaN for the last state, which has no next one)."""
        return reward(states if self.reward_of == "current" else np.append(states[1:], np.nan))


@dataclass(frozen=True)
class Problem:
    """The MDP every stage solves, config `problem`: its dynamics and its discount. The one home of
    gamma: the learned Q*, the exact Q, SGD and CBO all read it here, so they cannot disagree."""

    dynamics: Dynamics
    gamma: float

    @classmethod
    def from_config(cls, section: dict, where: str = "config 'problem'") -> "Problem":
        """From a dict shaped like config `problem` ({dynamics: {...}, gamma}), every value checked
        by the schema's `problem` definition, as a step run by hand must refuse what a config would."""
        from rlstudy.core.config import section_problems
        from rlstudy.core.errors import InputError

        if not isinstance(section, dict) or set(section) != {"dynamics", "gamma"}:
            raise InputError(f"{where}: expected the keys ['dynamics', 'gamma'], got {section!r}")
        problems = section_problems(section, "problem")
        if problems or set(section["dynamics"]) != {"dt", "sigma", "reward_of"}:
            raise InputError(f"{where}: " + ("; ".join(problems) or
                                             f"dynamics needs dt, sigma and reward_of, got {section['dynamics']}"))
        return cls(Dynamics(**section["dynamics"]), section["gamma"])


@dataclass(frozen=True)
class Trajectory:
    states: np.ndarray  # float64 (n,)
    action_indices: np.ndarray  # int8 (n,), the action taken in each state
    rewards: np.ndarray  # float64 (n,), the reward of transition m (the last one is unused)

    def __len__(self) -> int:
        return len(self.states)


def sample_trajectory(policy: str, n_steps: int, dynamics: Dynamics, rng: np.random.Generator,
                      s0: float = 0.0) -> Trajectory:
    """Sample n_steps states of one trajectory started at s0.

    All randomness is drawn up front (uniforms for the actions, normals for the noise), so the
    result depends only on the generator's state. A state-independent policy needs no loop: the
    actions are known in advance and the states are a cumulative sum. A state-dependent one
    forces a sequential loop, run on plain Python floats (the fastest loop CPython offers).
    """
    if n_steps < 2:
        raise ValueError(f"n_steps must be at least 2, got {n_steps}")
    uniforms = rng.random(n_steps)
    normals = rng.standard_normal(n_steps - 1)
    kicks = dynamics.sigma * math.sqrt(dynamics.dt) * normals
    if policy == "uniform":
        action_indices = (uniforms < 0.5).astype(np.int8)
        increments = ACTIONS[action_indices[:-1]] * dynamics.dt + kicks
        # cumsum adds left to right, exactly as the sequential loop does.
        states = np.cumsum(np.concatenate([[float(s0)], increments]))
    else:
        states, action_indices = _sequential_rollout(policy, uniforms, kicks, dynamics.dt, s0)
    return Trajectory(states, action_indices, dynamics.rewards(states))


def _sequential_rollout(policy, uniforms, kicks, dt, s0):
    if policy != "evaluation":
        raise ValueError(f"unknown policy {policy!r}; allowed: 'evaluation', 'uniform'")
    sin, plus_of_sine = math.sin, evaluation_plus  # locals: the loop's fastest lookups
    n = len(uniforms)
    states = [0.0] * n
    plus = [False] * n
    s = float(s0)
    u = uniforms.tolist()
    k = kicks.tolist()
    for m in range(n - 1):
        states[m] = s
        # take a = +1 when the uniform falls below pi(+1|s) (math.sin: the fastest on a Python float)
        if u[m] < plus_of_sine(sin(s)):
            plus[m] = True
            s = s + (dt + k[m])
        else:
            s = s + (-dt + k[m])
    states[n - 1] = s
    plus[n - 1] = u[n - 1] < plus_of_sine(sin(s))
    return np.array(states), np.array(plus, dtype=np.int8)
