"""Consensus-based optimisation (CBO) of the Bellman residual over a swarm of Q networks.

Each particle X_i is a flat parameter vector. One step, on a fresh random subset of m transitions:

    L_i  = mean(j_i * j^_i) / 2                                   (numerics: particle_losses)
    w_i  = exp(-beta * (L_i - min_k L_k))                         (shifted: no underflow, no 0/0)
    x^   = sum_i w_i X_i / sum_i w_i                               (the consensus)
    X_i <- X_i - lambda*eta*(X_i - x^) + noise*sqrt(eta)*(X_i - x^) * Z_i,   Z_i ~ N(0, I)

(numerics/reference.py: consensus_weights, cbo_update; the noise is component-wise, "anisotropic" CBO,
as in the notebook). The consensus network is the one whose error is reported. With particle_batch =
particles, one epoch is one step over all particles; a smaller particle_batch cycles through random
particle batches as the notebook does.

Why the notebook's setting cannot converge, and the options beyond it (all off in its setting) that
make one converge: the additive kick (kick, kick_decay), beta re-chosen for a target ESS
(ess_target), output biases at the reward level (output_bias_init="reward_level") and BFF-matched
in place of BFF: docs/bellman.md, "What CBO needs".
Samples are drawn uniformly with replacement (m << n; a randperm of 1e6 per step costs more
than a whole step of the small swarms).
The ESS, the chosen beta and the swarm's spread are recorded for the diagnosis, every step in the
history and, averaged per epoch with the particles' losses and the kick, in its diagnostics.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
import torch

from rlstudy.core.diagnostics import DiagnosticsLog
from rlstudy.core.errors import DivergenceError
from rlstudy.core.progress import progress

from .batching import epoch_batches, start_lookup
from ..estimators import Estimator, get_estimator
from .metrics import ErrorMeter
from .optimizer import Fit, Run
from ..numerics import DEFAULT, get_numerics
from ..numerics.reference import cbo_update, consensus_weights
from ..numerics.compiled.qnet import SHAPE, init_params
from ..numerics.compiled.residuals import TrajectoryTensors, rows_per_sample, start_pool
from ..problem.sde import Problem


@dataclass(frozen=True)
class CBOParams:
    SCHEMA: ClassVar[str] = "cbo_params"  # its definition in workflow/schemas/config.schema.yaml
    particles: int  # N
    particle_batch: int  # M, particles per step (M = N: every particle every step)
    samples: int  # m, transitions per step
    epochs: int
    lam: float  # lambda, drift towards the consensus
    eta: float  # step size
    noise: float  # scale of the multiplicative noise (the notebook's tau)
    beta: float  # inverse temperature of the weights
    ur_action: str  # UR's fresh next state: the recorded action, or "policy" (the notebook's)
    output_bias_init: str  # "default" (torch's init) or "reward_level": mean(r)/(1-gamma)
    kick: float  # standard deviation of the additive kick at step 0 (times sqrt(eta)); 0: none
    kick_decay: float  # the kick at step k is kick * kick_decay**k
    ess_target: float  # > 0: beta is re-chosen each step so that ESS = ess_target * M; beta is ignored


@dataclass
class CBOHistory:
    loss: list[float]  # the weighted mean of the particles' losses on the step's samples
    error: list[dict[str, float]]  # the meter's errors of the consensus ({name: e}; empty without a meter)
    ess: list[float]
    beta: list[float]
    spread: list[float]  # root mean squared distance of the particles to the consensus
    evaluations: list[int]  # cumulative network evaluations (one state each), over all particles
    seconds: list[float]  # wall time since the start (the only record that differs between reruns)
    diverged_at: int | None = None  # the step whose losses or particles were not finite (stop_on_divergence)
    diagnostics: pd.DataFrame = field(default_factory=pd.DataFrame)  # per epoch: the steps' statistics


def reward_level(mean_reward: float, gamma: float) -> float:
    """The level of Q, mean(r)/(1 - gamma): where output_bias_init="reward_level" starts the output biases."""
    return mean_reward / (1.0 - gamma)


def initial_swarm(params: CBOParams, generator: torch.Generator, q_level: float) -> torch.Tensor:
    """N particles drawn as torch initialises a network; with output_bias_init="reward_level" every
    output bias is moved by q_level (reward_level above)."""
    particles = init_params(params.particles, generator)
    if params.output_bias_init == "reward_level":
        particles[:, -SHAPE.actions:] += q_level
    elif params.output_bias_init != "default":
        raise ValueError(f"output_bias_init must be 'default' or 'reward_level', got {params.output_bias_init!r}")
    return particles


def beta_for_ess(losses: torch.Tensor, target: float, low: float = 1e-3, high: float = 1e9) -> float:
    """The beta whose weights have effective sample size 1/sum(w^2) = target (bisection in log beta;
    the ESS falls monotonically from M at beta=0 to the number of minimisers as beta grows). The
    weights of consensus_weights, in NumPy: its forty evaluations a step were a tenth of a
    cbo-adaptive step in PyTorch's per-call costs. exp(-beta (L - min L)) is 1 at the minimum, so
    sum(w)^2 / sum(w^2) is the normalised weights' ESS without an overflow."""
    gaps = (losses - losses.min()).to(torch.float64).cpu().numpy()  # a GPU run's losses too
    for _ in range(40):
        mid = math.sqrt(low * high)
        weights = np.exp(-mid * gaps)
        if weights.sum() ** 2 / (weights @ weights) > target:
            low = mid
        else:
            high = mid
    return math.sqrt(low * high)


def all_finite(values: torch.Tensor) -> bool:
    """Whether every value is finite: NumPy's test on the CPU (a tenth of PyTorch's time for a swarm)."""
    if values.device.type == "cpu":
        return bool(np.isfinite(values.numpy()).all())
    return bool(torch.isfinite(values).all())


def effective_sample_size(weights: torch.Tensor) -> float:
    return float(1.0 / (weights ** 2).sum())


def particle_batch_schedule(params: CBOParams, generator: torch.Generator):
    """The particle batches of every epoch in turn (each epoch a shuffle of all particles)."""
    remainder = torch.empty(0, dtype=torch.long)
    for _ in range(params.epochs):
        batches, remainder = epoch_batches(params.particles, params.particle_batch, remainder, generator)
        yield from batches


def train_cbo(particles: torch.Tensor, traj: TrajectoryTensors, estimator: str | Estimator, task: str,
              params: CBOParams, problem: Problem, generator: torch.Generator, meter: ErrorMeter | None = None,
              label: str = "CBO", stop_on_divergence: bool = False,
              numerics: str = DEFAULT) -> tuple[torch.Tensor, CBOHistory]:
    """Run CBO from the initial swarm (N, d); returns the final consensus and the history.
    numerics: the backend of the batches and the particles' losses (numerics/: compiled, reference).

    Non-finite losses or particles raise DivergenceError, or with stop_on_divergence (parameter
    sweeps, where divergence is a result) end the run at the last finite consensus."""
    if particles.shape != (params.particles, SHAPE.size):
        raise ValueError(f"{label}: expected {params.particles} particles of size {SHAPE.size}, "
                         f"got {tuple(particles.shape)}")
    # Indices and random draws live on the CPU (the generator's device); make_batch and the lines
    # below move what they draw to the particles' device, a no-op on the CPU.
    device = particles.device
    backend = get_numerics(numerics)
    estimator = get_estimator(estimator)
    starts_pool = start_pool(estimator, traj.action_indices)
    starts_at = start_lookup(starts_pool)
    if len(starts_pool) == 0:
        raise ValueError(f"{label}: the trajectory has no usable transitions")
    particles = particles.clone()
    consensus = particles.mean(dim=0)
    history = CBOHistory([math.nan], [meter(consensus) if meter else {}], [math.nan], [math.nan], [math.nan],
                         [0], [0.0])
    start = time.perf_counter()
    steps = (params.epochs * params.particles) // params.particle_batch
    steps_per_epoch = max(1, params.particles // params.particle_batch)
    log = DiagnosticsLog()
    bar = progress(desc=label, total=steps, unit="step")
    with torch.no_grad():
        for chosen in particle_batch_schedule(params, generator):
            chosen = chosen.to(device)
            step = len(history.loss)
            starts = starts_at(torch.randint(len(starts_pool), (params.samples,), generator=generator))
            batch = backend.batch(traj, starts, estimator, task, problem.dynamics, generator, params.ur_action)
            current = particles.index_select(0, chosen)  # a copy, as particles[chosen], at a tenth of its cost
            losses = backend.particle_losses(current, batch, problem.gamma)
            beta = beta_for_ess(losses, params.ess_target * len(chosen)) if params.ess_target else params.beta
            weights = consensus_weights(losses, beta)
            normals = None  # noise 0 draws none: they would be multiplied by zero
            if params.noise:
                normals = torch.randn(len(chosen), particles.shape[1], generator=generator).to(device)
            moved, new_consensus = cbo_update(current, weights, params.lam, params.eta, params.noise, normals)
            scale = 0.0
            if params.kick:
                scale = params.kick * params.kick_decay ** (step - 1) * math.sqrt(params.eta)
                moved += scale * torch.randn(moved.shape, generator=generator).to(device)
            if not (all_finite(losses) and all_finite(moved)):
                message = (f"{label} diverged at step {step}: non-finite particle losses or "
                           f"parameters (beta={params.beta}, noise={params.noise}, eta={params.eta})")
                if not stop_on_divergence:
                    raise DivergenceError(message)
                print(message + "; stopped, keeping the last finite consensus")
                history.diverged_at = step
                break
            particles.index_copy_(0, chosen, moved)  # chosen holds no particle twice (epoch_batches)
            consensus = new_consensus
            history.loss.append(float(weights.to(losses.dtype) @ losses))
            history.error.append(meter(consensus) if meter else {})
            history.ess.append(effective_sample_size(weights))
            history.beta.append(beta)
            history.spread.append(float((moved - consensus).pow(2).sum(dim=1).mean().sqrt()))
            history.evaluations.append(history.evaluations[-1] + len(chosen) * params.samples * rows_per_sample(estimator))
            history.seconds.append(time.perf_counter() - start)
            log.add({"loss_consensus": history.loss[-1], "loss_min": float(losses.min()),
                     "loss_mean": float(losses.mean()), "ess": history.ess[-1], "beta": beta,
                     "spread": history.spread[-1], "exploration_noise": scale})
            log.write_at("iteration", step, steps_per_epoch, steps)
            bar.update()
            bar.set_postfix(loss=f"{history.loss[-1]:.4g}", ess=f"{history.ess[-1]:.2f}", refresh=False)
    bar.close()
    log.write("iteration", len(history.loss) - 1)  # the window a divergence cut short
    history.diagnostics = log.frame()
    return consensus, history


def fit_cbo(params: CBOParams, run: Run) -> Fit:
    """One run of run_method: CBO from a swarm drawn by run.init."""
    swarm = initial_swarm(params, run.init, reward_level(run.mean_reward, run.problem.gamma)).to(run.device)
    consensus, history = train_cbo(swarm, run.traj, run.estimator, run.task, params, run.problem, run.sampling,
                                   run.meter, run.label, stop_on_divergence=run.stop_on_divergence,
                                   numerics=run.numerics)
    return Fit(consensus, history, {"loss": history.loss, "ess": history.ess, "beta": history.beta,
                                    "spread": history.spread, "diverged": history.diverged_at is not None})
