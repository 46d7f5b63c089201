"""UR, uncorrelated resampling: s^_{m+1} = s_m + a*dt + sigma*sqrt(dt)*Z', a fresh draw from the
kernel of (s_m, a) (unbiased with the recorded action a = a_m)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..problem.laws import prob_plus
from ..problem.sde import POLICY_OF_TASK
from .base import Draw, Estimator, GridResidual

if TYPE_CHECKING:  # imported where a state is drawn (base.py says why)
    import torch


def resampled_state(draw: Draw):
    if draw.ur_action == "recorded":
        a = draw.signs(draw.action_indices)
    elif draw.ur_action == "policy":  # the notebook's variant: a fresh action from the task's policy at s
        a = draw.signs(draw.uniforms() < prob_plus(POLICY_OF_TASK[draw.task], draw.s))
    else:
        raise ValueError(f"ur_action must be 'recorded' or 'policy', got {draw.ur_action!r}")
    return draw.dynamics.step(draw.s, a, draw.normals())


def population_terms(grid: GridResidual) -> torch.Tensor:
    """(TQ(s,a) - Q(s,a))^2 with the recorded action; with a fresh action drawn at s,
    (TQ(s,a) - Q(s,a)) (sum_b pi(b|s) TQ(s,b) - Q(s,a))."""
    bellman = grid.c + grid.expected  # TQ
    if grid.ur_action == "recorded":
        return (bellman - grid.q) ** 2
    return (bellman - grid.q) * ((grid.fresh_probs * bellman).sum(dim=1, keepdim=True) - grid.q)


UR = Estimator("UR", "a fresh SDE step from s_m (the recorded action, or the policy's with ur_action: policy)",
               second_state=resampled_state, lookahead=1, rows_per_sample=3, population_terms=population_terms)
