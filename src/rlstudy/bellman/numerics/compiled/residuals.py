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

import numpy as np
import torch

from ...estimators import Estimator, TensorDraw, get_estimator
from ...problem.laws import evaluation_plus, reward_of_sine
from . import residual_kernels
from .qnet import features
from ...problem.sde import Dynamics



@dataclass(frozen=True)
class TrajectoryTensors:
    """A trajectory held as tensors, ready for indexing, with the network inputs of every state
    computed once (a mini-batch then gathers them instead of recomputing sin and cos), and
    everything a transition reads packed into one row of `transitions` (TRANSITION_COLUMNS)."""

    states: torch.Tensor  # float64 (n,)
    action_indices: torch.Tensor  # int64 (n,)
    rewards: torch.Tensor  # float64 (n,)
    features: torch.Tensor  # float32 (n, 2): (sin s, cos s)
    transitions: torch.Tensor  # float64 (n, 9): row m holds TRANSITION_COLUMNS of the transition from s_m

    @classmethod
    def from_arrays(cls, states, action_indices, rewards) -> "TrajectoryTensors":
        states = torch.as_tensor(states, dtype=torch.float64)
        action_indices = torch.as_tensor(action_indices).long()
        rewards = torch.as_tensor(rewards, dtype=torch.float64)
        feats = features(states)
        return cls(states, action_indices, rewards, feats, transition_table(states, action_indices, rewards, feats))

    def to(self, device: torch.device | str) -> "TrajectoryTensors":
        """The same trajectory on another device (the features are computed on the CPU either way)."""
        return TrajectoryTensors(self.states.to(device), self.action_indices.to(device), self.rewards.to(device),
                                 self.features.to(device), self.transitions.to(device))


# The columns of a row m of TrajectoryTensors.transitions: the states s_m, s_{m+1}, s_{m+2} (NaN past
# the end: no estimator reads beyond its lookahead), r_m, a_m, and the features of s_m and s_{m+1}.
# Every value is exact in float64 (the float32 features and the action indices too), so a batch made
# from the table has the bits of one gathered from each array.
TRANSITION_COLUMNS = ("s", "s_next", "s_after", "reward", "action", "sin_s", "cos_s", "sin_next", "cos_next")
_AHEAD = slice(1, 3)  # s_{m+1}, s_{m+2}
_FEATS, _FEATS_NEXT = slice(5, 7), slice(7, 9)


def transition_table(states: torch.Tensor, action_indices: torch.Tensor, rewards: torch.Tensor,
                     feats: torch.Tensor) -> torch.Tensor:
    """The rows of TRANSITION_COLUMNS for every start m of the trajectory. Made by NumPy, which asks
    the kernel for huge pages for large arrays (PyTorch's allocator does not)."""
    n = len(states)
    table = torch.from_numpy(np.full((n, len(TRANSITION_COLUMNS)), np.nan))
    for k in range(3):
        table[:n - k, k] = states[k:]
    table[:, 3], table[:, 4] = rewards, action_indices.to(torch.float64)
    table[:, _FEATS] = feats
    table[:n - 1, _FEATS_NEXT] = feats[1:]
    return table


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


@dataclass(frozen=True)
class GatheredRows:
    """The packed table's rows of m starts, as a batch reads them."""

    s: torch.Tensor  # float64 (m,): s_m
    ahead: torch.Tensor  # float64 (m, 2): s_{m+1}, s_{m+2}
    action_indices: torch.Tensor  # int64 (m,)
    rewards: torch.Tensor  # float32 (m,)
    feats: torch.Tensor  # float32 (2m, 2): the features of [s_m; s_{m+1}]


def gather_rows(table: torch.Tensor, starts: torch.Tensor) -> GatheredRows:
    """The rows of `starts`: on the CPU one compiled pass (residual_kernels._gather_transitions: the
    table's random reads and the conversions, which as some ten tensor operations cost as much again),
    elsewhere gather_rows_by_tensors, with the same values."""
    if table.device.type != "cpu":
        return gather_rows_by_tensors(table, starts)
    m = len(starts)
    rows = GatheredRows(torch.empty(m, dtype=torch.float64), torch.empty(m, 2, dtype=torch.float64),
                        torch.empty(m, dtype=torch.int64), torch.empty(m, dtype=torch.float32),
                        torch.empty(2 * m, 2, dtype=torch.float32))
    residual_kernels.kernels().gather_transitions(table.numpy(), starts.contiguous().numpy(), rows.s.numpy(),
                                                  rows.ahead.numpy(), rows.action_indices.numpy(),
                                                  rows.rewards.numpy(), rows.feats.numpy())
    return rows


def gather_rows_by_tensors(table: torch.Tensor, starts: torch.Tensor) -> GatheredRows:
    """gather_rows by PyTorch's operations (on any device)."""
    # index_select: 3x faster than tensor[index] here, and this runs every step; one row per start.
    rows = table.index_select(0, starts)
    return GatheredRows(rows[:, 0].contiguous(), rows[:, _AHEAD], rows[:, 4].long(), rows[:, 3].to(torch.float32),
                        torch.cat([rows[:, _FEATS].float(), rows[:, _FEATS_NEXT].float()]))


def make_batch(traj: TrajectoryTensors, starts: torch.Tensor, estimator: str | Estimator, task: str,
               dynamics: Dynamics, generator: torch.Generator, ur_action: str = "recorded") -> ResidualBatch:
    """Gather the transitions starting at `starts` and the estimator's second next state.

    The random numbers come from `generator` on the CPU and are moved to the trajectory's device, so
    a run draws the same numbers on any device (and on the CPU nothing is moved)."""
    estimator = get_estimator(estimator)
    starts = starts.to(traj.states.device)
    m = len(starts)
    rows = gather_rows(traj.transitions, starts)
    s_alt = estimator.second_state(TensorDraw(traj.states, starts, rows.s, rows.action_indices, task, dynamics,
                                              ur_action, generator, ahead=rows.ahead))
    feats_next = rows.feats[m:]
    feats, feats_alt = rows.feats, feats_next  # DS: s^' = s'
    if s_alt is not None:
        feats_alt = features(s_alt)
        feats = torch.cat([rows.feats[:m], feats_alt])
    alt_rewards = rows.rewards
    if dynamics.reward_of == "next" and s_alt is not None:
        alt_rewards = reward_of_sine(feats_alt[:, 0].to(torch.float64)).to(torch.float32)

    def probs(feats):
        """pi(.|s) from the features: the evaluation policy needs only sin s."""
        if task != "evaluation":
            return None
        plus = evaluation_plus(feats[:, 0])
        return torch.stack([1.0 - plus, plus], dim=-1)

    return ResidualBatch(feats=feats, next_feats=None if s_alt is None else feats_next,
                         action_indices=rows.action_indices, rewards=rows.rewards, alt_rewards=alt_rewards,
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
