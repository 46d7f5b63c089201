"""MPO speed: environment steps per second (acting with the policy) and updates per second.

Run from the project root:
    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/mpo_speed.py [--params JSON] [--updates N]
`--params` overrides the shipped config's MPOParams (its `mpo` section; e.g. '{"batch_size": 256}'); the
replay is filled with random transitions.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.mpo.environment import make_env
from rlstudy.agents.mpo.learner import MPO
from rlstudy.agents.replay import ReplayBuffer

from bellman_problem import shipped


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="Pendulum-v1")
    p.add_argument("--params", type=json.loads, default={})
    p.add_argument("--steps", type=int, default=2000, help="environment steps timed")
    p.add_argument("--updates", type=int, default=200, help="updates timed")
    args = p.parse_args()
    params = shipped(MPOParams, "mpo", **args.params)
    torch.manual_seed(0)
    env = make_env(args.env)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    low, high = env.action_space.low, env.action_space.high
    agent = MPO(obs_dim, act_dim, low, high, params, torch.device("cpu"), torch.Generator().manual_seed(0))
    replay = ReplayBuffer(args.steps, (obs_dim,), (act_dim,),
                          extras={"actions_raw": (act_dim,), "ends": (), "behaviour_log_probs": ()})
    rng = np.random.default_rng(0)

    obs, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(args.steps):
        action, raw, logp = agent.act(obs, greedy=False)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        replay.add(obs, action, reward, next_obs, terminated,
                   actions_raw=raw, ends=terminated or truncated, behaviour_log_probs=logp)
        obs = env.reset()[0] if terminated or truncated else next_obs
    env_rate = args.steps / (time.perf_counter() - start)

    length = params.retrace_steps if params.use_retrace else 1
    agent.update(replay.sample_sequences(params.batch_size, length, rng))  # warm-up
    start = time.perf_counter()
    for _ in range(args.updates):
        agent.update(replay.sample_sequences(params.batch_size, length, rng))
    update_rate = args.updates / (time.perf_counter() - start)
    print(f"{args.env}, torch threads {torch.get_num_threads()}, params {json.dumps(args.params)}")
    print(f"environment steps/s (acting with the policy): {env_rate:,.0f}")
    print(f"updates/s (batch {params.batch_size}, {params.action_samples} action samples): {update_rate:,.1f}")
    print(f"training at {params.updates_per_step} update(s) per step: about "
          f"{1 / (1 / env_rate + params.updates_per_step / update_rate):,.1f} steps/s")


if __name__ == "__main__":
    main()
