"""(c) The sampled residual of the trajectory: the estimator's loss mean(j j^)/2 over every transition
it may use, its second next states drawn once, as one deterministic function of the network's
parameters; Q at the states interpolated linearly from the network on a grid."""

from __future__ import annotations

import numpy as np
import torch

from ..numerics.compiled import budget_kernel
from ..problem import exact
from ..estimators import ESTIMATORS, ArrayDraw
from ..numerics import DEFAULT as DEFAULT_NUMERICS
from ..numerics import get_numerics, reference
from ..numerics.loss import bellman_loss
from ..problem.laws import reward
from ..numerics.compiled.qnet import forward
from ..problem.sde import Problem
from .grid import features64, target_probs_of
from .interpolation import interpolation


class _InterpolatedLoss(torch.autograd.Function):
    """L(q_grid) of a SampledResidual, its gradient computed with it (budget_kernel.py)."""

    @staticmethod
    def forward(ctx, q_grid: torch.Tensor, residual: "SampledResidual") -> torch.Tensor:
        total, grad = residual.sums(q_grid.detach())
        ctx.save_for_backward(grad)
        return q_grid.new_tensor(0.5 * total / residual.transitions)

    @staticmethod
    def backward(ctx, upstream: torch.Tensor):
        (grad,) = ctx.saved_tensors
        return upstream * grad, None


class SampledResidual:
    """The estimator's sampled loss mean(j j^)/2 over every transition of a trajectory it may use, with
    its second next states drawn once (the estimator's own draw; UR's from `rng`), as one deterministic
    function of theta.

    Q at the transitions' states is the network on grid(points) interpolated linearly (the network is
    smooth: at 4096 points the interpolation error is O(h^2); `direct_loss` evaluates the
    network at every state itself, to check it). States s, s' and s^ of m transitions make ~3m
    evaluations per step otherwise. The residuals are the reference layer's (numerics/reference.py);
    with numerics "compiled" (the default) the loss and its gradient on the grid are one compiled pass
    over the transitions (budget_kernel.py), with "reference" autograd through the residuals; either
    way autograd carries the gradient through the network."""

    def __init__(self, states: np.ndarray, action_indices: np.ndarray, rewards: np.ndarray, task: str,
                 estimator: str, problem: Problem, rng: np.random.Generator, points: int,
                 ur_action: str = "recorded", max_transitions: int = 0, numerics: str = DEFAULT_NUMERICS):
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
        get_numerics(numerics)  # refuses an unknown name
        est = ESTIMATORS[estimator]
        dynamics = problem.dynamics
        self.gamma, self.task, self.points, self.numerics = problem.gamma, task, points, numerics
        starts = est.start_pool(torch.as_tensor(np.asarray(action_indices))).numpy()
        if max_transitions and len(starts) > max_transitions:  # evenly spaced, deterministic
            starts = starts[np.linspace(0, len(starts) - 1, max_transitions).round().astype(np.int64)]
        self.transitions = len(starts)
        s = states[starts]
        a_idx = np.asarray(action_indices[starts], dtype=np.int64)
        s_next = states[starts + 1]
        r = np.asarray(rewards[starts], dtype=np.float64)
        # the estimator's own draw (estimators/), on arrays: UR's fresh states from `rng`; None: s' (DS, j^ = j)
        s_alt = est.second_state(ArrayDraw(states, starts, s, a_idx, task, dynamics, ur_action, rng))
        if s_alt is None:
            s_alt, r_alt = s_next, r
        else:
            r_alt = r if dynamics.reward_of == "current" else reward(s_alt)
        self.sample = reference.Transitions(
            torch.from_numpy(s), torch.from_numpy(a_idx), torch.from_numpy(r), torch.from_numpy(s_next),
            torch.from_numpy(s_alt), torch.from_numpy(np.asarray(r_alt, dtype=np.float64)),
            target_probs_of(task, s_next), target_probs_of(task, s_alt))
        self.grid_feats = features64(exact.grid(points))
        # the kernel's layout: rows s, s', s^ (DS: s' again; its alt_rewards are the rewards, so j^ = j)
        rows = [interpolation(x, points) for x in (s, s_next, s_alt)]
        self.lower, self.upper, self.fraction, self.rest = (np.ascontiguousarray(np.stack(part)) for part in zip(*rows))
        next_probs, alt_probs = self.sample.next_probs, self.sample.alt_probs  # None for control: V is the max
        self.kernel_probs = (np.empty((2, 0, 2)) if next_probs is None else
                             np.ascontiguousarray(np.stack([next_probs.numpy(), alt_probs.numpy()])))

    def sums(self, q_grid: torch.Tensor) -> tuple[float, torch.Tensor]:
        """sum_m j_m j^_m and the gradient of the loss on the grid, for Q on the grid (points, 2)."""
        q = np.ascontiguousarray(q_grid.numpy(), dtype=np.float64)
        grad = np.zeros_like(q)
        sample = self.sample
        total = budget_kernel.kernel()(q, self.lower, self.upper, self.fraction, self.rest, sample.actions.numpy(),
                                       sample.rewards.numpy(), sample.alt_rewards.numpy(), self.kernel_probs,
                                       self.gamma, grad)
        return total, torch.from_numpy(grad)

    def residuals(self, q: reference.QFunction) -> tuple[torch.Tensor, torch.Tensor]:
        """(j, j^) of every transition, with q(states) Q at those states, (m, 2)."""
        return reference.residuals(q, self.sample, self.gamma)[:2]

    def interpolated(self, q_grid: torch.Tensor) -> reference.QFunction:
        """Q at any states, interpolated linearly from Q on the grid (points, 2)."""
        def q(states: torch.Tensor) -> torch.Tensor:
            lower, upper, fraction, rest = (torch.from_numpy(x) for x in interpolation(states.numpy(), self.points))
            return q_grid.index_select(0, lower) * rest[:, None] + q_grid.index_select(0, upper) * fraction[:, None]
        return q

    def loss(self, theta: torch.Tensor) -> torch.Tensor:
        q_grid = forward(theta, self.grid_feats)
        if self.numerics == "reference":
            return bellman_loss(*self.residuals(self.interpolated(q_grid)))
        return _InterpolatedLoss.apply(q_grid, self)

    @torch.no_grad()
    def residual_scale(self, theta: torch.Tensor) -> float:
        """mean(j^2)/2: the size of the terms whose products the loss averages (UR's and BFF's loss can
        be near 0 or negative, so it is no scale for a tolerance)."""
        j, _ = self.residuals(self.interpolated(forward(theta, self.grid_feats)))
        return float(0.5 * (j * j).mean())

    @torch.no_grad()
    def direct_loss(self, theta: torch.Tensor, chunk: int = 100_000) -> float:
        """The same loss with the network evaluated at every state (float64, no interpolation)."""
        total = 0.0
        m = self.transitions

        def q(states: torch.Tensor) -> torch.Tensor:
            return forward(theta, features64(states.numpy()))
        for start in range(0, m, chunk):
            j, j_hat, _ = reference.residuals(q, self.sample.part(slice(start, min(start + chunk, m))), self.gamma)
            total += float((j * j_hat).sum())
        return 0.5 * total / m
