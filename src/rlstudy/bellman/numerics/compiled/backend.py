"""The compiled backend of the optimisers (config `numerics: compiled`, the default): the quantities of
reference.py, computed fast. What it adds to the equations, and why:

  * batch (residuals.make_batch): the transitions as network inputs, the features (sin s, cos s) of
    every state computed once per trajectory and gathered with the rest of a transition from one
    packed row (residuals.TrajectoryTensors.transitions), the rows [s; s^] stacked so that one
    forward pass serves Q(s_m, a_m) and V(s^_{m+1}) (residuals.ResidualBatch);
  * sgd_direction: mean(j * grad j^) by the chain rule written out (d mean(j j^)/dQ with j fixed),
    the whole mini-batch one compiled call (residual_kernels.py: trig.py's layer passes, the BLAS
    sgemm's products, the residuals and the backward pass), in parts that stay in the cache;
  * particle_losses: each particle's Q by the compiled forward pass, its loss by residual_kernels.py.

The budget's sampled residual has its compiled pass in budget_kernel.py. tests/unit/bellman/test_numerics.py
checks every function here against reference.py's.
"""

from __future__ import annotations

import numpy as np
import torch

from rlstudy.core import compiled_updates

from . import residual_kernels
from .qnet import (ROWS_PER_PART, GradientSums, Network, backward, forward_cached, forward_no_grad,
                   layer_offsets)
from ..loss import bellman_loss
from .residuals import ResidualBatch, make_batch, residual_pair, sgd_grad_q

NAME = "compiled"
TRANSITIONS_PER_PASS = 1000  # a mini-batch goes through the network in parts of this many transitions


def batch(*args, **kwargs) -> ResidualBatch:
    """residuals.make_batch (looked up at each call: tests spy on it)."""
    return make_batch(*args, **kwargs)


def sgd_direction(theta: torch.Tensor, batch: ResidualBatch, gamma: float):
    """The step's direction mean(j * grad j^) over the mini-batch, and its j, j^ and Q(s_m, a_m).

    The mini-batch goes through the network TRANSITIONS_PER_PASS transitions at a time, each part's
    gradient added up: a part's activations (400 KB each) stay in the cache between the forward and
    the backward pass, where the whole batch's (MB each) went to memory and back, and two runs side
    by side competed for it. The sum is the same gradient up to float32 rounding. Where the compiled
    passes run, the whole mini-batch is one call (residual_kernels.py) and the gradient's sums are
    float64 across the parts; else the residuals are residual_pair's and sgd_grad_q's tensor
    operations and the backward pass qnet.backward's."""
    m = len(batch.action_indices)
    net = Network(theta)
    if net.layers is None or not _compiled_rows(batch):
        return _tensor_direction(net, batch, gamma)
    (w1, b1), (w2, b2), (w3, b3) = net.layers
    sums = GradientSums.zeros()
    j, j_hat, q_taken = (np.empty(m, np.float32) for _ in range(3))
    w2_aligned = compiled_updates._aligned(w2.size).reshape(w2.shape)  # the sgemm's operands: 64-byte aligned
    w2_aligned[:] = w2
    residual_kernels.kernels().sgd_direction(
        batch.feats.numpy(), _rows(batch.next_feats), np.ascontiguousarray(w1.T), b1, w2_aligned, b2, w3, b3,
        batch.action_indices.numpy(), batch.rewards.numpy(), batch.alt_rewards.numpy(), _rows(batch.alt_probs),
        _rows(batch.next_probs), np.float32(gamma), TRANSITIONS_PER_PASS, j, j_hat, q_taken, sums.w1_t, sums.b1,
        sums.w2, sums.b2, sums.w3, sums.b3)
    return sums.flat(), torch.from_numpy(j), torch.from_numpy(j_hat), torch.from_numpy(q_taken)


_NONE = np.empty((0, 0), np.float32)  # an absent operand of residual_kernels' passes


def _rows(values: torch.Tensor | None) -> np.ndarray:
    return _NONE if values is None else np.ascontiguousarray(values.numpy())


def _compiled_rows(batch: ResidualBatch) -> bool:
    """Whether the batch's rows are the compiled passes' inputs: float32 on the CPU."""
    return batch.feats.device.type == "cpu" and batch.feats.dtype == torch.float32 and all(
        values.dtype == torch.float32 for values in (batch.rewards, batch.alt_rewards))


def _tensor_direction(net: Network, batch: ResidualBatch, gamma: float):
    """sgd_direction by residual_pair, sgd_grad_q and backward (the library's passes: a network beyond
    the compiled cosine's range, or tensors that are not float32 on the CPU)."""
    m = len(batch.action_indices)
    grad = torch.zeros_like(net.theta)
    parts = []
    for start in range(0, m, TRANSITIONS_PER_PASS):
        part = batch.transitions(start, min(start + TRANSITIONS_PER_PASS, m))
        q_main, cache = forward_cached(net.theta, part.feats)
        q_next = None if part.next_feats is None else forward_no_grad(net, part.next_feats)
        j, j_hat = residual_pair(q_main, q_next, part, gamma)
        grad += backward(net.theta, cache, sgd_grad_q(j, q_main, part, gamma, batch_size=m))
        parts.append((j, j_hat, q_main[:len(j)].gather(1, part.action_indices.view(-1, 1)).squeeze(1)))
    j, j_hat, q_taken = (torch.cat(values) for values in zip(*parts))
    return grad, j, j_hat, q_taken


def particle_losses(particles: torch.Tensor, batch: ResidualBatch, gamma: float) -> torch.Tensor:
    """L_i for each particle: each particle's Q by a loop of ordinary matmuls (measured faster here than
    one batched matmul over all particles, whose large intermediates make it memory-bound), on the
    rows of [s; s^'] and s' at once, then its loss: every particle in one compiled call
    (residual_kernels.py), or every particle's residuals at once by tensor operations where the
    compiled passes do not run (a network beyond the compiled cosine's range, other tensors)."""
    rows = batch.feats if batch.next_feats is None else torch.cat([batch.feats, batch.next_feats])
    main = len(batch.feats)
    if (particles.device.type == "cpu" and particles.dtype == torch.float32 and not particles.requires_grad
            and _compiled_rows(batch)):
        losses = np.empty(len(particles))
        if residual_kernels.kernels().particle_losses(
                np.ascontiguousarray(particles.numpy()), np.array(layer_offsets(), np.int64),
                np.ascontiguousarray(rows.numpy()), main,
                batch.action_indices.numpy(), batch.rewards.numpy(), batch.alt_rewards.numpy(), _rows(batch.alt_probs),
                _rows(batch.next_probs), np.float32(gamma), ROWS_PER_PART, losses):
            return torch.from_numpy(losses).to(torch.float32)
    nets = [Network(theta) for theta in particles]
    q = torch.stack([forward_no_grad(net, rows) for net in nets])
    q_next = None if batch.next_feats is None else q[:, main:]
    return bellman_loss(*residual_pair(q[:, :main], q_next, batch, gamma))
