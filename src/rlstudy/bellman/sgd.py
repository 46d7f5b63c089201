"""Plain SGD on the Bellman residual, with the notebook's epoch and mini-batch scheme.

Each epoch draws a fresh permutation of the usable start indices, prepends the indices left
over from the previous epoch and cuts as many full mini-batches as fit; the rest carries over.
The step is theta <- theta - lr_k * mean(j * grad j^), lr_k = lr0 * decay**k for epoch k.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar

import torch

from rlstudy.core.errors import DivergenceError
from rlstudy.core.progress import progress

from .metrics import ErrorMeter
from .qnet import backward, forward_cached, forward_no_grad
from .residuals import (
    TrajectoryTensors,
    cbo_loss,
    make_batch,
    residual_pair,
    rows_per_sample,
    sgd_grad_q,
    start_pool,
)
from .sde import Dynamics


@dataclass(frozen=True)
class SGDParams:
    SCHEMA: ClassVar[str] = "sgd_core"  # its definition in workflow/schemas/config.schema.yaml
    epochs: int
    batch_size: int  # M, transitions per mini-batch
    lr0: float  # learning rate of epoch 0
    lr_decay: float  # lr_k = lr0 * lr_decay**k
    gamma: float = 0.9
    ur_action: str = "recorded"  # UR's fresh next state: the recorded action, or "policy" (the notebook's)


def epoch_batches(n_items: int, batch_size: int, remainder: torch.Tensor,
                  generator: torch.Generator) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Full mini-batches of one epoch, and the indices carried over to the next."""
    order = torch.cat([remainder, torch.randperm(n_items, generator=generator)])
    n_full = len(order) // batch_size
    batches = list(order[:n_full * batch_size].view(n_full, batch_size)) if n_full else []
    return batches, order[n_full * batch_size:]


@dataclass
class History:
    """Per-iteration records; row 0 is the initial network."""

    lr: list[float]
    loss: list[float]
    error: list[dict[str, float]]  # the meter's errors ({name: e}; empty without a meter)
    evaluations: list[int]  # cumulative network evaluations, backward passes counted as two (see below)
    seconds: list[float]  # wall time since the start (the only record that differs between reruns)


def train_sgd(theta0: torch.Tensor, traj: TrajectoryTensors, method: str, task: str, params: SGDParams,
              dynamics: Dynamics, generator: torch.Generator, meter: ErrorMeter | None = None,
              label: str = "SGD") -> tuple[torch.Tensor, History]:
    """Run SGD from theta0; returns the final parameters and the history (error only with a meter)."""
    theta = theta0.clone()
    pool = start_pool(method, traj.action_indices)
    n_starts = len(pool)
    if n_starts < params.batch_size:
        raise ValueError(f"{label}: the trajectory has {n_starts} usable transitions, fewer than "
                         f"batch_size={params.batch_size}")
    history = History([math.nan], [math.nan], [meter(theta) if meter else {}], [0], [0.0])
    # A step evaluates the network on rows_per_sample rows per transition and backpropagates through
    # the 2 rows of [s; s^'], each backward costing about two forward evaluations.
    step_evaluations = params.batch_size * (rows_per_sample(method) + 2 * 2)
    start = time.perf_counter()
    remainder = torch.empty(0, dtype=torch.long)
    bar = progress(desc=label, total=params.epochs * n_starts // params.batch_size, unit="batch")
    for epoch in range(params.epochs):
        lr = params.lr0 * params.lr_decay ** epoch
        batches, remainder = epoch_batches(n_starts, params.batch_size, remainder, generator)
        for positions in batches:
            batch = make_batch(traj, pool[positions], method, task, dynamics, generator, params.ur_action)
            q_main, cache = forward_cached(theta, batch.feats)
            q_next = None if batch.next_feats is None else forward_no_grad(theta, batch.next_feats)
            j, j_hat = residual_pair(q_main, q_next, batch, params.gamma)
            theta -= lr * backward(theta, cache, sgd_grad_q(j, q_main, batch, params.gamma))
            loss = float(cbo_loss(j, j_hat))
            if not (math.isfinite(loss) and torch.isfinite(theta).all()):
                raise DivergenceError(f"{label} diverged at iteration {len(history.loss)} "
                                      f"(epoch {epoch}, lr {lr:g}): loss {loss}")
            history.lr.append(lr)
            history.loss.append(loss)
            history.error.append(meter(theta) if meter else {})
            history.evaluations.append(history.evaluations[-1] + step_evaluations)
            history.seconds.append(time.perf_counter() - start)
            bar.update()
        bar.set_postfix(epoch=epoch, loss=f"{loss:.4g}")
    bar.close()
    return theta.detach(), history
