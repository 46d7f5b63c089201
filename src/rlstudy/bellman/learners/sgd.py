"""Plain SGD on the Bellman residual, with the notebook's epoch and mini-batch scheme.

Each epoch draws a fresh permutation of the usable start indices, prepends the indices left
over from the previous epoch and cuts as many full mini-batches as fit; the rest carries over
(batching.py, shared with CBO's particle batches).
The step is theta <- theta - lr_k * mean(j * grad j^), lr_k = lr0 * decay**k for epoch k.
Each step's statistics are averaged per epoch (History.diagnostics, docs/diagnostics.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import ClassVar

import pandas as pd
import torch

from rlstudy.core.diagnostics import DiagnosticsLog, td_statistics
from rlstudy.core.errors import DivergenceError
from rlstudy.core.progress import progress

from .batching import epoch_batches, start_lookup
from ..estimators import Estimator, get_estimator
from .metrics import ErrorMeter
from .optimizer import Fit, Run
from ..numerics import DEFAULT, get_numerics
from ..numerics.compiled.qnet import init_params
from ..numerics.compiled.residuals import TrajectoryTensors, rows_per_sample, start_pool
from ..numerics.loss import bellman_loss
from ..problem.sde import Problem


@dataclass(frozen=True)
class SGDParams:
    SCHEMA: ClassVar[str] = "sgd_core"  # its definition in workflow/schemas/config.schema.yaml
    epochs: int
    batch_size: int  # M, transitions per mini-batch
    lr0: float  # learning rate of epoch 0
    lr_decay: float  # lr_k = lr0 * lr_decay**k
    ur_action: str  # UR's fresh next state: the recorded action, or "policy" (the notebook's)


@dataclass
class History:
    """Per-iteration records; row 0 is the initial network."""

    lr: list[float]
    loss: list[float]
    error: list[dict[str, float]]  # the meter's errors ({name: e}; empty without a meter)
    evaluations: list[int]  # cumulative network evaluations, backward passes counted as two (see below)
    seconds: list[float]  # wall time since the start (the only record that differs between reruns)
    diagnostics: pd.DataFrame = field(default_factory=pd.DataFrame)  # per epoch: the steps' statistics


def step_statistics(loss: torch.Tensor, j: torch.Tensor, q_taken: torch.Tensor, grad: torch.Tensor,
                    lr: float) -> dict[str, float]:
    """An SGD step's statistics: the residual loss, Q(s_m, a_m) and the target r + gamma V(s')
    (= j + Q(s_m, a_m)), the norm of the step's gradient, the learning rate."""
    with torch.no_grad():
        return {**td_statistics(loss, q_taken, j + q_taken), "grad_norm": float(torch.linalg.vector_norm(grad)),
                "lr": lr}


def train_sgd(theta0: torch.Tensor, traj: TrajectoryTensors, estimator: str | Estimator, task: str,
              params: SGDParams, problem: Problem, generator: torch.Generator, meter: ErrorMeter | None = None,
              label: str = "SGD", numerics: str = DEFAULT) -> tuple[torch.Tensor, History]:
    """Run SGD from theta0; returns the final parameters and the history (error only with a meter).
    numerics: the backend of the batches and the step's direction (numerics/: compiled, reference)."""
    backend = get_numerics(numerics)
    theta = theta0.clone()
    estimator = get_estimator(estimator)
    pool = start_pool(estimator, traj.action_indices)
    n_starts, starts_at = len(pool), start_lookup(pool)
    if n_starts < params.batch_size:
        raise ValueError(f"{label}: the trajectory has {n_starts} usable transitions, fewer than "
                         f"batch_size={params.batch_size}")
    history = History([math.nan], [math.nan], [meter(theta) if meter else {}], [0], [0.0])
    # A step evaluates the network on rows_per_sample rows per transition and backpropagates through
    # the 2 rows of [s; s^'], each backward costing about two forward evaluations.
    step_evaluations = params.batch_size * (rows_per_sample(estimator) + 2 * 2)
    start = time.perf_counter()
    remainder = torch.empty(0, dtype=torch.long)
    log = DiagnosticsLog()
    bar = progress(desc=label, total=params.epochs * n_starts // params.batch_size, unit="batch")
    for epoch in range(params.epochs):
        lr = params.lr0 * params.lr_decay ** epoch
        batches, remainder = epoch_batches(n_starts, params.batch_size, remainder, generator)
        for positions in batches:
            batch = backend.batch(traj, starts_at(positions), estimator, task, problem.dynamics, generator,
                                  params.ur_action)
            grad, j, j_hat, q_taken = backend.sgd_direction(theta, batch, problem.gamma)  # mean(j * grad j^)
            theta -= lr * grad
            residual_loss = bellman_loss(j, j_hat)
            log.add(step_statistics(residual_loss, j, q_taken, grad, lr))
            loss = float(residual_loss)
            if not (math.isfinite(loss) and torch.isfinite(theta).all()):
                raise DivergenceError(f"{label} diverged at iteration {len(history.loss)} "
                                      f"(epoch {epoch}, lr {lr:g}): loss {loss}")
            history.lr.append(lr)
            history.loss.append(loss)
            history.error.append(meter(theta) if meter else {})
            history.evaluations.append(history.evaluations[-1] + step_evaluations)
            history.seconds.append(time.perf_counter() - start)
            bar.update()
        log.write("iteration", len(history.loss) - 1)
        bar.set_postfix(epoch=epoch, loss=f"{loss:.4g}")
    bar.close()
    history.diagnostics = log.frame()
    return theta.detach(), history


def fit_sgd(params: SGDParams, run: Run) -> Fit:
    """One run of run_method: SGD from a network drawn by run.init."""
    theta0 = init_params(1, run.init)[0].to(run.device)
    theta, history = train_sgd(theta0, run.traj, run.estimator, run.task, params, run.problem, run.sampling,
                               run.meter, run.label, run.numerics)
    return Fit(theta, history, {"lr": history.lr, "loss": history.loss})
