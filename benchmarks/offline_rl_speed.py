"""Speed of the offline chain: BCQ (and DQN) updates per second and environment steps per second,
for CartPole-v1 and an Atari game, and BCQ's update rate against d3rlpy's DiscreteBCQ on the same
buffer and batch size.

d3rlpy is not in the project's environment (it downgrades gymnasium): give the interpreter of a
separate venv, e.g.
    python3.11 -m venv /tmp/d3rlpy-venv
    /tmp/d3rlpy-venv/bin/pip install torch==2.13.0 d3rlpy
    PYTHONPATH=src python benchmarks/offline_rl_speed.py --d3rlpy-python /tmp/d3rlpy-venv/bin/python
Threads: one (torch.set_num_threads(1)), as the rules run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from rlstudy.offline.bcq import BCQ
from rlstudy.offline.double_dqn import DQN, LearnerParams
from rlstudy.offline.envs import AtariPreprocessing, make_env
from rlstudy.offline.training import generate_buffer

from bellman_problem import shipped

CPU = torch.device("cpu")
PREPROCESSING = shipped(AtariPreprocessing, "offline", "atari_preprocessing")
D3RLPY_SCRIPT = Path(__file__).with_name("d3rlpy_bcq_speed.py")


def rate(fn, count: int) -> float:
    """Calls per second of fn over `count` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(count):
        fn()
    return count / (time.perf_counter() - start)


def env_rate(env_id: str, steps: int, learner=None) -> float:
    """Environment steps per second, random actions or acting with a learner (eps 0)."""
    env, _ = make_env(env_id, PREPROCESSING)
    rng = np.random.default_rng(0)
    state, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        action = env.action_space.sample() if learner is None else learner.act(state, 0.0, rng)
        state, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            state, _ = env.reset()
    return steps / (time.perf_counter() - start)


def update_rates(env_id: str, params: LearnerParams, buffer_steps: int, updates: int):
    env, info = make_env(env_id, PREPROCESSING)
    torch.manual_seed(0)
    buffer, _ = generate_buffer(DQN(info, params, CPU), env, info, buffer_steps, 0, np.random.default_rng(0),
                                0.2, 0.2, 0.0, f"benchmark buffer {env_id}")
    rng = np.random.default_rng(1)
    bcq, dqn = BCQ(info, params, 0.3, CPU), DQN(info, params, CPU)
    return buffer, {
        "bcq_updates_per_s": rate(lambda: bcq.update(buffer.sample(params.batch_size, rng)), updates),
        "dqn_updates_per_s": rate(lambda: dqn.update(buffer.sample(params.batch_size, rng)), updates),
        "sample_per_s": rate(lambda: buffer.sample(params.batch_size, rng), updates),
        "env_steps_per_s_random": env_rate(env_id, 20 * updates),
        "env_steps_per_s_acting": env_rate(env_id, 5 * updates, bcq),
    }


def d3rlpy_rates(python: str, buffer, batch_size: int, updates: int) -> dict:
    """d3rlpy's DiscreteBCQ on the same transitions (episodes rebuilt from the buffer)."""
    index = np.arange(len(buffer))
    last = np.append(buffer.step[1:] == 0, True)   # an episode's last transition
    arrays = {"observations": buffer.states(buffer.frame[index], buffer.step[index]), "actions": buffer.action,
              "rewards": buffer.reward, "terminals": buffer.terminal.astype(np.float32),
              "timeouts": (last & (buffer.terminal == 0)).astype(np.float32)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "buffer.npz"
        np.savez(path, **{k: v[:len(buffer)] for k, v in arrays.items()})
        result = subprocess.run([python, str(D3RLPY_SCRIPT), str(path), str(batch_size), str(updates)],
                                capture_output=True, text=True, check=True, cwd=tmp)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--updates", type=int, default=1000, help="CartPole updates timed")
    p.add_argument("--atari", default="PongNoFrameskip-v4")
    p.add_argument("--atari-updates", type=int, default=20)
    p.add_argument("--d3rlpy-python", help="interpreter of a venv with d3rlpy (skipped when not given)")
    p.add_argument("--out", help="write the results as JSON here")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    regular = shipped(LearnerParams, "offline", "regular")
    atari = shipped(LearnerParams, "offline", "atari")
    buffer, results = update_rates("CartPole-v1", regular, 20_000, args.updates)
    results = {"CartPole-v1": results}
    results[args.atari] = update_rates(args.atari, atari, 2_000, args.atari_updates)[1]
    if args.d3rlpy_python:
        d3 = d3rlpy_rates(args.d3rlpy_python, buffer, regular.batch_size, args.updates)
        ours = results["CartPole-v1"]["bcq_updates_per_s"]
        results["d3rlpy DiscreteBCQ (CartPole-v1)"] = {
            **d3, "ratio_ours_to_d3rlpy_update": ours / d3["update_per_s"],
            "ratio_ours_to_d3rlpy_fit": ours / d3["fit_per_s"]}
    for name, values in results.items():
        print(f"{name}: " + ", ".join(f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v}"
                                       for k, v in values.items()))
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
