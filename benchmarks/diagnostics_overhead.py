"""What the training diagnostics cost: the share of each learner's training time spent computing
and logging them.

The diagnostics code is the shared helpers (core.diagnostics: td_statistics, grad_norm, and the
DiagnosticsLog's add, write and write_at) and the learners' own (dqn.buffer_composition,
sgd.step_statistics). Each is wrapped with a stopwatch where the learners look it up, and a short
training run of each learner is timed in full: the share is the time inside them over the run's.
Both are CPU time of the thread, so that other processes on a shared machine do not count; timing
whole runs with and without the diagnostics instead is far noisier than the effect here. Not counted:
the float conversions written inline (the Q-table's and linear Q's statistics, DDPG's actor loss,
BCQ's loss terms and kept share, CBO's loss extremes), a microsecond or two each per measured update.

    PYTHONPATH=src python benchmarks/diagnostics_overhead.py [--scale 1]

One thread, as the rules run. Scale 1: 400 grid episodes, 50k DQN steps, 3k DDPG and MPO steps,
5k behavioural steps, 2k BCQ and offline DQN updates on a 20k-transition buffer, an SGD epoch on
1e6 transitions (batch 1e4), 10 CBO steps of the notebook's swarm (N = 100, m = 1e4).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from rlstudy.agents import ddpg, dqn, tabular
from rlstudy.agents.mpo import environment as mpo_environment
from rlstudy.agents.mpo import loop as mpo_loop
from rlstudy.agents.mpo.config import MPOParams
from rlstudy.bellman.learners import cbo, sgd
from rlstudy.bellman.numerics.compiled.qnet import init_params
from rlstudy.bellman.numerics.compiled.residuals import TrajectoryTensors
from rlstudy.bellman.problem.sde import sample_trajectory
from rlstudy.core import diagnostics
from rlstudy.offline import bcq, double_dqn, training
from rlstudy.offline.envs import AtariPreprocessing, make_env

from bellman_problem import CBO_NOTEBOOK, DYNAMICS, PROBLEM, shipped

CPU = torch.device("cpu")
HELPERS = ("td_statistics", "grad_norm", "buffer_composition", "step_statistics")
MODULES = (tabular, dqn, ddpg, double_dqn, bcq, sgd)


class Stopwatch:
    """CPU time spent inside the wrapped functions; a call nested in a wrapped one counts once."""

    def __init__(self):
        self.seconds, self.depth = 0.0, 0

    def wrap(self, function: Callable) -> Callable:
        def timed(*args, **kwargs):
            self.depth += 1
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.seconds += time.thread_time() - start
        return timed


def instrument(watch: Stopwatch) -> None:
    for module in MODULES:
        for name in HELPERS:
            if hasattr(module, name):
                setattr(module, name, watch.wrap(getattr(module, name)))
    for name in ("add", "write", "write_at"):
        setattr(diagnostics.DiagnosticsLog, name, watch.wrap(getattr(diagnostics.DiagnosticsLog, name)))


def runs(scale: float, checkpoints: Path) -> dict[str, Callable[[], object]]:
    """A short training run of each learner (the offline loops' checkpoints go to `checkpoints`)."""
    def rng():
        return np.random.default_rng(0)

    def generator():
        return torch.Generator().manual_seed(0)

    def no_evaluation(learner, final=True):  # the training alone is timed
        return np.zeros(1)

    grid = shipped(tabular.TabularParams, "qtable", "params", episodes=int(400 * scale))
    atari = shipped(AtariPreprocessing, "offline", "atari_preprocessing")
    env, info = make_env("CartPole-v1", atari)
    params = shipped(double_dqn.LearnerParams, "offline", "regular")
    torch.manual_seed(0)
    buffer, _ = training.generate_buffer(double_dqn.DQN(info, params, CPU), env, info, 20_000, 0, rng(), 0.2, 0.2,
                                         0.0, "buffer")

    def offline(learner):
        return lambda: training.train_offline(learner, buffer, int(2000 * scale), rng(), no_evaluation,
                                              checkpoints / f"{type(learner).__name__}.pt", "x", "offline")

    trajectory = sample_trajectory("uniform", 1_000_000, DYNAMICS, np.random.default_rng(0))
    traj = TrajectoryTensors.from_arrays(trajectory.states, trajectory.action_indices, trajectory.rewards)
    swarm = cbo.CBOParams(**{**CBO_NOTEBOOK, "epochs": max(1, int(10 * scale))})
    mpo_params = shipped(MPOParams, "mpo", total_steps=int(3000 * scale), learning_starts=int(200 * scale))
    dqn_params = shipped(dqn.DQNParams, "dqn", "params", total_steps=int(50_000 * scale))
    ddpg_params = shipped(ddpg.DDPGParams, "ddpg", "params", total_steps=int(3000 * scale))
    sgd_params = shipped(sgd.SGDParams, "sgd", "control", epochs=1)  # one epoch of the control task's setting
    return {
        "qtable": lambda: tabular.train_qtable(tabular.make_grid_env("MountainCar-v0", grid, "qtable"), grid, 0, rng()),
        "linear_q": lambda: tabular.train_linear_q(tabular.make_grid_env("MountainCar-v0", grid, "linear_q"), grid, 0,
                                                   rng(), generator()),
        "dqn": lambda: dqn.train_dqn(gym.make("CartPole-v1"), dqn_params, 0, rng(), generator()),
        "ddpg": lambda: ddpg.train_ddpg(gym.make("Pendulum-v1"), ddpg_params, 0, rng(), generator()),
        "mpo": lambda: mpo_loop.train(mpo_environment.make_env("Pendulum-v1"), mpo_params, CPU, 0, rng(), generator(),
                                 "MPO"),
        "behavioural DQN": lambda: training.train_online(
            double_dqn.DQN(info, params, CPU), make_env("CartPole-v1", atari)[0], info,
            int(5000 * scale), 0, rng(), no_evaluation, checkpoints / "behavioural.pt", "x", "behavioural"),
        "bcq": offline(bcq.BCQ(info, params, 0.3, CPU)),
        "offline DQN": offline(double_dqn.DQN(info, params, CPU)),
        "sgd": lambda: sgd.train_sgd(init_params(1, generator())[0], traj, "UR", "control", sgd_params, PROBLEM,
                                     generator()),
        "cbo": lambda: cbo.train_cbo(cbo.initial_swarm(swarm, generator(), 1.0), traj, "UR", "control", swarm,
                                     PROBLEM, generator()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=float, default=1.0, help="budget scale")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    watch = Stopwatch()
    instrument(watch)
    rows = []
    with tempfile.TemporaryDirectory() as checkpoints:
        for name, run in runs(args.scale, Path(checkpoints)).items():
            watch.seconds = 0.0
            start = time.thread_time()
            run()
            rows.append((name, time.thread_time() - start, watch.seconds))
    print(f"\n{'learner':<16} {'run CPU s':>9} {'diagnostics CPU s':>18} {'share':>8}")
    for name, total, spent in rows:
        print(f"{name:<16} {total:9.2f} {spent:18.3f} {100 * spent / total:7.2f} %")


if __name__ == "__main__":
    main()
