"""MPO's losses, as functions: the KL terms, the E-step and its temperature dual, the KL duals,
and Retrace targets."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

DUAL_FLOOR = -18.0  # unconstrained duals are clamped from below, so softplus never underflows to 0
SOFTPLUS_EPS = 1e-8


def kl_diag_gaussian(mean_p, log_std_p, mean_q, log_std_q) -> torch.Tensor:
    """KL(p || q) of diagonal Gaussians, per dimension:
    log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2."""
    var_ratio = torch.exp(2.0 * (log_std_p - log_std_q))
    return 0.5 * (var_ratio + (mean_p - mean_q) ** 2 * torch.exp(-2.0 * log_std_q) - 1.0) + log_std_q - log_std_p


def e_step(q_values: torch.Tensor, temperature: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """E-step weights q_bi = softmax_i(Q_bi / eta) (no gradient) and the temperature's dual loss
    L_eta = eta * (epsilon + mean_b logsumexp_i(Q_bi / eta) - log N) (gradient into eta only)."""
    scaled = q_values.detach() / temperature
    weights = torch.softmax(scaled, dim=1).detach()
    loss = temperature * (epsilon + torch.logsumexp(scaled, dim=1).mean() - math.log(q_values.shape[1]))
    return weights, loss


def kl_to_uniform(weights: torch.Tensor) -> torch.Tensor:
    """KL(q_b || uniform over the N samples) per state: how far the E-step moved from pi_target."""
    return (weights * torch.log(weights.shape[1] * weights + 1e-8)).sum(dim=1)


def kl_dual_loss(alpha: torch.Tensor, kl: torch.Tensor, epsilon: float) -> torch.Tensor:
    """sum_j alpha_j (epsilon - KL_j): descending it raises alpha_j while KL_j > epsilon."""
    return (alpha * (epsilon - kl.detach())).sum()


def retrace_targets(q: torch.Tensor, v_next: torch.Tensor, rewards: torch.Tensor, terminated: torch.Tensor,
                    ends: torch.Tensor, c: torch.Tensor, gamma: float) -> torch.Tensor:
    """Retrace target of (s_0, a_0) from sequences of shape (B, T):
    Q_ret = Q(s_0, a_0) + sum_t gamma^t (prod_{i=1..t} c_i) m_t delta_t,
    delta_t = r_t + gamma (1 - terminated_t) V(s_{t+1}) - Q(s_t, a_t),
    m_t = prod_{i<t} (1 - ends_i): the trace stops at the end of an episode (terminated or truncated)."""
    steps = q.shape[1]
    delta = rewards + gamma * (1.0 - terminated) * v_next - q
    traces = torch.cat([torch.ones_like(c[:, :1]), torch.cumprod(c[:, 1:], dim=1)], dim=1)
    alive = torch.cat([torch.ones_like(ends[:, :1]), torch.cumprod(1.0 - ends[:, :-1], dim=1)], dim=1)
    discounts = gamma ** torch.arange(steps, dtype=q.dtype, device=q.device)
    return q[:, 0] + (discounts * traces * alive * delta).sum(dim=1)


def dual_value(unconstrained: torch.Tensor) -> torch.Tensor:
    return F.softplus(torch.clamp(unconstrained, min=DUAL_FLOOR)) + SOFTPLUS_EPS
