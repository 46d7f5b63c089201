"""UR, uncorrelated resampling: s^_{m+1} = s_m + a*dt + sigma*sqrt(dt)*Z', a fresh draw from the
kernel of (s_m, a) (unbiased with the recorded action a = a_m)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Draw, Estimator, GridResidual

if TYPE_CHECKING:  # imported where a state is drawn (base.py says why)
    import torch


def prob_plus_torch(task: str, states: torch.Tensor) -> torch.Tensor:
    """pi(a=+1|s) of the task's policy (the target policy of evaluation, the behaviour policy of control)."""
    import torch

    if task == "evaluation":
        return 0.5 + torch.sin(states) / 5.0
    return torch.full_like(states, 0.5)


def resampled_state(draw: Draw) -> torch.Tensor:
    import torch

    device = draw.states.device
    if draw.ur_action == "recorded":
        a = draw.action_indices.to(torch.float64) * 2.0 - 1.0
    elif draw.ur_action == "policy":  # the notebook's variant: a fresh action from the policy at s
        uniform = torch.rand(draw.s.shape, generator=draw.generator, dtype=torch.float64).to(device)
        plus = uniform < prob_plus_torch(draw.task, draw.s)
        a = plus.to(torch.float64) * 2.0 - 1.0
    else:
        raise ValueError(f"ur_action must be 'recorded' or 'policy', got {draw.ur_action!r}")
    z = torch.randn(draw.s.shape, generator=draw.generator, dtype=torch.float64).to(device)
    return draw.dynamics.step(draw.s, a, z)


def population_terms(grid: GridResidual) -> torch.Tensor:
    """(TQ(s,a) - Q(s,a))^2 with the recorded action; with a fresh action drawn at s,
    (TQ(s,a) - Q(s,a)) (sum_b pi(b|s) TQ(s,b) - Q(s,a))."""
    bellman = grid.c + grid.expected  # TQ
    if grid.ur_action == "recorded":
        return (bellman - grid.q) ** 2
    return (bellman - grid.q) * ((grid.fresh_probs * bellman).sum(dim=1, keepdim=True) - grid.q)


UR = Estimator("UR", "a fresh SDE step from s_m (the recorded action, or the policy's with ur_action: policy)",
               second_state=resampled_state, lookahead=1, rows_per_sample=3, population_terms=population_terms)
