"""What the three stages of one run (environment, seed) share: seeds, parameters, evaluation."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from rlstudy.core import seeding

from .double_dqn import Learner, LearnerParams
from .envs import AtariPreprocessing, EnvInfo, make_env
from .evaluation import evaluate


@dataclass(frozen=True)
class Run:
    env_id: str
    seed: int        # the run's seed (wildcard)
    master: int      # the config's master seed
    params: LearnerParams
    atari: AtariPreprocessing
    evaluation_episodes: int  # config offline.evaluation_episodes: a stage's last evaluation (the claims')
    curve_episodes: int       # config offline.curve_episodes: the evaluations before it (the curves' points)

    def stream(self, *names: str) -> int:
        return seeding.stream_seed(self.master, "offline", self.env_id, str(self.seed), *names)

    def rng(self, *names: str) -> np.random.Generator:
        return seeding.numpy_rng(self.master, "offline", self.env_id, str(self.seed), *names)

    def make_env(self):
        return make_env(self.env_id, self.atari)

    def seed_torch(self, stage: str) -> None:
        """Network initialisation of a stage draws from torch's generator, seeded per stage."""
        torch.manual_seed(self.stream("init", stage))

    def evaluate(self, learner: Learner, final: bool = True) -> np.ndarray:
        """Returns of episodes acting with eval_eps: `evaluation_episodes` of them for a stage's last
        evaluation, which the per-run claims test, `curve_episodes` before it; the same episodes' seed
        (the notebook's seed + 100: a stream of its own) for every stage and algorithm."""
        eps = self.params.eval_eps
        episodes = self.evaluation_episodes if final else self.curve_episodes
        return evaluate(lambda state, rng: learner.act(state, eps, rng), self.env_id, self.atari,
                        self.stream("evaluation-env"), self.rng("evaluation-actions"), episodes)


def fingerprint(**values) -> str:
    """What a checkpoint must have been written with to be resumed."""
    return json.dumps(values, sort_keys=True, default=str)


def run_fingerprint(args) -> str:
    """The fingerprint of a step's command line: every argument but --tensorboard, which only
    mirrors the diagnostics and changes nothing the run computes."""
    return fingerprint(args={k: v for k, v in vars(args).items() if k != "tensorboard"})


def info_record(info: EnvInfo) -> dict:
    return {"env_id": info.env_id, "is_atari": info.is_atari, "num_actions": info.num_actions,
            "observation_shape": list(info.observation_shape), "history": info.history}
