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
    evaluation_episodes: int  # config offline.evaluation_episodes: what the per-run claims need (config.yaml)

    def stream(self, *names: str) -> int:
        return seeding.stream_seed(self.master, "offline", self.env_id, str(self.seed), *names)

    def rng(self, *names: str) -> np.random.Generator:
        return seeding.numpy_rng(self.master, "offline", self.env_id, str(self.seed), *names)

    def make_env(self):
        return make_env(self.env_id, self.atari)

    def seed_torch(self, stage: str) -> None:
        """Network initialisation of a stage draws from torch's generator, seeded per stage."""
        torch.manual_seed(self.stream("init", stage))

    def evaluate(self, learner: Learner) -> np.ndarray:
        """Returns of `evaluation_episodes` episodes acting with eval_eps; the same episodes' seed
        (the notebook's seed + 100: a stream of its own) for every stage and algorithm."""
        eps = self.params.eval_eps
        return evaluate(lambda state, rng: learner.act(state, eps, rng), self.env_id, self.atari,
                        self.stream("evaluation-env"), self.rng("evaluation-actions"), self.evaluation_episodes)


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
