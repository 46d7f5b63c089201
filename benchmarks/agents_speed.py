"""Training speed of the five agents (the basics notebook's four and MPO): environment steps and
updates per second, each agent trained for a short budget with its default parameters, on one thread.

    PYTHONPATH=src python benchmarks/agents_speed.py [scale] [--out results.json]
    # scale 1: 400 grid episodes, 50k DQN steps, 3k DDPG and MPO steps; --out: the seconds of each, as JSON

Env steps are the underlying environment's (an agent step of the Q-table and linear Q repeats its
action for action_repeat of them). Updates are table or gradient updates: one per agent step for
the Q-table and linear Q; one every train_every steps after the warm-up for DQN; a critic update per
step (and an actor update every policy_every steps) after the random phase for DDPG; one per step
after learning_starts for MPO (benchmarks/mpo_speed.py times MPO's acting and updating apart).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import torch

from rlstudy.agents import mpo
from rlstudy.agents.registry import AGENTS

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


def report(name: str, env_steps: int, updates: int, seconds: float) -> float:
    print(f"{name:>9} on {ENVS[name]:<15} {env_steps:>7} env steps in {seconds:6.1f} s: "
          f"{env_steps / seconds:8.0f} env steps/s, {updates / seconds:8.0f} updates/s")
    return seconds


def time_mpo(scale: float) -> float:
    params = mpo.MPOParams(total_steps=int(3_000 * scale), learning_starts=int(200 * scale))
    env = mpo.make_env(ENVS["mpo"], "mpo.env")
    start = time.perf_counter()
    mpo.train(env, params, torch.device("cpu"), 0, np.random.default_rng(0), torch.Generator().manual_seed(0), "MPO")
    updates = (params.total_steps - params.learning_starts) * params.updates_per_step
    return report("mpo", params.total_steps, updates, time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scale", nargs="?", type=float, default=1.0, help="budget scale")
    p.add_argument("--out", type=Path, help="write each agent's training seconds here, as JSON")
    args = p.parse_args()
    scale, out = args.scale, args.out
    torch.set_num_threads(1)
    seconds = {}
    for name, agent in AGENTS.items():
        params = dataclasses.replace(agent.params(), **budget(name, scale))
        env = agent.make_env(ENVS[name], params)
        start = time.perf_counter()
        _, returns = agent.train(env, params, 0, np.random.default_rng(0), torch.Generator().manual_seed(0))
        elapsed = time.perf_counter() - start
        steps = returns.frame()["step"].iloc[-1]  # agent steps
        seconds[name] = report(name, steps * getattr(params, "action_repeat", 1), updates_done(name, params, steps),
                               elapsed)
    seconds["mpo"] = time_mpo(scale)
    if out:
        out.write_text(json.dumps({f"{name} training s": s for name, s in seconds.items()}, indent=2) + "\n")


if __name__ == "__main__":
    main()
