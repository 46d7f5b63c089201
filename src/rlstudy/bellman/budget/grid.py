"""The grid of states the budget's fits evaluate the network on: its float64 inputs, the policies'
probabilities there and the state values V of a Q on it."""

from __future__ import annotations

import numpy as np
import torch

from ..problem import exact
from ..numerics import reference
from ..problem.laws import prob_plus


def features64(s: np.ndarray) -> torch.Tensor:
    """(sin s, cos s) in float64, the network's inputs for the float64 fits."""
    s = torch.as_tensor(np.asarray(s, dtype=np.float64))
    return torch.stack([torch.sin(s), torch.cos(s)], dim=-1)


def policy_probs(policy: str, s: np.ndarray) -> np.ndarray:
    """(pi(-1|s), pi(+1|s)) of a named policy (sde.prob_plus), shape (n, 2)."""
    plus = np.asarray(prob_plus(policy, np.asarray(s, dtype=np.float64)), dtype=np.float64)
    return np.stack([1.0 - plus, plus], axis=1)


def state_values(q: torch.Tensor, target_probs: torch.Tensor | None) -> torch.Tensor:
    """V from Q (n, 2): the evaluated policy's expectation, or the max for control (target_probs None)."""
    if q.shape[1] != 2:
        raise ValueError(f"Q of the circle MDP has 2 actions, got shape {tuple(q.shape)}")
    return reference.state_values(q, target_probs)


def target_probs_of(task: str, s: np.ndarray) -> torch.Tensor | None:
    policy = exact.EVALUATED_POLICY[task]
    return None if policy is None else torch.from_numpy(policy_probs(policy, s))
