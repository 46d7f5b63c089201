"""The reference layer: the CBO/BFF numerics in plain PyTorch with autograd, one equation a function,
to read against docs/bellman.md ("The reference layer", "Bellman residuals").

    transitions   (s_m, a_m, r_m, s_{m+1}) of the trajectory, and the estimator's second next state
                  s^_{m+1} (estimators/: its second_state) with its reward r^_m       -> batch
    V(s)          sum_a pi(a|s) Q(s, a) (evaluation: the evaluated policy), max_a Q(s, a) (control)
    j, j^         j = r_m + gamma V(s_{m+1}) - Q(s_m, a_m),  j^ = r^_m + gamma V(s^_{m+1}) - Q(s_m, a_m)
                                                                                          -> residuals
    SGD's step    theta <- theta - lr * mean(j * grad j^), grad j^ by autograd with j held fixed
                                                                                          -> sgd_direction
    CBO's loss    L_i = mean(j_i * j^_i) / 2 of each particle                             -> particle_losses
    CBO's step    w_i = exp(-beta (L_i - min L)),  x^ = sum w_i X_i / sum w_i,
                  X_i <- X_i - lambda eta (X_i - x^) + noise sqrt(eta) (X_i - x^) Z_i     -> cbo_update
    the budget    the same mean(j * j^) / 2 over every transition of the trajectory, Q interpolated
                  from the network on a grid (budget/sampled.py)                           -> residuals

The policy and the reward are laws.py's; each estimator's draw is its own module's (estimators/).

This is one of two backends of the optimisers (config `numerics`): `reference` runs these functions;
`compiled` (the default, numerics/compiled/backend.py) computes the same quantities with Numba kernels, a
hand-written backward pass and a stacked-rows layout, several times faster, and is what the study's
artefacts are built with. CBO's weights and move (consensus_weights, cbo_update) are plain PyTorch
already and serve both. tests/unit/bellman/test_numerics.py checks that the backends agree within
float32 rounding for every estimator and task.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..estimators import Estimator, TensorDraw, get_estimator
from .loss import bellman_loss
from .compiled.qnet import features, forward
from ..problem.sde import Dynamics
from ..problem.laws import prob_plus, reward

NAME = "reference"

QFunction = Callable[[torch.Tensor], torch.Tensor]  # states (m,) -> Q(s, .) (m, actions)


@dataclass(frozen=True)
class Transitions:
    """m transitions and each one's second next state. s^_{m+1} is s_{m+1} itself for DS (j^ = j)."""

    s: torch.Tensor  # float64 (m,): s_m
    actions: torch.Tensor  # int64 (m,): the index of a_m (1: a = +1)
    rewards: torch.Tensor  # (m,): r_m
    s_next: torch.Tensor  # float64 (m,): s_{m+1}
    s_alt: torch.Tensor  # float64 (m,): s^_{m+1}
    alt_rewards: torch.Tensor  # (m,): r^_m, the reward paired with s^_{m+1} (= r_m unless reward_of is next)
    next_probs: torch.Tensor | None  # (m, 2): pi(.|s_{m+1}) of the evaluated policy; None for control (V the max)
    alt_probs: torch.Tensor | None  # (m, 2): pi(.|s^_{m+1}); None for control

    def part(self, rows: slice) -> "Transitions":
        """The transitions in `rows`."""
        return Transitions(*(None if values is None else values[rows] for values in (
            self.s, self.actions, self.rewards, self.s_next, self.s_alt, self.alt_rewards, self.next_probs,
            self.alt_probs)))


def policy_probs(task: str, states: torch.Tensor) -> torch.Tensor | None:
    """(pi(-1|s), pi(+1|s)) of the policy V averages over: the evaluation policy for evaluation; None
    for control, whose V is the max."""
    if task != "evaluation":
        return None
    plus = prob_plus("evaluation", states)
    return torch.stack([1.0 - plus, plus], dim=-1)


def batch(traj, starts: torch.Tensor, estimator: str | Estimator, task: str, dynamics: Dynamics,
          generator: torch.Generator, ur_action: str = "recorded") -> Transitions:
    """The transitions starting at `starts` of a trajectory (residuals.TrajectoryTensors), with the
    estimator's second next states (its draws from `generator`, exactly as the compiled backend's)."""
    estimator = get_estimator(estimator)
    starts = starts.to(traj.states.device)
    s, actions, rewards = traj.states[starts], traj.action_indices[starts], traj.rewards[starts]
    s_next = traj.states[starts + 1]
    s_alt = estimator.second_state(TensorDraw(traj.states, starts, s, actions, task, dynamics, ur_action, generator))
    if s_alt is None:
        s_alt, alt_rewards = s_next, rewards
    else:
        alt_rewards = rewards if dynamics.reward_of == "current" else reward(s_alt)
    # Q is float32 (the network's): so are the rewards and the policy's probabilities added to it
    return Transitions(s, actions, rewards.float(), s_next, s_alt, alt_rewards.float(),
                       _float(policy_probs(task, s_next)), _float(policy_probs(task, s_alt)))


def _float(values: torch.Tensor | None) -> torch.Tensor | None:
    return None if values is None else values.float()


def network(theta: torch.Tensor) -> QFunction:
    """Q(s, .) of the network with parameters theta: features (sin s, cos s), then qnet.forward."""
    return lambda states: forward(theta, features(states))


def state_values(q: torch.Tensor, probs: torch.Tensor | None) -> torch.Tensor:
    """V from Q (m, 2): sum_a pi(a|s) Q(s, a), or max_a Q(s, a) (probs None: control)."""
    if probs is None:
        return q.max(dim=1).values
    # the two actions' terms added as sum(dim=1) adds them, several times faster on 1e6 rows
    return q[:, 0] * probs[:, 0] + q[:, 1] * probs[:, 1]


def residuals(q: QFunction, transitions: Transitions, gamma: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(j, j^, Q(s_m, a_m)) of every transition, for Q given as a function of the states."""
    t = transitions
    q_taken = q(t.s).gather(1, t.actions.view(-1, 1)).squeeze(1)
    j = t.rewards + gamma * state_values(q(t.s_next), t.next_probs) - q_taken
    j_hat = t.alt_rewards + gamma * state_values(q(t.s_alt), t.alt_probs) - q_taken
    return j, j_hat, q_taken


def sgd_direction(theta: torch.Tensor, transitions: Transitions, gamma: float):
    """SGD's direction mean(j * grad j^): autograd's gradient of mean(j * j^) with j held fixed (the
    notebook's `j^.backward(j)`); with its j, j^ and Q(s_m, a_m) for the step's statistics."""
    theta = theta.detach().clone().requires_grad_(True)
    j, j_hat, q_taken = residuals(network(theta), transitions, gamma)
    (j.detach() * j_hat).mean().backward()
    return theta.grad, j.detach(), j_hat.detach(), q_taken.detach()


def particle_losses(particles: torch.Tensor, transitions: Transitions, gamma: float) -> torch.Tensor:
    """L_i = mean(j_i * j^_i) / 2 of each particle (M, d), one network at a time."""
    with torch.no_grad():
        return torch.stack([bellman_loss(*residuals(network(theta), transitions, gamma)[:2]) for theta in particles])


def consensus_weights(losses: torch.Tensor, beta: float) -> torch.Tensor:
    """exp(-beta * (L - min L)) normalised to sum to one; the shift makes it finite for any beta, L."""
    shifted = -beta * (losses - losses.min())
    return torch.softmax(shifted.to(torch.float64), dim=0)


def cbo_update(particles: torch.Tensor, weights: torch.Tensor, lam: float, eta: float, noise: float,
               normals: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """One CBO move of particles (M, d) given normalised weights (M,) and standard normals (M, d);
    normals None: no noise (noise 0, whose normals would be multiplied by zero).

    Returns (new particles, consensus). Particles at the consensus stay there: both the drift and
    the noise are proportional to X_i - x^.
    """
    consensus = (weights.to(particles.dtype) @ particles)
    offset = particles - consensus
    moved = particles - lam * eta * offset
    if normals is None:
        return moved, consensus
    return moved + noise * math.sqrt(eta) * offset * normals, consensus
