"""The compiled backend of the optimisers (config `numerics: compiled`, the default): the quantities of
reference.py, computed fast. What it adds to the equations, and why:

  * batch (residuals.make_batch): the transitions as network inputs, the features (sin s, cos s) of
    every state computed once per trajectory and gathered, the rows [s; s^] stacked so that one
    forward pass serves Q(s_m, a_m) and V(s^_{m+1}) (residuals.ResidualBatch);
  * sgd_direction: mean(j * grad j^) by the chain rule written out (residuals.sgd_grad_q gives
    d mean(j j^)/dQ with j fixed, qnet.backward carries it through the network), the network's
    passes by trig.py's Numba kernels, the mini-batch in parts that stay in the cache;
  * particle_losses: each particle's Q by the compiled forward pass, every particle's residuals at once.

The budget's sampled residual has its compiled pass in budget_kernel.py. tests/unit/bellman/test_numerics.py
checks every function here against reference.py's.
"""

from __future__ import annotations

import torch

from .qnet import Network, backward, forward_cached, forward_no_grad
from ..loss import bellman_loss
from .residuals import ResidualBatch, make_batch, residual_pair, sgd_grad_q

NAME = "compiled"
TRANSITIONS_PER_PASS = 2000  # a mini-batch goes through the network in parts of this many transitions


def batch(*args, **kwargs) -> ResidualBatch:
    """residuals.make_batch (looked up at each call: tests spy on it)."""
    return make_batch(*args, **kwargs)


def sgd_direction(theta: torch.Tensor, batch: ResidualBatch, gamma: float):
    """The step's direction mean(j * grad j^) over the mini-batch, and its j, j^ and Q(s_m, a_m).

    The mini-batch goes through the network TRANSITIONS_PER_PASS transitions at a time, each part's
    gradient added up: a part's activations (a few hundred KB each) stay in the cache between the
    forward and the backward pass, where the whole batch's (MB each) went to memory and back, and
    two runs side by side competed for it. The sum is the same gradient up to float32 rounding."""
    m = len(batch.action_indices)
    grad = torch.zeros_like(theta)
    parts = []
    net = Network(theta)
    for start in range(0, m, TRANSITIONS_PER_PASS):
        part = batch.transitions(start, min(start + TRANSITIONS_PER_PASS, m))
        q_main, cache = forward_cached(net, part.feats)
        q_next = None if part.next_feats is None else forward_no_grad(net, part.next_feats)
        j, j_hat = residual_pair(q_main, q_next, part, gamma)
        grad += backward(theta, cache, sgd_grad_q(j, q_main, part, gamma, batch_size=m))
        parts.append((j, j_hat, q_main[:len(j)].gather(1, part.action_indices.view(-1, 1)).squeeze(1)))
    j, j_hat, q_taken = (torch.cat(values) for values in zip(*parts))
    return grad, j, j_hat, q_taken


def particle_losses(particles: torch.Tensor, batch: ResidualBatch, gamma: float) -> torch.Tensor:
    """L_i for each particle: each particle's Q by a loop of ordinary matmuls (measured faster here than
    one batched matmul over all particles, whose large intermediates make it memory-bound), then
    every particle's residuals at once."""
    nets = [Network(theta) for theta in particles]
    q_main = torch.stack([forward_no_grad(net, batch.feats) for net in nets])
    q_next = None if batch.next_feats is None else torch.stack([forward_no_grad(net, batch.next_feats)
                                                                 for net in nets])
    return bellman_loss(*residual_pair(q_main, q_next, batch, gamma))
