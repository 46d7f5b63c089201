"""The exact Q of the circle MDP: a closed form, a limit, and Monte Carlo rollouts written apart from the solver."""

import math

import numpy as np
import pytest

from rlstudy.bellman.problem.exact import EVALUATED_POLICY, solve, solve_on_grid
from bellman_fixtures import dynamics as shipped_dynamics

GAMMA = 0.9


def closed_form_uniform(s, a, gamma, dynamics):
    """Q of the uniform policy with current-state rewards, by hand.

    Under the uniform policy E[exp(i s_t)] = exp(i s) phi^t with phi = cos(dt) exp(-c^2/2),
    c^2 = sigma^2 dt, so V(s) = 1/(1-gamma) + Im(exp(i s) / (1 - gamma phi)) and
    Q(s, a) = sin(s) + 1 + gamma (1/(1-gamma) + Im(exp(i(s + a dt)) exp(-c^2/2) / (1 - gamma phi)))."""
    damping = math.exp(-0.5 * dynamics.sigma ** 2 * dynamics.dt)
    phi = math.cos(dynamics.dt) * damping
    wave = np.exp(1j * (s + a * dynamics.dt)) * damping / (1 - gamma * phi)
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
    damping = math.exp(-0.5 * dynamics.sigma ** 2 * dynamics.dt)  # E[sin(s + a dt + c Z)] by hand
    expected = np.stack([np.sin(s + a * dynamics.dt) * damping + 1 for a in (-1, 1)], axis=1)
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
        s_next = s + a * dynamics.dt + dynamics.sigma * math.sqrt(dynamics.dt) * rng.standard_normal(episodes)
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


def transition_matrices(n, dynamics):
    """P_a[i, j]: the wrapped Gaussian step from s_i to s_j, sampled on the grid and normalised per row
    (a dense kernel, written apart from the solver's Fourier multipliers). With n a multiple of 32 the
    drift a*dt is a whole number of grid steps, and for n >= 256 the sampled Gaussian's aliasing (and
    the Nyquist mode the solver keeps real) is below 1e-27, so it is the solver's discrete problem,
    solved another way."""
    s = 2 * math.pi * np.arange(n) / n
    spread = dynamics.sigma * math.sqrt(dynamics.dt)
    matrices = []
    for a in (-1.0, 1.0):
        offset = s[None, :] - s[:, None] - a * dynamics.dt
        density = sum(np.exp(-0.5 * ((offset + 2 * math.pi * w) / spread) ** 2) for w in range(-3, 4))
        matrices.append(density / density.sum(axis=1, keepdims=True))
    return s, matrices


def linear_solve(plus, gamma, dynamics, n=256):
    """Q of the policy with P(+1) = plus (per grid point): one linear solve, V = (I - gamma P_pi)^-1 r."""
    s, (minus_step, plus_step) = transition_matrices(n, dynamics)
    r = np.sin(s) + 1
    step = (1 - plus)[:, None] * minus_step + plus[:, None] * plus_step
    v = np.linalg.solve(np.eye(n) - gamma * step, r)
    return np.stack([r + gamma * minus_step @ v, r + gamma * plus_step @ v], axis=1)


def policy_iteration(gamma, dynamics, n=256):
    """The optimal Q by policy iteration: exact after finitely many linear solves."""
    plus = np.zeros(n)
    while True:
        q = linear_solve(plus, gamma, dynamics, n)
        gap = q[:, 1] - q[:, 0]  # switch only where the other action is better beyond rounding (no cycling)
        better = np.where(np.abs(gap) > 1e-12 * np.abs(q).max(), (gap > 0).astype(float), plus)
        if np.array_equal(better, plus):
            return q
        plus = better


@pytest.mark.parametrize("gamma", [0.95, 0.99])
def test_the_iteration_converges_at_high_discounts_to_the_closed_form(gamma):
    """It used to stop at an absolute 1e-13 (1 - gamma), below the iteration's rounding floor above
    gamma 0.9, and raise; the tolerance is now relative to max|Q|."""
    dynamics = shipped_dynamics()
    solution = solve_on_grid(64, "uniform", gamma, dynamics)
    s = np.array([0.0, 0.7, 2.0, 4.5])
    for index, a in enumerate((-1.0, 1.0)):
        np.testing.assert_allclose(solution.at(s)[:, index], closed_form_uniform(s, a, gamma, dynamics), rtol=1e-12)


@pytest.mark.parametrize("gamma", [0.95, 0.99])
def test_the_iteration_agrees_with_linear_solves_at_high_discounts(gamma):
    dynamics = shipped_dynamics()
    s = 2 * math.pi * np.arange(256) / 256
    evaluation = solve_on_grid(256, "evaluation", gamma, dynamics).values
    np.testing.assert_allclose(evaluation, linear_solve(0.5 + np.sin(s) / 5, gamma, dynamics), rtol=1e-11)
    optimal = solve_on_grid(256, None, gamma, dynamics).values
    np.testing.assert_allclose(optimal, policy_iteration(gamma, dynamics), rtol=1e-11)


def test_the_grid_refinement_converges_at_gamma_099():
    solution, history = solve(None, 0.99, shipped_dynamics(), rtol=1e-4)
    assert history[-1].relative_change < 1e-4
    assert np.abs(solution.values).max() > 150  # about max r / (1 - gamma) = 200
