"""MPO's networks (Acme's): a critic Q(s, a) and a diagonal Gaussian policy on layer-normed torsos."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

MIN_LOG_STD, MAX_LOG_STD = -20.0, 2.0


def layer_norm_mlp(in_dim: int, sizes: tuple[int, ...]) -> nn.Sequential:
    """Acme's torso: Linear -> LayerNorm -> tanh, then Linear -> ELU for each further layer."""
    layers: list[nn.Module] = [nn.Linear(in_dim, sizes[0]), nn.LayerNorm(sizes[0]), nn.Tanh()]
    for width_in, width_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(width_in, width_out), nn.ELU()]
    return nn.Sequential(*layers)


class Critic(nn.Module):
    """Q(s, a) of the action clipped to the bounds, with a small-init linear head (Acme)."""

    def __init__(self, obs_dim: int, act_dim: int, sizes: tuple[int, ...], low: np.ndarray, high: np.ndarray):
        super().__init__()
        self.register_buffer("low", torch.as_tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(high, dtype=torch.float32))
        self.torso = layer_norm_mlp(obs_dim + act_dim, sizes)
        self.head = nn.Linear(sizes[-1], 1)
        nn.init.trunc_normal_(self.head.weight, std=0.01)
        nn.init.zeros_(self.head.bias)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        action = torch.clamp(action, self.low, self.high)
        return self.head(self.torso(torch.cat([obs, action], dim=-1))).squeeze(-1)


class GaussianPolicy(nn.Module):
    """A diagonal Gaussian over raw actions; the environment gets them clipped to the bounds."""

    def __init__(self, obs_dim: int, act_dim: int, sizes: tuple[int, ...], low: np.ndarray, high: np.ndarray):
        super().__init__()
        self.register_buffer("low", torch.as_tensor(low, dtype=torch.float32))
        self.register_buffer("high", torch.as_tensor(high, dtype=torch.float32))
        self.torso = layer_norm_mlp(obs_dim, sizes)
        self.mean = nn.Linear(sizes[-1], act_dim)
        self.log_std = nn.Linear(sizes[-1], act_dim)
        nn.init.kaiming_normal_(self.mean.weight, nonlinearity="linear")
        nn.init.zeros_(self.mean.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.torso(obs)
        return self.mean(features), torch.clamp(self.log_std(features), MIN_LOG_STD, MAX_LOG_STD)

    def clip(self, action: torch.Tensor) -> torch.Tensor:
        return torch.clamp(action, self.low, self.high)


def policy_from_state_dict(state: dict[str, torch.Tensor], sizes: tuple[int, ...]) -> GaussianPolicy:
    """The trained policy of a saved MPO model (dimensions and bounds come from the tensors)."""
    policy_state = {k.removeprefix("policy."): v for k, v in state.items() if k.startswith("policy.")}
    low, high = policy_state["low"].numpy(), policy_state["high"].numpy()
    obs_dim = policy_state["torso.0.weight"].shape[1]
    policy = GaussianPolicy(obs_dim, len(low), tuple(sizes), low, high)
    policy.load_state_dict(policy_state)
    return policy.eval()
