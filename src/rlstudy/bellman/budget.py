"""The error budget of a task: how far the study's network can get from the exact Q, part by part.

Each part is measured by an experiment of its own, never obtained by subtracting two others:

    reach        the network fitted to the exact Q by regression on a grid (full batch, L-BFGS): how close
                 the architecture gets to the truth at all, the grid's points weighted alike
    reach_weighted  the same regression with the points weighted as the residual fits weigh them (where
                 the data are): the reach in the metric those fits and the weighted error aim at
    population   the network minimising the Bellman residual *in expectation*: on a grid of states weighted
                 by the data's distribution, each action by the behaviour policy, with the exact transition
                 kernel (exact.StepOperator's Fourier multipliers); no sampling noise
    finite_data  the network minimising the sampled residual of the study's own trajectory to convergence
                 (full batch, L-BFGS): what the finite data add to the population minimiser
    optimiser    the study's final runs (results/summary.csv): what each optimiser leaves on top

What each estimator's population objective is (written out in its own module, Estimator.population_terms),
per state s and action a, with
target(s') = r(s) + gamma V(s') (reward_of current; r(s') + gamma V(s') for next),
TQ(s, a) = E[target(s') | s, a] and the kernel of (s, a) written E_a:

    UR (recorded action)   (TQ(s,a) - Q(s,a))^2                          unbiased
    UR (ur_action policy)  (TQ(s,a) - Q(s,a)) (sum_b pi(b|s) TQ(s,b) - Q(s,a))
    DS                     E_a[(target(s') - Q(s,a))^2] = (TQ - Q)^2 + Var_a(target(s'))   biased by the variance
    BFF                    sum_b E_a[(target(s1) - Q) mu(b|s1)] (E_b[target] - Q(s,a))
    BFF-matched            the b = a term alone, over the match probability

where mu is the behaviour policy (the action a_{m+1} drawn at s_{m+1} sets the borrowed increment's
drift: residuals.py). So BFF is unbiased only where mu(b|s1) does not depend on s1 and the actions
agree; on control (uniform behaviour) BFF-matched equals UR, BFF mixes the two actions' kernels.
Every expectation is exact for the trigonometric interpolant of its integrand on the grid (the
network's V is evaluated at the grid's points; the FFT carries it to every next state).

The loss of an objective is half its weighted mean, as CBO's (residuals.cbo_loss). The fits run in
float64 (the network's forward pass with float64 features and parameters) and save float32
networks, as every run's q.pt; the errors are measured on the saved float32 network, as summarise does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from rlstudy.core.errors import InputError

from . import budget_kernel, exact
from .estimators import ESTIMATORS, ArrayDraw, GridResidual
from .metrics import GRID_POINTS, exact_scores
from .qnet import forward
from .numerics import DEFAULT as DEFAULT_NUMERICS
from .numerics import get_numerics, reference
from .numerics.laws import prob_plus, reward
from .sde import POLICY_OF_TASK, TASKS, Problem
from .stationary import load_density

UR_ACTIONS = ("recorded", "policy")


def population_estimators() -> tuple[str, ...]:
    """The registered estimators whose residual in expectation is written out (Estimator.population_terms)."""
    return tuple(name for name, estimator in ESTIMATORS.items() if estimator.population_terms is not None)


# -- the grid and its network ------------------------------------------------------------------------


def features64(s: np.ndarray) -> torch.Tensor:
    """(sin s, cos s) in float64, the network's inputs for the float64 fits."""
    s = torch.as_tensor(np.asarray(s, dtype=np.float64))
    return torch.stack([torch.sin(s), torch.cos(s)], dim=-1)


def policy_probs(policy: str, s: np.ndarray) -> np.ndarray:
    """(pi(-1|s), pi(+1|s)) of a named policy (sde.prob_plus), shape (n, 2)."""
    plus = np.asarray(prob_plus(policy, np.asarray(s, dtype=np.float64)), dtype=np.float64)
    return np.stack([1.0 - plus, plus], axis=1)


def state_values(q: torch.Tensor, target_probs: torch.Tensor | None) -> torch.Tensor:
    """V from Q (n, 2): the evaluated policy's expectation, or the max for control (target_probs None)."""
    if q.shape[1] != 2:
        raise ValueError(f"Q of the circle MDP has 2 actions, got shape {tuple(q.shape)}")
    return reference.state_values(q, target_probs)


def target_probs_of(task: str, s: np.ndarray) -> torch.Tensor | None:
    policy = exact.EVALUATED_POLICY[task]
    return None if policy is None else torch.from_numpy(policy_probs(policy, s))


# -- weights over the circle -------------------------------------------------------------------------


def weights_on(weights: np.ndarray | None, n: int) -> np.ndarray:
    """Weights summing to 1 on grid(n): uniform when None; a density on grid(m) is read at the
    points of grid(n) (every (m/n)-th value when n divides m, else periodic linear interpolation)."""
    if weights is None:
        return np.full(n, 1.0 / n)
    m = len(weights)
    if m % n == 0:
        values = weights[:: m // n]
    else:
        values = exact.interpolate(weights[:, None], exact.grid(n))[:, 0]
    if not values.sum() > 0:
        raise InputError(f"the weights vanish at every point of the {n}-point grid")
    return values / values.sum()


# -- the study's metric, uniform and weighted ---------------------------------------------------------


def scores(theta: torch.Tensor, exact_q: np.ndarray, weights: np.ndarray | None) -> dict[str, float]:
    """A network measured against the exact Q as summarise measures a run (metrics.exact_scores, on the
    saved float32 network): error_exact_normalised, and with weights error_exact_weighted_normalised."""
    density = None if weights is None else weights_on(weights, GRID_POINTS)  # its scale cancels in the ratio
    measured = exact_scores(theta.detach().to(torch.float32).cpu(), exact_q, None, density)
    names = ["error_exact_normalised", *(["error_exact_weighted_normalised"] if weights is not None else [])]
    for name in names:
        if not math.isfinite(measured[name]):
            raise FloatingPointError(f"{name} is {measured[name]}: the network's Q is not finite")
    return {name: measured[name] for name in names}


# -- deterministic full-batch minimisation -----------------------------------------------------------


@dataclass(frozen=True)
class FitSettings:
    SCHEMA: ClassVar[str] = "budget_fit"  # its definition in workflow/schemas/config.schema.yaml

    """config `budget`'s optimiser: L-BFGS in chunks of `chunk` iterations until a chunk moves the loss
    by at most rtol times the initial loss (the loss has stopped moving on its own scale; a relative
    change of the current loss would never settle for a loss that tends to 0, nor for one that
    crosses it), or max_iterations are spent."""

    max_iterations: int
    chunk: int
    rtol: float
    history: int = 50


@dataclass(frozen=True)
class Fit:
    theta: torch.Tensor  # float64
    history: list[dict]  # per chunk: iterations, loss, grad_norm
    converged: bool


def minimise(loss_fn, theta0: torch.Tensor, settings: FitSettings, label: str) -> Fit:
    """L-BFGS (strong Wolfe line search) on a deterministic loss of the flat parameter vector; fails
    loudly on a NaN or inf loss."""
    theta = theta0.detach().clone().to(torch.float64).requires_grad_(True)
    optimiser = torch.optim.LBFGS([theta], lr=1.0, max_iter=settings.chunk, history_size=settings.history,
                                  tolerance_grad=0.0, tolerance_change=0.0, line_search_fn="strong_wolfe")

    def closure():
        optimiser.zero_grad()
        loss = loss_fn(theta)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{label}: the loss is {float(loss)}")
        loss.backward()
        return loss

    def measure(iterations: int) -> dict:
        optimiser.zero_grad()
        loss = loss_fn(theta)
        loss.backward()
        grad_norm = float(theta.grad.norm())
        if not (math.isfinite(loss.item()) and math.isfinite(grad_norm)):
            raise FloatingPointError(f"{label}: loss {float(loss)}, gradient norm {grad_norm}")
        return {"iterations": iterations, "loss": loss.item(), "grad_norm": grad_norm}

    history = [measure(0)]
    converged = False
    while history[-1]["iterations"] < settings.max_iterations:
        optimiser.param_groups[0]["max_iter"] = min(settings.chunk, settings.max_iterations - history[-1]["iterations"])
        optimiser.step(closure)
        if not torch.isfinite(theta).all():
            raise FloatingPointError(f"{label}: the parameters are not finite")
        done = optimiser.state[optimiser._params[0]].get("n_iter", 0)
        history.append(measure(done))
        if abs(history[-2]["loss"] - history[-1]["loss"]) <= settings.rtol * abs(history[0]["loss"]):
            converged = True
            break
        if done == history[-2]["iterations"]:  # the line search found no decrease: a minimum
            converged = True
            break
    return Fit(theta.detach(), history, converged)


# -- (a) the network's reach ---------------------------------------------------------------------------


def resample(values: np.ndarray, points: int) -> np.ndarray:
    """Q (n, actions) on grid(n) at the points of grid(points): every (n/points)-th row when points
    divides n, else the trigonometric interpolant (the exact Q is smooth: the kernel's Gaussian damps
    its high modes, exact.py)."""
    n = len(values)
    if n % points == 0:
        return np.ascontiguousarray(values[:: n // points], dtype=np.float64)
    spectrum = np.fft.rfft(values, axis=0)
    keep = min(n, points) // 2 + 1
    resized = np.zeros((points // 2 + 1, values.shape[1]), dtype=complex)
    resized[:keep] = spectrum[:keep]
    for size, last in ((n, keep - 1), (points, keep - 1)):
        if size % 2 == 0 and last == size // 2:  # a Nyquist mode is a cosine of half the weight
            resized[last] *= 0.5 if size == min(n, points) else 1.0
    return np.fft.irfft(resized, n=points, axis=0) * (points / n)


def regression_loss(target: np.ndarray, points: int, weights: np.ndarray | None = None):
    """Mean squared distance to a target Q (n, 2) on grid(n), at the points of grid(points) (resample);
    with weights (weights_on), the points' squares are weighted by them, each action alike."""
    values = torch.from_numpy(resample(target, points))
    feats = features64(exact.grid(points))
    if weights is None:
        def loss(theta):
            return ((forward(theta, feats) - values) ** 2).mean()
        return loss
    point_weights = torch.from_numpy(weights_on(weights, points))[:, None] / values.shape[1]

    def weighted_loss(theta):
        return (point_weights * (forward(theta, feats) - values) ** 2).sum()
    return weighted_loss


# -- (b) the population residual -------------------------------------------------------------------------


class PopulationResidual:
    """The Bellman residual of one estimator in expectation, on grid(points): states weighted by
    `weights` (summing to 1), actions by the behaviour policy of the task's data."""

    def __init__(self, task: str, estimator: str, problem: Problem, points: int, weights: np.ndarray | None = None,
                 ur_action: str = "recorded"):
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        if estimator not in population_estimators():
            raise ValueError(f"the population residual is written out for {population_estimators()} only, not "
                             f"{estimator!r} (config budget.estimators)")
        if ur_action not in UR_ACTIONS:
            raise ValueError(f"ur_action must be one of {UR_ACTIONS}, got {ur_action!r}")
        self.task, self.estimator, self.ur_action = task, estimator, ur_action
        self.spec = ESTIMATORS[estimator]
        self.gamma, self.reward_of = problem.gamma, problem.dynamics.reward_of
        s = exact.grid(points)
        self.points = points
        self.feats = features64(s)
        self.weights = torch.from_numpy(weights_on(weights, points))
        self.behaviour = torch.from_numpy(policy_probs(POLICY_OF_TASK[task], s))
        self.target_probs = target_probs_of(task, s)
        # UR with ur_action policy draws a fresh action from the task's policy (estimators/ur.py)
        self.fresh_probs = self.behaviour
        self.reward = torch.from_numpy(reward(s))
        self.multipliers = torch.from_numpy(exact.StepOperator.build(points, problem.dynamics).multipliers)

    def expect(self, f: torch.Tensor) -> torch.Tensor:
        """E[f(s') | s, a] at every grid point and action, (n, 2), from f on the grid (n,)."""
        spectrum = torch.fft.rfft(f)
        return torch.stack([torch.fft.irfft(spectrum * m, n=self.points) for m in self.multipliers], dim=1)

    def parts(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(c, g): target(s') = c(s) + g(s'), the reward of the current state in c, or of the next in g."""
        v = state_values(q, self.target_probs)
        if self.reward_of == "current":
            return self.reward[:, None], self.gamma * v
        return torch.zeros_like(self.reward)[:, None], self.reward + self.gamma * v

    def grid_residual(self, q: torch.Tensor) -> GridResidual:
        """What the estimator's terms are made of, for Q on the grid."""
        c, g = self.parts(q)
        return GridResidual(q, c, g, self.expect(g), self.expect, self.behaviour, self.fresh_probs, self.ur_action)

    def terms(self, q: torch.Tensor) -> torch.Tensor:
        """The estimator's E[j j^ | s, a] at every grid point and action, (n, 2), of Q on the grid."""
        return self.spec.population_terms(self.grid_residual(q))

    def kept_share(self, grid: GridResidual) -> float:
        """The share of the transitions the estimator's start filter keeps under the weights (BFF-matched:
        P(a_{m+1} = a_m)); 1 without a filter."""
        if self.spec.population_kept is None:
            return 1.0
        return float((self.weights[:, None] * self.behaviour * self.spec.population_kept(grid)).sum())

    def loss_of_q(self, q: torch.Tensor) -> torch.Tensor:
        """Half the weighted mean of the terms, over the share kept: the expectation of CBO's loss mean(j j^)/2."""
        grid = self.grid_residual(q)
        return 0.5 * (self.weights[:, None] * self.behaviour * self.spec.population_terms(grid)).sum() / self.kept_share(grid)

    def loss(self, theta: torch.Tensor) -> torch.Tensor:
        return self.loss_of_q(forward(theta, self.feats))


# -- (c) the sampled residual of the trajectory -------------------------------------------------------


def interpolation(s: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where angles fall on grid(points): the lower and upper neighbours, the fraction f of the way
    to the upper one, and 1 - f (the value at s is lower's (1 - f) + upper's f)."""
    position = np.mod(np.asarray(s, dtype=np.float64), 2 * math.pi) * (points / (2 * math.pi))
    lower = np.floor(position)
    fraction = position - lower
    lower = lower.astype(np.int64) % points
    return lower, (lower + 1) % points, fraction, 1.0 - fraction


class _InterpolatedLoss(torch.autograd.Function):
    """L(q_grid) of a SampledResidual, its gradient computed with it (budget_kernel.py)."""

    @staticmethod
    def forward(ctx, q_grid: torch.Tensor, residual: "SampledResidual") -> torch.Tensor:
        total, grad = residual.sums(q_grid.detach())
        ctx.save_for_backward(grad)
        return q_grid.new_tensor(0.5 * total / residual.transitions)

    @staticmethod
    def backward(ctx, upstream: torch.Tensor):
        (grad,) = ctx.saved_tensors
        return upstream * grad, None


class SampledResidual:
    """The estimator's sampled loss mean(j j^)/2 over every transition of a trajectory it may use, with
    its second next states drawn once (the estimator's own draw; UR's from `rng`), as one deterministic
    function of theta.

    Q at the transitions' states is the network on grid(points) interpolated linearly (the network is
    smooth: at 4096 points the interpolation error is O(h^2); `direct_loss` evaluates the
    network at every state itself, to check it). States s, s' and s^ of m transitions make ~3m
    evaluations per step otherwise. The residuals are the reference layer's (numerics/reference.py);
    with numerics "compiled" (the default) the loss and its gradient on the grid are one compiled pass
    over the transitions (budget_kernel.py), with "reference" autograd through the residuals; either
    way autograd carries the gradient through the network."""

    def __init__(self, states: np.ndarray, action_indices: np.ndarray, rewards: np.ndarray, task: str,
                 estimator: str, problem: Problem, rng: np.random.Generator, points: int,
                 ur_action: str = "recorded", max_transitions: int = 0, numerics: str = DEFAULT_NUMERICS):
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
        get_numerics(numerics)  # refuses an unknown name
        est = ESTIMATORS[estimator]
        dynamics = problem.dynamics
        self.gamma, self.task, self.points, self.numerics = problem.gamma, task, points, numerics
        starts = est.start_pool(torch.as_tensor(np.asarray(action_indices))).numpy()
        if max_transitions and len(starts) > max_transitions:  # evenly spaced, deterministic
            starts = starts[np.linspace(0, len(starts) - 1, max_transitions).round().astype(np.int64)]
        self.transitions = len(starts)
        s = states[starts]
        a_idx = np.asarray(action_indices[starts], dtype=np.int64)
        s_next = states[starts + 1]
        r = np.asarray(rewards[starts], dtype=np.float64)
        # the estimator's own draw (estimators/), on arrays: UR's fresh states from `rng`; None: s' (DS, j^ = j)
        s_alt = est.second_state(ArrayDraw(states, starts, s, a_idx, task, dynamics, ur_action, rng))
        if s_alt is None:
            s_alt, r_alt = s_next, r
        else:
            r_alt = r if dynamics.reward_of == "current" else reward(s_alt)
        self.sample = reference.Transitions(
            torch.from_numpy(s), torch.from_numpy(a_idx), torch.from_numpy(r), torch.from_numpy(s_next),
            torch.from_numpy(s_alt), torch.from_numpy(np.asarray(r_alt, dtype=np.float64)),
            target_probs_of(task, s_next), target_probs_of(task, s_alt))
        self.grid_feats = features64(exact.grid(points))
        # the kernel's layout: rows s, s', s^ (DS: s' again; its alt_rewards are the rewards, so j^ = j)
        rows = [interpolation(x, points) for x in (s, s_next, s_alt)]
        self.lower, self.upper, self.fraction, self.rest = (np.ascontiguousarray(np.stack(part)) for part in zip(*rows))
        next_probs, alt_probs = self.sample.next_probs, self.sample.alt_probs  # None for control: V is the max
        self.kernel_probs = (np.empty((2, 0, 2)) if next_probs is None else
                             np.ascontiguousarray(np.stack([next_probs.numpy(), alt_probs.numpy()])))

    def sums(self, q_grid: torch.Tensor) -> tuple[float, torch.Tensor]:
        """sum_m j_m j^_m and the gradient of the loss on the grid, for Q on the grid (points, 2)."""
        q = np.ascontiguousarray(q_grid.numpy(), dtype=np.float64)
        grad = np.zeros_like(q)
        sample = self.sample
        total = budget_kernel.kernel()(q, self.lower, self.upper, self.fraction, self.rest, sample.actions.numpy(),
                                       sample.rewards.numpy(), sample.alt_rewards.numpy(), self.kernel_probs,
                                       self.gamma, grad)
        return total, torch.from_numpy(grad)

    def residuals(self, q: reference.QFunction) -> tuple[torch.Tensor, torch.Tensor]:
        """(j, j^) of every transition, with q(states) Q at those states, (m, 2)."""
        return reference.residuals(q, self.sample, self.gamma)[:2]

    def interpolated(self, q_grid: torch.Tensor) -> reference.QFunction:
        """Q at any states, interpolated linearly from Q on the grid (points, 2)."""
        def q(states: torch.Tensor) -> torch.Tensor:
            lower, upper, fraction, rest = (torch.from_numpy(x) for x in interpolation(states.numpy(), self.points))
            return q_grid.index_select(0, lower) * rest[:, None] + q_grid.index_select(0, upper) * fraction[:, None]
        return q

    def loss(self, theta: torch.Tensor) -> torch.Tensor:
        q_grid = forward(theta, self.grid_feats)
        if self.numerics == "reference":
            return reference.cbo_loss(*self.residuals(self.interpolated(q_grid)))
        return _InterpolatedLoss.apply(q_grid, self)

    @torch.no_grad()
    def residual_scale(self, theta: torch.Tensor) -> float:
        """mean(j^2)/2: the size of the terms whose products the loss averages (UR's and BFF's loss can
        be near 0 or negative, so it is no scale for a tolerance)."""
        j, _ = self.residuals(self.interpolated(forward(theta, self.grid_feats)))
        return float(0.5 * (j * j).mean())

    @torch.no_grad()
    def direct_loss(self, theta: torch.Tensor, chunk: int = 100_000) -> float:
        """The same loss with the network evaluated at every state (float64, no interpolation)."""
        total = 0.0
        m = self.transitions

        def q(states: torch.Tensor) -> torch.Tensor:
            return forward(theta, features64(states.numpy()))
        for start in range(0, m, chunk):
            j, j_hat, _ = reference.residuals(q, self.sample.part(slice(start, min(start + chunk, m))), self.gamma)
            total += float((j * j_hat).sum())
        return 0.5 * total / m


# -- what each part's step writes ----------------------------------------------------------------------


def load_weights(path) -> np.ndarray | None:
    """The optional --weights density (None: uniform), checked as every stationary density is."""
    if path is None:
        return None
    try:
        weights = load_density(path, None)
    except InputError as err:
        raise InputError(f"--weights: {err}") from err
    if not weights.sum() > 0:
        raise InputError(f"--weights: {path}: the weights vanish everywhere")
    return weights.astype(np.float64)


def part_table(keys: dict, fit: Fit, exact_q: np.ndarray, weights: np.ndarray | None, extra: dict | None = None):
    """(error.csv's one row, fit.csv's history) of a fitted part: its keys, its errors (scores), the final
    loss, the iterations spent and whether the loss stopped moving."""
    import pandas as pd

    row = {**keys, **scores(fit.theta, exact_q, weights), "final_loss": fit.history[-1]["loss"],
           "iterations": fit.history[-1]["iterations"], "converged": fit.converged, **(extra or {})}
    history = pd.DataFrame([{**keys, **entry} for entry in fit.history])
    return pd.DataFrame([row]), history
