"""The notebook's networks on a torso that BCQ's two heads share.

Atari: the Nature-DQN conv torso (32x8x8/4, 64x4x4/2, 64x3x3/1 -> 3136 features), each head
512 -> actions. Other environments: a 256-256 ReLU MLP torso, each head one linear layer (the
notebook's FC_Q gave its Q and imitation networks a 256-256 MLP each, sharing nothing; the issue
asks for the shared torso, which also halves the work of an update).
"""

from __future__ import annotations

import torch
from torch import nn

from .envs import EnvInfo

CONV_FEATURES = 3136  # 64 x 7 x 7 for 84 x 84 inputs


def _torso(info: EnvInfo) -> tuple[nn.Module, int]:
    if info.is_atari:
        return nn.Sequential(
            nn.Conv2d(info.history, 32, kernel_size=8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1), nn.ReLU(),
            nn.Flatten(),
        ), CONV_FEATURES
    return nn.Sequential(nn.Linear(info.observation_shape[0], 256), nn.ReLU(),
                         nn.Linear(256, 256), nn.ReLU()), 256


def _head(info: EnvInfo, features: int) -> nn.Module:
    if info.is_atari:
        return nn.Sequential(nn.Linear(features, 512), nn.ReLU(), nn.Linear(512, info.num_actions))
    return nn.Linear(features, info.num_actions)


def _inputs(states: torch.Tensor, info: EnvInfo) -> torch.Tensor:
    # Atari frames are stored as uint8; scaled to [0, 1] as in Nature DQN.
    return states.float() / 255.0 if info.is_atari else states.float()


class QNetwork(nn.Module):
    """Q(s, .) of the (behavioural and offline) DQN."""

    def __init__(self, info: EnvInfo):
        super().__init__()
        self.info = info
        self.torso, self.features = _torso(info)
        self.q = _head(info, self.features)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return self.q(self.torso(_inputs(states, self.info)))


class BCQNetwork(QNetwork):
    """Q(s, .) and the imitation logits of the behaviour policy G(. | s), on a shared torso."""

    def __init__(self, info: EnvInfo):
        super().__init__(info)
        self.imitation = _head(info, self.features)

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.torso(_inputs(states, self.info))
        return self.q(features), self.imitation(features)

    def q_values(self, states: torch.Tensor) -> torch.Tensor:
        """Q alone (the target network's only use)."""
        return super().forward(states)
