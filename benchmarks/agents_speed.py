"""Training speed of the five agents (the basics notebook's four and MPO): environment steps and
updates per second, each agent trained for a short budget with its shipped parameters (config.yaml), on one thread.

    PYTHONPATH=src python benchmarks/agents_speed.py [scale]   # scale 1: 400 grid episodes, 50k DQN steps, 3k DDPG and MPO steps

Env steps are the underlying environment's (an agent step of the Q-table and linear Q repeats its
action for action_repeat of them). Updates are table or gradient updates: one per agent step for
the Q-table and linear Q; one every train_every steps after the warm-up for DQN; a critic update per
step (and an actor update every policy_every steps) after the random phase for DDPG; one per step
after learning_starts for MPO (benchmarks/mpo_speed.py times MPO's acting and updating apart).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from rlstudy.agents.mpo import environment as mpo_environment
from rlstudy.agents.mpo import loop as mpo_loop
from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.registry import BASICS, build_agent

from bellman_problem import shipped

ENVS = {"qtable": "MountainCar-v0", "linear_q": "MountainCar-v0", "dqn": "CartPole-v1", "ddpg": "Pendulum-v1",
        "mpo": "Pendulum-v1"}


def budget(name: str, scale: float) -> dict:
    if name in ("qtable", "linear_q"):
        return {"episodes": int(400 * scale)}
    if name == "dqn":
        return {"total_steps": int(50_000 * scale)}
    return {"total_steps": int(3_000 * scale)}


def updates_done(name: str, params, steps: int) -> int:
    if name in ("qtable", "linear_q"):
        return steps
    if name == "dqn":
        start = int(params.learning_starts * params.total_steps)
        return sum(1 for s in range(start + 1, steps) if s % params.train_every == 0)
    return max(0, steps - int(params.random_fraction * params.total_steps) - 1)


def report(name: str, env_steps: int, updates: int, seconds: float) -> None:
    print(f"{name:>9} on {ENVS[name]:<15} {env_steps:>7} env steps in {seconds:6.1f} s: "
          f"{env_steps / seconds:8.0f} env steps/s, {updates / seconds:8.0f} updates/s")


def time_mpo(scale: float) -> None:
    params = shipped(MPOParams, "mpo", total_steps=int(3_000 * scale), learning_starts=int(200 * scale))
    env = mpo_environment.make_env(ENVS["mpo"])
    start = time.perf_counter()
    mpo_loop.train(env, params, torch.device("cpu"), 0, np.random.default_rng(0), torch.Generator().manual_seed(0), "MPO")
    updates = (params.total_steps - params.learning_starts) * params.updates_per_step
    report("mpo", params.total_steps, updates, time.perf_counter() - start)


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    torch.set_num_threads(1)
    for name, agent in ((name, build_agent(name)) for name in BASICS):
        params = shipped(agent.params, name, "params", **budget(name, scale))
        env = agent.make_env(ENVS[name], params)
        start = time.perf_counter()
        _, returns = agent.train(env, params, 0, np.random.default_rng(0), torch.Generator().manual_seed(0))
        seconds = time.perf_counter() - start
        steps = returns.frame()["step"].iloc[-1]  # agent steps
        report(name, steps * getattr(params, "action_repeat", 1), updates_done(name, params, steps), seconds)
    time_mpo(scale)


if __name__ == "__main__":
    main()
