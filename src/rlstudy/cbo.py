"""Consensus-based optimisation (CBO) of the Bellman residual over a swarm of Q networks.

Each particle X_i is a flat parameter vector. One step, on a fresh random subset of m transitions:

    L_i  = mean(j_i * j^_i) / 2                                   (residuals.cbo_loss)
    w_i  = exp(-beta * (L_i - min_k L_k))                         (shifted: no underflow, no 0/0)
    x^   = sum_i w_i X_i / sum_i w_i                               (the consensus)
    X_i <- X_i - lambda*eta*(X_i - x^) + tau*sqrt(eta)*(X_i - x^) * Z_i,   Z_i ~ N(0, I)

(the noise is component-wise, "anisotropic" CBO, as in the notebook). The consensus network is
the one whose error is reported. With particle_batch = particles, one epoch is one step over all
particles; a smaller particle_batch cycles through random particle batches as the notebook does.

Two options beyond the notebook, both off in its setting:
  * output_bias_init: start every particle's output bias at mean(reward) / (1 - gamma), the level
    of Q, instead of near 0. From near 0 the loss is dominated by that level, which the error
    metric ignores, so the weights pick particles for their offset, not their shape.
  * The loss of the consensus, the effective sample size of the weights (1 = one particle
    dominates, N = uniform) and the swarm's spread are recorded for the diagnosis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .errors import DivergenceError
from .metrics import ErrorMeter
from .progress import progress
from .qnet import SHAPE, forward_no_grad, init_params
from .residuals import ResidualBatch, TrajectoryTensors, cbo_loss, make_batch, residual_pair, usable_starts
from .sde import Dynamics
from .sgd import epoch_batches


@dataclass(frozen=True)
class CBOParams:
    particles: int  # N
    particle_batch: int  # M, particles per step (M = N: every particle every step)
    samples: int  # m, transitions per step
    epochs: int
    lam: float  # lambda, drift towards the consensus
    eta: float  # step size
    tau: float  # noise scale (the notebook's sigma of CBO)
    beta: float  # inverse temperature of the weights
    gamma: float = 0.9
    ur_action: str = "recorded"
    output_bias_init: str = "default"  # "default" (torch's init) or "reward_level": mean(r)/(1-gamma)


@dataclass
class CBOHistory:
    loss: list[float]  # the weighted mean of the particles' losses on the step's samples
    error: list[float]
    ess: list[float]
    spread: list[float]  # root mean squared distance of the particles to the consensus


def initial_swarm(params: CBOParams, generator: torch.Generator, mean_reward: float) -> torch.Tensor:
    """N particles drawn as torch initialises a network; see output_bias_init above."""
    particles = init_params(params.particles, generator)
    if params.output_bias_init == "reward_level":
        particles[:, -SHAPE.actions:] += mean_reward / (1.0 - params.gamma)
    elif params.output_bias_init != "default":
        raise ValueError(f"output_bias_init must be 'default' or 'reward_level', got {params.output_bias_init!r}")
    return particles


def consensus_weights(losses: torch.Tensor, beta: float) -> torch.Tensor:
    """exp(-beta * (L - min L)) normalised to sum to one; the shift makes it finite for any beta, L."""
    shifted = -beta * (losses - losses.min())
    return torch.softmax(shifted.to(torch.float64), dim=0)


def cbo_update(particles: torch.Tensor, weights: torch.Tensor, lam: float, eta: float, tau: float,
               noise: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One CBO move of particles (M, d) given normalised weights (M,) and standard normals (M, d).

    Returns (new particles, consensus). Particles at the consensus stay there: both the drift and
    the noise are proportional to X_i - x^.
    """
    consensus = (weights.to(particles.dtype) @ particles)
    offset = particles - consensus
    return particles - lam * eta * offset + tau * math.sqrt(eta) * offset * noise, consensus


def particle_losses(particles: torch.Tensor, batch: ResidualBatch, gamma: float) -> torch.Tensor:
    """L_i for each particle: a loop of ordinary matmuls, measured faster here than one batched
    matmul over all particles (whose large intermediates make it memory-bound)."""
    def loss(theta):
        q_next = None if batch.next_feats is None else forward_no_grad(theta, batch.next_feats)
        return cbo_loss(*residual_pair(forward_no_grad(theta, batch.feats), q_next, batch, gamma))

    return torch.stack([loss(theta) for theta in particles])


def train_cbo(particles: torch.Tensor, traj: TrajectoryTensors, method: str, task: str, params: CBOParams,
              dynamics: Dynamics, generator: torch.Generator, meter: ErrorMeter | None = None,
              label: str = "CBO") -> tuple[torch.Tensor, CBOHistory]:
    """Run CBO from the initial swarm (N, d); returns the final consensus and the history."""
    if particles.shape != (params.particles, SHAPE.size):
        raise ValueError(f"{label}: expected {params.particles} particles of size {SHAPE.size}, "
                         f"got {tuple(particles.shape)}")
    n_starts = usable_starts(method, len(traj.states))
    if n_starts < params.samples:
        raise ValueError(f"{label}: the trajectory has {n_starts} usable transitions, fewer than "
                         f"samples={params.samples}")
    particles = particles.clone()
    consensus = particles.mean(dim=0)
    history = CBOHistory([math.nan], [meter(consensus) if meter else math.nan], [math.nan], [math.nan])
    remainder = torch.empty(0, dtype=torch.long)
    steps = (params.epochs * params.particles) // params.particle_batch
    bar = progress(desc=label, total=steps, unit="step")
    with torch.no_grad():
        for _ in range(params.epochs):
            particle_batches, remainder = epoch_batches(params.particles, params.particle_batch, remainder, generator)
            for chosen in particle_batches:
                starts = torch.randperm(n_starts, generator=generator)[:params.samples]
                batch = make_batch(traj, starts, method, task, dynamics, generator, params.ur_action)
                losses = particle_losses(particles[chosen], batch, params.gamma)
                weights = consensus_weights(losses, params.beta)
                noise = torch.randn(len(chosen), particles.shape[1], generator=generator)
                moved, consensus = cbo_update(particles[chosen], weights, params.lam, params.eta, params.tau, noise)
                particles[chosen] = moved
                step = len(history.loss)
                if not (torch.isfinite(losses).all() and torch.isfinite(moved).all()):
                    raise DivergenceError(f"{label} diverged at step {step}: non-finite particle losses or "
                                          f"parameters (beta={params.beta}, tau={params.tau}, eta={params.eta})")
                history.loss.append(float(weights.to(losses.dtype) @ losses))
                history.error.append(meter(consensus) if meter else math.nan)
                history.ess.append(float(1.0 / (weights ** 2).sum()))
                history.spread.append(float((moved - consensus).pow(2).sum(dim=1).mean().sqrt()))
                bar.update()
                bar.set_postfix(loss=f"{history.loss[-1]:.4g}", ess=f"{history.ess[-1]:.2f}", refresh=False)
    bar.close()
    return consensus, history
