"""MPO's losses, as NumPy functions with their gradients written out: the KL terms, the E-step and
its temperature dual, the duals' values, and Retrace targets."""

from __future__ import annotations

import math

import numpy as np

DUAL_FLOOR = -18.0  # unconstrained duals are clamped from below, so softplus never underflows to 0
SOFTPLUS_EPS = 1e-8
SOFTPLUS_THRESHOLD = 20.0  # torch's softplus: the identity above it


def kl_diag_gaussian(mean_p, log_std_p, mean_q, log_std_q) -> np.ndarray:
    """KL(p || q) of diagonal Gaussians, per dimension:
    log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2."""
    var_ratio = np.exp(2.0 * (log_std_p - log_std_q))
    return 0.5 * (var_ratio + (mean_p - mean_q) ** 2 * np.exp(-2.0 * log_std_q) - 1.0) + log_std_q - log_std_p


def e_step(q_values: np.ndarray, temperature: np.float32, epsilon: float) -> tuple[np.ndarray, np.float32, np.float32]:
    """E-step weights q_bi = softmax_i(Q_bi / eta), the temperature's dual loss
    L_eta = eta * (epsilon + mean_b logsumexp_i(Q_bi / eta) - log N), and dL_eta / d eta =
    epsilon + mean_b logsumexp_i(Q_bi / eta) - log N - mean_b sum_i q_bi Q_bi / eta."""
    scaled = q_values / temperature
    top = scaled.max(axis=1, keepdims=True)
    weights = np.exp(scaled - top)
    total = weights.sum(axis=1, keepdims=True)
    weights /= total
    bound = epsilon + (top + np.log(total)).mean() - math.log(q_values.shape[1])
    gradient = bound - np.einsum("bi,bi->", weights, q_values) / (q_values.shape[0] * temperature)
    return weights, temperature * bound, gradient


def kl_to_uniform(weights: np.ndarray) -> np.ndarray:
    """KL(q_b || uniform over the N samples) per state: how far the E-step moved from pi_target."""
    return (weights * np.log(weights.shape[1] * weights + 1e-8)).sum(axis=1)


def kl_dual_loss(alpha: np.ndarray, kl: np.ndarray, epsilon: float) -> np.ndarray:
    """sum_j alpha_j (epsilon - KL_j); its gradient in alpha_j is epsilon - KL_j: descending it
    raises alpha_j while KL_j > epsilon."""
    return (alpha * (epsilon - kl)).sum()


def dual_value(unconstrained: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softplus(max(u, DUAL_FLOOR)) + SOFTPLUS_EPS and its derivative in u (0 below the floor),
    as torch's softplus computes them (the identity above SOFTPLUS_THRESHOLD)."""
    x = np.maximum(unconstrained, np.float32(DUAL_FLOOR))
    above = x > SOFTPLUS_THRESHOLD
    z = np.exp(np.minimum(x, np.float32(SOFTPLUS_THRESHOLD)))
    value = np.where(above, x, np.log1p(z)) + np.float32(SOFTPLUS_EPS)
    slope = np.where(above, np.float32(1.0), z / (z + np.float32(1.0))) * (unconstrained >= DUAL_FLOOR)
    return value.astype(np.float32), slope.astype(np.float32)


def retrace_targets(q: np.ndarray, v_next: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                    ends: np.ndarray, c: np.ndarray, gamma: float) -> np.ndarray:
    """Retrace target of (s_0, a_0) from sequences of shape (B, T):
    Q_ret = Q(s_0, a_0) + sum_t gamma^t (prod_{i=1..t} c_i) m_t delta_t,
    delta_t = r_t + gamma (1 - terminated_t) V(s_{t+1}) - Q(s_t, a_t),
    m_t = prod_{i<t} (1 - ends_i): the trace stops at the end of an episode (terminated or truncated)."""
    steps = q.shape[1]
    delta = rewards + gamma * (1.0 - terminated) * v_next - q
    traces = np.concatenate([np.ones_like(c[:, :1]), np.cumprod(c[:, 1:], axis=1)], axis=1)
    alive = np.concatenate([np.ones_like(ends[:, :1]), np.cumprod(1.0 - ends[:, :-1], axis=1)], axis=1)
    discounts = (gamma ** np.arange(steps)).astype(q.dtype)
    return q[:, 0] + (discounts * traces * alive * delta).sum(axis=1)


HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)


def gaussian_log_prob(action: np.ndarray, mean: np.ndarray, log_std: np.ndarray) -> np.ndarray:
    """log N(action; mean, diag(exp(log_std)^2)), summed over the last (action) dimension."""
    return (-0.5 * ((action - mean) * np.exp(-log_std)) ** 2 - log_std - HALF_LOG_TWO_PI).sum(axis=-1)
