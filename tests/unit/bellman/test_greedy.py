"""A learned Q's greedy policy, evaluated exactly: hand-solved cases, the optimal and the uniform
policy's ends of the scale, and the offset that the per-action-centred metric cannot see."""

import math

import numpy as np
import pytest
import torch

from rlstudy.bellman.problem.exact import grid, solve_on_grid
from rlstudy.bellman.problem.greedy import GreedyJudge, greedy_plus
from rlstudy.bellman.learners.metrics import centred_error, common_centred_error, common_centred_norm
from bellman_fixtures import dynamics as shipped_dynamics

GAMMA = 0.9
N = 256


@pytest.fixture(scope="module")
def judge():
    dynamics = shipped_dynamics()
    return GreedyJudge.build(solve_on_grid(N, None, GAMMA, dynamics).values, GAMMA, dynamics)


def test_greedy_plus_breaks_exact_ties_evenly():
    q = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    np.testing.assert_array_equal(greedy_plus(q), [1.0, 0.0, 0.5])


def test_the_optimal_q_scores_zero(judge):
    score = judge.score(judge.optimal)
    assert abs(score.shortfall) < 1e-9 and score.wrong_share == 0.0
    shifted = judge.score(judge.optimal * 3 + 7)  # the greedy policy ignores a positive scale and a common offset
    assert abs(shifted.shortfall) < 1e-9 and shifted.wrong_share == 0.0


def test_a_flat_q_is_the_uniform_policy(judge):
    score = judge.score(np.zeros((N, 2)))
    assert score.shortfall == pytest.approx(1.0, abs=1e-12)
    unique = (~judge.optimal_actions).any(axis=1)  # states with one best action: half the choices there are wrong
    assert score.wrong_share == pytest.approx(0.5 * unique.mean())


def test_a_policy_that_ignores_the_state_scores_exactly_one(judge):
    """The step is a rotation of the circle plus noise, which keeps the uniform average: every policy
    that ignores the state has mean value mean(r) / (1 - gamma), as the uniform one has. So "always
    +1" and "always -1" are exactly as bad as random, and a shortfall of 1 means no use of the state."""
    for action in (0.0, 1.0):
        score = judge.score_policy(np.full(N, action))
        assert score.shortfall == pytest.approx(1.0, abs=1e-9)


def test_the_anti_optimal_policy_is_wrong_wherever_one_action_is_best(judge):
    score = judge.score(-judge.optimal)
    assert score.wrong_share == pytest.approx((~judge.optimal_actions).any(axis=1).mean())
    assert score.shortfall > 1.0  # worse than choosing at random


def test_a_hand_solved_case_at_gamma_zero():
    """gamma 0, next-state rewards: Q(s, a) = 1 + d sin(s + a dt), d = exp(-sigma^2 dt / 2); +1 is
    best where cos s > 0, tied at s = pi/2, 3pi/2. V* - V^{+1} = 2 d sin(dt) max(0, -cos s) and
    V* - V^uniform = d sin(dt) |cos s|, equal means on a grid symmetric in s -> pi - s: "always +1"
    loses exactly what the uniform policy loses; "always the worst" twice that."""
    n = 64
    dynamics = shipped_dynamics(reward_of="next")
    s = grid(n)
    d = math.exp(-0.5 * dynamics.sigma ** 2 * dynamics.dt)
    q_star = np.stack([1 + d * np.sin(s + a * dynamics.dt) for a in (-1, 1)], axis=1)
    judge = GreedyJudge.build(q_star, 0.0, dynamics)
    np.testing.assert_allclose(judge.optimal, solve_on_grid(n, None, 0.0, dynamics).values, atol=1e-14)
    always_plus = judge.score_policy(np.ones(n))
    assert always_plus.shortfall == pytest.approx(1.0, rel=1e-12)
    assert always_plus.wrong_share == 31 / 64  # cos s < 0 at i = 17..47; i = 16 and 48 are ties
    worst = judge.score(-q_star)
    assert worst.shortfall == pytest.approx(2.0, rel=1e-12)
    assert worst.wrong_share == 62 / 64


def test_an_offset_between_the_actions_fools_the_per_action_metric_only(judge):
    """FACTS.md: shift Q(., +1) by +1 and Q(., -1) by -1: the per-action-centred error is 0, the
    common-centred one is not, and the greedy action changes in most states."""
    exact = torch.from_numpy(judge.optimal)
    shifted = exact + torch.tensor([-1.0, 1.0], dtype=torch.float64)
    assert centred_error(shifted, exact) == pytest.approx(0.0, abs=1e-12)
    common = common_centred_error(shifted, exact)
    assert common == pytest.approx(math.sqrt(2 * math.pi / N) * math.sqrt(2 * N))  # |D - mean D| = 1 everywhere
    assert common_centred_error(exact + 5.0, exact) == pytest.approx(0.0, abs=1e-12)  # a common offset stays free
    assert common_centred_norm(exact) > 0
    score = judge.score(shifted.numpy())
    assert score.wrong_share > 0.3 and score.shortfall > 0.1


def test_the_shortfall_converges_with_the_grid():
    """A learned greedy policy switches away from Q*'s crossings, so its V jumps; the grid's error
    there falls like 1/n: the score moves by little when the grid doubles (measured: 2e-3 of its
    value from 3200 to 6400 points, the grid the study's control Q* is solved on, 1e-3 to 12800)."""
    dynamics = shipped_dynamics()
    scores = []
    for n in (3200, 6400):
        optimal = solve_on_grid(n, None, GAMMA, dynamics).values
        s = grid(n)
        learned = optimal + 0.3 * np.stack([np.cos(s), -np.cos(s)], axis=1)  # a smooth wrong offset
        scores.append(GreedyJudge.build(optimal, GAMMA, dynamics).score(learned))
    assert 0.01 < scores[1].shortfall < 1
    assert scores[1].shortfall == pytest.approx(scores[0].shortfall, rel=5e-3)
    assert scores[1].wrong_share == pytest.approx(scores[0].wrong_share, abs=2 / 3200)


def test_a_learned_q_off_the_grid_or_not_finite_is_refused(judge):
    with pytest.raises(ValueError, match="shape"):
        judge.score(np.zeros((N // 2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        judge.score(np.full((N, 2), np.nan))
