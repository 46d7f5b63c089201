"""A tiny MPO learner and a random batch, shared by the MPO and the diagnostics tests."""

import numpy as np
import torch

from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.mpo.learner import MPO
from rlstudy.agents.replay import ReplayBuffer
from shipped_params import shipped

TINY = shipped(MPOParams, "mpo", batch_size=8, policy_layer_sizes=(16,), critic_layer_sizes=(16, 16), action_samples=4)


def tiny_agent(params=TINY):
    torch.manual_seed(0)
    return MPO(3, 1, np.array([-2.0], np.float32), np.array([2.0], np.float32), params, torch.device("cpu"),
               torch.Generator().manual_seed(0))


def random_batch(length=1, batch=8):
    replay = ReplayBuffer(64, (3,), (1,), extras={"actions_raw": (1,), "ends": (), "behaviour_log_probs": ()})
    rng = np.random.default_rng(0)
    for i in range(64):
        replay.add(rng.normal(size=3), rng.uniform(-2, 2, 1), -rng.uniform(), rng.normal(size=3), False,
                   actions_raw=rng.normal(size=1), ends=i % 10 == 9, behaviour_log_probs=-1.0)
    return replay.sample_sequences(batch, length, rng)
