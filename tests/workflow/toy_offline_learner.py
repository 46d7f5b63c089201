"""A toy offline learner, for tests only: a myopic Q-network that regresses Q(s, a) on the reward
alone (a discount of zero), acting greedily on it. It is copied into a project copy as
src/rlstudy/offline/toy_learner.py and registered there with one line."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rlstudy.core.diagnostics import td_statistics
from rlstudy.offline.double_dqn import Learner
from rlstudy.offline.networks import QNetwork


class MyopicQ(Learner):
    def __init__(self, info, params, device: torch.device):
        super().__init__(QNetwork(info), params, device)

    def greedy(self, states: torch.Tensor) -> torch.Tensor:
        return self.network(states).argmax(1)

    def loss(self, batch, measure: bool):
        q = self.network(batch.states).gather(1, batch.actions[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, batch.rewards)
        return loss, td_statistics(loss, q, batch.rewards) if measure else {}
