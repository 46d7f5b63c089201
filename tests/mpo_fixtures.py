"""A tiny MPO learner and a random batch, shared by the MPO and the diagnostics tests."""

import numpy as np
import torch

from rlstudy.agents.mpo import MPO, MPOParams, Replay

TINY = MPOParams(batch_size=8, policy_layer_sizes=(16,), critic_layer_sizes=(16, 16), action_samples=4)


def tiny_agent(params=TINY):
    torch.manual_seed(0)
    return MPO(3, 1, np.array([-2.0], np.float32), np.array([2.0], np.float32), params, torch.device("cpu"),
               torch.Generator().manual_seed(0))


def random_batch(length=1, batch=8):
    replay = Replay(64, 3, 1)
    rng = np.random.default_rng(0)
    for i in range(64):
        replay.add(obs=rng.normal(size=3), action=rng.uniform(-2, 2, 1), action_raw=rng.normal(size=1),
                   reward=-rng.uniform(), next_obs=rng.normal(size=3), terminated=False, end=i % 10 == 9,
                   behaviour_logp=-1.0)
    return replay.sample(rng, batch, length)
