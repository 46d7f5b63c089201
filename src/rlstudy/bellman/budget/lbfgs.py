"""The budget's deterministic full-batch minimiser: L-BFGS with a strong Wolfe line search, in chunks
of iterations until the loss stops moving on its own scale (FitSettings, config budget.fit and
budget.finite_fit), failing loudly on a loss or parameters that are not finite."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch


@dataclass(frozen=True)
class FitSettings:
    """config `budget`'s optimiser: L-BFGS in chunks of `chunk` iterations until a chunk moves the loss
    by at most rtol times the initial loss (the loss has stopped moving on its own scale; a relative
    change of the current loss would never settle for a loss that tends to 0, nor for one that
    crosses it), or max_iterations are spent."""

    SCHEMA: ClassVar[str] = "budget_fit"  # its definition in workflow/schemas/config.schema.yaml

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
