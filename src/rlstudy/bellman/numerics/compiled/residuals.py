"""Bellman residuals and the ways around double sampling: DS, UR, BFF and BFF-matched.

For a transition (s_m, a_m, r_m, s_{m+1}) the residual is

    j = r_m + gamma * V(s_{m+1}) - Q(s_m, a_m)

with V(s') = sum_a pi(a|s') Q(s', a) for evaluation and max_a Q(s', a) for control. The mean
squared residual E[j]^2 needs two independent next states; each estimator supplies the second one
(one module each under estimators/, registered in estimators/__init__.py):

    DS  (double sampling, here: none)  s^_{m+1} = s_{m+1}            (biased: j^ = j)
    UR  (uncorrelated resampling)      s^_{m+1} = s_m + a*dt + sigma*sqrt(dt)*Z'
    BFF (borrowing from the future)    s^_{m+1} = s_m + (s_{m+2} - s_{m+1})
    BFF-matched                        BFF on the transitions with a_{m+1} = a_m only

and j^ is j with s^_{m+1} in place of s_{m+1}. SGD follows mean(j * grad j^) (the notebook's
`j^.backward(j)`, see sgd_grad_q), CBO minimises L = mean(j * j^) / 2. This module is the compiled
backend's layout of them (numerics/compiled/backend.py); numerics/reference.py writes the same in plain PyTorch.

What each is unbiased for: UR's s^_{m+1} is an independent draw from the kernel of (s_m, a_m), so
E[j j^ | s_m, a_m] is the squared Bellman residual (the notebook's `policy` variant draws a fresh
action instead, whose kernel differs from a_m's whenever the two actions differ). DS gives
E[j^2] = residual^2 + Var(j | s_m, a_m): biased by the variance of the noise. BFF's increment
s_{m+2} - s_{m+1} carries the action a_{m+1}, not a_m: it has the right law only where the two
actions agree. BFF-matched keeps the transitions where they do: its increment then has the right
law, but conditioning on a_{m+1} = a_m tilts the distribution of s_{m+1} under a state-dependent
policy (a small bias on evaluation); on control (uniform behaviour) it amounts to recorded-action UR
with the trajectory's own noise. It is its own estimator, labelled as such everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...estimators import Estimator, TensorDraw, get_estimator
from ...problem.laws import evaluation_plus, reward_of_sine
from .qnet import features
from ...problem.sde import Dynamics



@dataclass(frozen=True)
class TrajectoryTensors:
    """A trajectory held as tensors, ready for indexing, with the network inputs of every state
    computed once (a mini-batch then gathers them instead of recomputing sin and cos)."""

    states: torch.Tensor  # float64 (n,)
    action_indices: torch.Tensor  # int64 (n,)
    rewards: torch.Tensor  # float64 (n,)
    features: torch.Tensor  # float32 (n, 2): (sin s, cos s)

    @classmethod
    def from_arrays(cls, states, action_indices, rewards) -> "TrajectoryTensors":
        states = torch.as_tensor(states, dtype=torch.float64)
        return cls(states, torch.as_tensor(action_indices).long(), torch.as_tensor(rewards, dtype=torch.float64),
                   features(states))

    def to(self, device: torch.device | str) -> "TrajectoryTensors":
        """The same trajectory on another device (the features are computed on the CPU either way)."""
        return TrajectoryTensors(self.states.to(device), self.action_indices.to(device), self.rewards.to(device),
                                 self.features.to(device))


def rows_per_sample(estimator: str | Estimator) -> int:
    """Network evaluations (one state each) a residual needs per transition: Q at s and s^', and at s'
    when it differs from s^' (UR, BFF)."""
    return get_estimator(estimator).rows_per_sample


def start_pool(estimator: str | Estimator, action_indices: torch.Tensor) -> torch.Tensor:
    """The start indices m an estimator draws its transitions from (on the CPU): every usable one, or
    those its start filter keeps (BFF-matched: a_{m+1} = a_m)."""
    return get_estimator(estimator).start_pool(action_indices)


@dataclass(frozen=True)
class ResidualBatch:
    """Everything the residuals of m transitions need, with the network inputs precomputed.

    feats holds the features of [s; s^'], the rows through which the gradient of j^ flows;
    next_feats those of s' when it differs from s^' (UR, BFF), None for DS (where s^' = s').
    So SGD runs autograd over 2m rows only, and CBO evaluates each particle on all rows.
    """

    feats: torch.Tensor  # float32 (2m, 2)
    next_feats: torch.Tensor | None  # float32 (m, 2)
    action_indices: torch.Tensor  # int64 (m,)
    rewards: torch.Tensor  # float32 (m,)
    alt_rewards: torch.Tensor  # float32 (m,), the reward paired with s^' (= rewards unless reward_of=next)
    alt_probs: torch.Tensor | None  # float32 (m, 2): pi(.|s^') for evaluation; None for control
    next_probs: torch.Tensor | None  # float32 (m, 2): pi(.|s')

    def transitions(self, start: int, stop: int) -> "ResidualBatch":
        """The batch of transitions start..stop-1 (itself when that is all of them)."""
        m = len(self.action_indices)
        if (start, stop) == (0, m):
            return self
        rows = slice(start, stop)

        def cut(values):
            return None if values is None else values[rows]

        return ResidualBatch(torch.cat([self.feats[rows], self.feats[m + start:m + stop]]), cut(self.next_feats),
                             self.action_indices[rows], self.rewards[rows], self.alt_rewards[rows],
                             cut(self.alt_probs), cut(self.next_probs))


def make_batch(traj: TrajectoryTensors, starts: torch.Tensor, estimator: str | Estimator, task: str,
               dynamics: Dynamics, generator: torch.Generator, ur_action: str = "recorded") -> ResidualBatch:
    """Gather the transitions starting at `starts` and the estimator's second next state.

    The random numbers come from `generator` on the CPU and are moved to the trajectory's device, so
    a run draws the same numbers on any device (and on the CPU nothing is moved)."""
    estimator = get_estimator(estimator)
    device = traj.states.device
    # index_select: 3x faster than tensor[index] here, and this runs every step.
    starts = starts.to(device)
    following = starts + 1
    s = traj.states.index_select(0, starts)
    a_idx = traj.action_indices.index_select(0, starts)
    rewards = traj.rewards.index_select(0, starts)
    feats_s, feats_next = traj.features.index_select(0, starts), traj.features.index_select(0, following)
    s_alt = estimator.second_state(TensorDraw(traj.states, starts, s, a_idx, task, dynamics, ur_action, generator))
    feats_alt = feats_next if s_alt is None else features(s_alt)
    alt_rewards = rewards
    if dynamics.reward_of == "next" and s_alt is not None:
        alt_rewards = reward_of_sine(feats_alt[:, 0].to(torch.float64))

    def probs(feats):
        """pi(.|s) from the features: the evaluation policy needs only sin s."""
        if task != "evaluation":
            return None
        plus = evaluation_plus(feats[:, 0])
        return torch.stack([1.0 - plus, plus], dim=-1)

    return ResidualBatch(
        feats=torch.cat([feats_s, feats_alt]),
        next_feats=None if s_alt is None else feats_next,
        action_indices=a_idx, rewards=rewards.to(torch.float32), alt_rewards=alt_rewards.to(torch.float32),
        alt_probs=probs(feats_alt), next_probs=probs(feats_next))


def next_values(q_next: torch.Tensor, probs: torch.Tensor | None) -> torch.Tensor:
    """V(s') from Q(s', .): expectation under the policy (evaluation) or max (control)."""
    if probs is None:
        return q_next.max(dim=-1).values
    return (q_next * probs).sum(dim=-1)


def residual_pair(q_main: torch.Tensor, q_next: torch.Tensor | None, batch: ResidualBatch,
                  gamma: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(j, j^) from Q at batch.feats (q_main) and at batch.next_feats (q_next; None for DS, where j^ = j).
    Q of shape (rows, actions), or (networks, rows, actions) for several networks at once (CBO's
    particles): j and j^ then have a row per network."""
    m = len(batch.action_indices)
    q_s = q_main[..., :m, :].gather(-1, batch.action_indices.view(-1, 1).expand(*q_main.shape[:-2], m, 1)).squeeze(-1)
    j_hat = batch.alt_rewards + gamma * next_values(q_main[..., m:, :], batch.alt_probs) - q_s
    if q_next is None:
        return j_hat, j_hat
    j = batch.rewards + gamma * next_values(q_next, batch.next_probs) - q_s
    return j, j_hat


def sgd_grad_q(j: torch.Tensor, q_main: torch.Tensor, batch: ResidualBatch, gamma: float,
               batch_size: int | None = None) -> torch.Tensor:
    """d mean(j * j^) / d q_main with j held fixed: the upstream gradient of SGD's step mean(j * grad j^).

    j^ = r^ + gamma * V(s^') - Q(s, a): its Q(s, a) gets -j/m, its V(s^') gets gamma*j/m, spread over
    the actions by pi(.|s^') (evaluation) or sent to the argmax (control, the subgradient of max).
    m is batch_size when `batch` is a part of the mini-batch (its gradient then adds up), else len(j).
    """
    m = len(j)
    weight = (j / (batch_size or m)).view(-1, 1)
    grad = torch.zeros_like(q_main)
    grad[:m].scatter_(1, batch.action_indices.view(-1, 1), -weight)
    if batch.alt_probs is None:
        grad[m:].scatter_(1, q_main[m:].argmax(dim=1, keepdim=True), gamma * weight)
    else:
        grad[m:] = gamma * weight * batch.alt_probs
    return grad
