import math

import numpy as np
import pytest

from rlstudy.bellman.problem.sde import prob_plus, sample_trajectory
from bellman_fixtures import dynamics

DYN = dynamics()


def redraw(seed, n):
    """The draws sample_trajectory makes, in its order."""
    rng = np.random.default_rng(seed)
    return rng.random(n), rng.standard_normal(n - 1)


@pytest.mark.parametrize("policy", ["evaluation", "uniform"])
def test_trajectory_follows_the_recursion_exactly(policy):
    n = 5000
    traj = sample_trajectory(policy, n, DYN, np.random.default_rng(7))
    uniforms, normals = redraw(7, n)
    kicks = DYN.sigma * math.sqrt(DYN.dt) * normals
    expected_s = [0.0]
    for m in range(n - 1):
        s = expected_s[-1]
        plus = uniforms[m] < 0.5 + (math.sin(s) / 5.0 if policy == "evaluation" else 0.0)
        assert traj.action_indices[m] == int(plus)
        expected_s.append(s + ((DYN.dt if plus else -DYN.dt) + kicks[m]))
    np.testing.assert_array_equal(traj.states, np.array(expected_s))
    np.testing.assert_array_equal(traj.rewards, np.sin(traj.states) + 1.0)


def test_trajectory_statistics():
    n = 200_000
    traj = sample_trajectory("evaluation", n, DYN, np.random.default_rng(1))
    a = 2.0 * traj.action_indices[:-1] - 1.0
    noise = np.diff(traj.states) - a * DYN.dt
    assert abs(noise.mean()) < 4 * DYN.sigma * math.sqrt(DYN.dt) / math.sqrt(n)
    assert noise.var() == pytest.approx(DYN.sigma ** 2 * DYN.dt, rel=0.02)
    # The frequency of a=+1 follows pi(+1|s) = 1/2 + sin(s)/5, bin by bin on the circle.
    wrapped = np.remainder(traj.states, 2 * math.pi)
    bins = np.digitize(wrapped, np.linspace(0, 2 * math.pi, 9))
    for b in range(1, 9):
        inside = bins == b
        expected = prob_plus("evaluation", wrapped[inside]).mean()
        tolerance = 4 * math.sqrt(expected * (1 - expected) / inside.sum())  # four standard errors
        assert traj.action_indices[inside].mean() == pytest.approx(expected, abs=tolerance)


def test_uniform_policy_is_balanced_and_seed_determined():
    t1 = sample_trajectory("uniform", 100_000, DYN, np.random.default_rng(3))
    t2 = sample_trajectory("uniform", 100_000, DYN, np.random.default_rng(3))
    assert t1.action_indices.mean() == pytest.approx(0.5, abs=0.01)
    np.testing.assert_array_equal(t1.states, t2.states)


def test_reward_of_next_state():
    """The notebook's text says r = sin(s_{m+1}) + 1, its code sin(s_m) + 1: both are offered."""
    traj = sample_trajectory("uniform", 100, dynamics(reward_of="next"), np.random.default_rng(0))
    np.testing.assert_array_equal(traj.rewards[:-1], np.sin(traj.states[1:]) + 1.0)
    assert np.isnan(traj.rewards[-1])


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="unknown policy"):
        sample_trajectory("greedy", 10, DYN, np.random.default_rng(0))
