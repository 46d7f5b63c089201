"""Discrete BCQ (Fujimoto et al. 2019): Q-learning restricted to actions the buffer's policy takes.

An imitation head learns the behaviour policy G(a|s) by maximum likelihood. Actions whose
probability relative to the most likely action is at or under `threshold` are masked, both when
acting and when choosing the next action of the double-DQN target (whose value comes from the
target network). Loss: Huber TD error + imitation NLL + 1e-2 * mean squared imitation logits.
Its statistics: the three terms, Q and the targets, and the share of actions the filter keeps.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from rlstudy.core.diagnostics import td_statistics
from rlstudy.core.errors import InputError

from .buffer import Batch
from .double_dqn import Learner, LearnerParams, double_q_target
from .envs import EnvInfo
from .networks import BCQNetwork

LOGIT_PENALTY = 1e-2


def allowed_actions(logits: torch.Tensor, threshold: float) -> torch.Tensor:
    """True where G(a|s) / max_b G(b|s) > threshold (the most likely action is always allowed)."""
    log_probs = F.log_softmax(logits, dim=1)
    return (log_probs - log_probs.max(1, keepdim=True).values).exp() > threshold


def constrained_greedy(q: torch.Tensor, logits: torch.Tensor, threshold: float) -> torch.Tensor:
    """argmax of Q over the allowed actions."""
    return q.masked_fill(~allowed_actions(logits, threshold), -torch.inf).argmax(1)


def bcq_loss(q: torch.Tensor, logits: torch.Tensor, actions: torch.Tensor, target: torch.Tensor,
             threshold: float, measure: bool = True) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss and, if `measure`, its statistics; `kept_share` is the share of the batch states'
    actions that the filter at `threshold` allows."""
    chosen = q.gather(1, actions[:, None]).squeeze(1)
    td = F.smooth_l1_loss(chosen, target)
    imitation = F.nll_loss(F.log_softmax(logits, dim=1), actions)
    penalty = LOGIT_PENALTY * logits.pow(2).mean()
    if not measure:
        return td + imitation + penalty, {}
    with torch.no_grad():
        kept = allowed_actions(logits, threshold).float().mean()
    return td + imitation + penalty, {**td_statistics(td, chosen, target), "loss_imitation": imitation.item(),
                                      "loss_logit_penalty": penalty.item(), "kept_share": kept.item()}


class BCQ(Learner):
    def __init__(self, info: EnvInfo, params: LearnerParams, threshold: float, device: torch.device):
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold < 1:
            raise InputError(f"config 'offline.bcq_threshold': a number in [0, 1) expected, got {threshold!r}")
        super().__init__(BCQNetwork(info), params, device, ("q", "imitation"))
        self.threshold = threshold

    def greedy(self, states: torch.Tensor) -> torch.Tensor:
        q, logits = self.network(states)
        return constrained_greedy(q, logits, self.threshold)

    def loss(self, batch: Batch, measure: bool) -> tuple[torch.Tensor, dict[str, float]]:
        with torch.no_grad():
            next_actions = self.greedy(batch.next_states)
            target = double_q_target(next_actions, self.target.q_values(batch.next_states), batch, self.params.gamma)
        q, logits = self.network(batch.states)
        return bcq_loss(q, logits, batch.actions, target, self.threshold, measure)

    def gradients(self, batch: Batch, measure: bool) -> tuple[float, dict[str, float]]:
        if self.flat is None:
            return super().gradients(batch, measure)
        td, imitation, penalty, chosen, target, out = self.compiled_gradients(batch, True, self.threshold, LOGIT_PENALTY)
        loss = float(td + imitation + penalty)
        if not measure:
            return loss, {}
        logits = out[:, self.network.info.num_actions:]
        return loss, {**td_statistics(torch.tensor(td), torch.from_numpy(chosen), torch.from_numpy(target)),
                      "loss_imitation": float(imitation), "loss_logit_penalty": float(penalty),
                      "kept_share": float(allowed_by_hand(logits, self.threshold).mean())}


def allowed_by_hand(logits: np.ndarray, threshold: float) -> np.ndarray:
    """allowed_actions in NumPy: G(a|s) / max_b G(b|s) = exp(logit_a - max_b logit_b)."""
    return np.exp(logits - logits.max(1, keepdims=True)) > threshold
