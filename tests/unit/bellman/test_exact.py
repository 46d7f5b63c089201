"""The exact Q of the circle MDP: a closed form, a limit, and Monte Carlo rollouts written apart from the solver."""

import math

import numpy as np
import pytest

from rlstudy.bellman.exact import EVALUATED_POLICY, solve, solve_on_grid
from bellman_fixtures import dynamics as shipped_dynamics

GAMMA = 0.9


def closed_form_uniform(s, a, gamma, dynamics):
    """Q of the uniform policy with current-state rewards, by hand.

    Under the uniform policy E[exp(i s_t)] = exp(i s) phi^t with phi = cos(eps) exp(-c^2/2),
    c^2 = sigma^2 eps, so V(s) = 1/(1-gamma) + Im(exp(i s) / (1 - gamma phi)) and
    Q(s, a) = sin(s) + 1 + gamma (1/(1-gamma) + Im(exp(i(s + a eps)) exp(-c^2/2) / (1 - gamma phi)))."""
    damping = math.exp(-0.5 * dynamics.sigma ** 2 * dynamics.eps)
    phi = math.cos(dynamics.eps) * damping
    wave = np.exp(1j * (s + a * dynamics.eps)) * damping / (1 - gamma * phi)
    return np.sin(s) + 1 + gamma * (1 / (1 - gamma) + wave.imag)


def test_uniform_policy_matches_its_closed_form():
    dynamics = shipped_dynamics()
    solution = solve_on_grid(64, "uniform", GAMMA, dynamics)
    s = np.array([0.0, 0.7, 2.0, 4.5])
    for index, a in enumerate((-1.0, 1.0)):
        np.testing.assert_allclose(solution.at(s)[:, index], closed_form_uniform(s, a, GAMMA, dynamics), atol=1e-10)


def test_gamma_zero_is_the_one_step_reward():
    s = np.linspace(0, 6, 7)
    current = solve_on_grid(64, "evaluation", 0.0, shipped_dynamics(reward_of="current"))
    np.testing.assert_allclose(current.at(s), np.stack([np.sin(s) + 1] * 2, axis=1), atol=1e-12)
    dynamics = shipped_dynamics(reward_of="next")
    nxt = solve_on_grid(64, None, 0.0, dynamics)
    damping = math.exp(-0.5 * dynamics.sigma ** 2 * dynamics.eps)  # E[sin(s + a eps + c Z)] by hand
    expected = np.stack([np.sin(s + a * dynamics.eps) * damping + 1 for a in (-1, 1)], axis=1)
    np.testing.assert_allclose(nxt.at(s), expected, atol=1e-12)


def test_refinement_stops_once_doubling_changes_less_than_rtol():
    solution, history = solve(None, GAMMA, shipped_dynamics(), rtol=1e-5)
    assert math.isnan(history[0].relative_change)
    assert history[-1].relative_change < 1e-5 <= history[-2].relative_change
    assert solution.n == history[-1].points == 100 * 2 ** (len(history) - 1)
    np.testing.assert_array_equal(solution.on_grid(100), solution.values[:: solution.n // 100])


def test_the_optimal_q_dominates_the_evaluation_policys():
    dynamics = shipped_dynamics()
    optimal, _ = solve(None, GAMMA, dynamics, rtol=1e-5)
    evaluation, _ = solve("evaluation", GAMMA, dynamics)
    assert (optimal.on_grid(100) >= evaluation.on_grid(100) - 1e-9).all()


def monte_carlo_q(s0, a0, policy_plus, dynamics, gamma, episodes, rng, horizon=220):
    """Discounted returns of `episodes` rollouts from (s0, a0), then actions a_t = +1 with
    probability policy_plus(s_t) (a function returning probabilities or 0/1 choices)."""
    s = np.full(episodes, float(s0))
    a = np.full(episodes, float(a0))
    returns = np.zeros(episodes)
    for t in range(horizon):
        s_next = s + a * dynamics.eps + dynamics.sigma * math.sqrt(dynamics.eps) * rng.standard_normal(episodes)
        r = np.sin(s if dynamics.reward_of == "current" else s_next) + 1
        returns += gamma ** t * r
        s = s_next
        a = np.where(rng.random(episodes) < policy_plus(s), 1.0, -1.0)
    return returns.mean(), returns.std(ddof=1) / math.sqrt(episodes)


@pytest.mark.parametrize("reward_of", ["current", "next"])
@pytest.mark.parametrize("task", ["evaluation", "control"])
def test_rollouts_agree_with_the_solution(task, reward_of):
    dynamics = shipped_dynamics(reward_of=reward_of)
    solution, _ = solve(EVALUATED_POLICY[task], GAMMA, dynamics, rtol=1e-5)
    if task == "evaluation":
        def policy_plus(s):
            return 0.5 + np.sin(s) / 5
    else:  # greedy in the solution's Q, looked up on its fine grid
        fine = np.append(solution.values, solution.values[:1], axis=0)
        angles = np.linspace(0, 2 * math.pi, solution.n + 1)

        def policy_plus(s):
            wrapped = np.mod(s, 2 * math.pi)
            gap = np.interp(wrapped, angles, fine[:, 1] - fine[:, 0])
            return (gap > 0).astype(float)
    rng = np.random.default_rng(7)
    for s0, a0 in [(0.0, -1.0), (0.0, 1.0), (2.5, 1.0), (4.0, -1.0)]:
        mean, standard_error = monte_carlo_q(s0, a0, policy_plus, dynamics, GAMMA, 20_000, rng)
        exact = solution.at(np.array([s0]))[0, int(a0 > 0)]
        assert abs(mean - exact) < 4 * standard_error + 1e-3, (s0, a0, mean, exact, standard_error)
