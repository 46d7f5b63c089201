"""MPO's losses, duals and Retrace against hand-computed values on tiny inputs, and its learner's guards."""

import math

import numpy as np
import pytest
import torch

from rlstudy.agents.episodes import evaluate
from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.mpo.environment import make_env
from rlstudy.agents.mpo.learner import MPO
from rlstudy.agents.mpo.loop import train
from rlstudy.agents.mpo.losses import e_step, kl_diag_gaussian, kl_dual_loss, kl_to_uniform, retrace_targets
from rlstudy.agents.replay import ReplayBuffer
from rlstudy.core.diagnostics import STATISTICS_EVERY
from rlstudy.core.errors import InputError

from mpo_fixtures import TINY, random_batch, tiny_agent

# One torch thread, as the jobs run: these tiny networks were many times slower (30 s and more for
# the exact repeat) with torch's default threads on a shared machine.
pytestmark = pytest.mark.usefixtures("one_thread")


def test_e_step_weights_sum_to_one_and_are_the_softmax_of_q_over_eta():
    q = np.array([[0.0, 2.0], [1.0, 1.0], [-3.0, 5.0]], np.float32)
    weights, _, _ = e_step(q, np.float32(2.0), 0.1)
    np.testing.assert_allclose(weights.sum(1), np.ones(3), rtol=1e-6)
    e = math.exp(1.0)
    np.testing.assert_allclose(weights[0], [1 / (1 + e), e / (1 + e)], rtol=1e-6)
    np.testing.assert_allclose(weights[1], [0.5, 0.5], rtol=1e-6)
    assert abs(kl_to_uniform(weights)[1]) < 1e-6


def test_kl_of_identical_gaussians_is_zero_and_a_hand_computed_one():
    mean, log_std = np.array([0.3, -1.0]), np.array([0.2, -0.5])
    np.testing.assert_allclose(kl_diag_gaussian(mean, log_std, mean, log_std), np.zeros(2), atol=1e-12)
    # KL(N(0, 1) || N(1, 2^2)) = log 2 + (1 + 1) / (2 * 4) - 1/2
    kl = kl_diag_gaussian(np.float32(0.0), np.float32(0.0), np.float32(1.0), np.float32(math.log(2.0)))
    assert kl == pytest.approx(math.log(2.0) + 0.25 - 0.5, rel=1e-6)


def test_temperature_loss_and_gradient_by_hand():
    # Q = (0, 2), eta = 2, epsilon = 0.1, N = 2:
    # L = eta (eps + log(e^0 + e^1) - log 2); dL/deta = (eps + LSE - log 2) - sum_i w_i Q_i / eta
    _, loss, gradient = e_step(np.array([[0.0, 2.0]], np.float32), np.float32(2.0), 0.1)
    lse = math.log(1.0 + math.e)
    assert loss == pytest.approx(2.0 * (0.1 + lse - math.log(2.0)), rel=1e-6)
    w1 = math.e / (1.0 + math.e)
    expected = 0.1 + lse - math.log(2.0) - w1 * 2.0 / 2.0
    assert gradient == pytest.approx(expected, rel=1e-5)
    assert expected < 0  # weights further than epsilon from uniform: descent raises the temperature


def test_temperature_falls_when_all_q_are_equal():
    _, _, gradient = e_step(np.full((3, 5), 7.0, np.float32), np.float32(1.5), 0.1)
    assert gradient == pytest.approx(0.1, rel=1e-5)  # dL/deta = epsilon > 0: eta shrinks


@pytest.mark.parametrize("kl, direction", [(0.5, 1.0), (0.01, -1.0)])
def test_kl_duals_rise_above_the_bound_and_fall_below_it(kl, direction):
    alpha, kls, h = np.array([3.0, 3.0]), np.array([kl, kl]), 1e-6
    # the gradient in each alpha_j is epsilon - KL_j (by finite differences of the loss)
    for j in range(2):
        step = np.eye(2)[j] * h
        slope = (kl_dual_loss(alpha + step, kls, 0.1) - kl_dual_loss(alpha, kls, 0.1)) / h
        assert slope == pytest.approx(0.1 - kl, rel=1e-6)
    stepped = alpha - 0.1 * (0.1 - kls)  # one gradient-descent step
    assert np.all(np.sign(stepped - alpha) == direction)


def test_learner_duals_move_in_the_right_direction_on_one_update():
    # A fresh policy equals its target, so both M-step KLs (0) are below the bound: the alphas fall.
    agent = tiny_agent()
    alpha_mean, alpha_std = agent.log_alpha_mean.detach().clone(), agent.log_alpha_std.detach().clone()
    assert agent.update(random_batch()) is not None
    assert torch.all(agent.log_alpha_mean < alpha_mean) and torch.all(agent.log_alpha_std < alpha_std)


def test_retrace_two_steps_by_hand():
    q, v_next = np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])
    rewards, zeros, c = np.array([[1.0, 1.0]]), np.zeros((1, 2)), np.array([[0.9, 0.5]])
    # delta_0 = 1 + 0.5*3 - 1 = 1.5, delta_1 = 1 + 0.5*4 - 2 = 1; c_0 is never used
    # Q_ret = Q_0 + delta_0 + gamma c_1 delta_1 = 1 + 1.5 + 0.5*0.5*1 = 2.75
    assert retrace_targets(q, v_next, rewards, zeros, zeros, c, 0.5).item() == pytest.approx(2.75)
    # an episode end after step 0 stops the trace: 1 + 1.5
    ends = np.array([[1.0, 0.0]])
    assert retrace_targets(q, v_next, rewards, zeros, ends, c, 0.5).item() == pytest.approx(2.5)
    # a termination also drops the bootstrap: delta_0 = 1 - 1 = 0
    assert retrace_targets(q, v_next, rewards, ends, ends, c, 0.5).item() == pytest.approx(1.0)


def test_retrace_with_full_traces_is_the_two_step_expected_return():
    # c = 1: Q_ret = r_0 + gamma r_1 + gamma^2 V(s_2) + gamma (V(s_1) - Q(s_1, a_1))
    q, v_next = np.array([[0.3, 0.7]]), np.array([[1.1, -0.4]])
    rewards, zeros, ones = np.array([[0.2, -0.6]]), np.zeros((1, 2)), np.ones((1, 2))
    gamma = 0.9
    expected = 0.2 + gamma * -0.6 + gamma**2 * -0.4 + gamma * (1.1 - 0.7)
    assert retrace_targets(q, v_next, rewards, zeros, zeros, ones, gamma).item() == pytest.approx(expected)


def test_nonfinite_batch_is_skipped_and_counted():
    agent = tiny_agent()
    before = {k: v.clone() for k, v in agent.state_dict().items()}
    batch = random_batch()
    batch["rewards"][3, 0] = float("nan")
    assert agent.update(batch) is None
    assert agent.skipped_nonfinite_batches == 1
    assert all(torch.equal(before[k], v) for k, v in agent.state_dict().items())
    infos = [agent.update(random_batch()) for _ in range(STATISTICS_EVERY)]  # the skipped update counts as one
    assert all(info is not None for info in infos) and agent.skipped_nonfinite_batches == 1
    measured = [info for info in infos if info]
    assert len(measured) == 1 and all(math.isfinite(v) for v in measured[0].values())


def test_one_update_in_statistics_every_returns_its_statistics():
    """The 0th, 10th, ... update returns every statistic, the others an empty dict (the loop's log then
    averages a window over its measured updates)."""
    agent = tiny_agent()
    infos = [agent.update(random_batch()) for _ in range(2 * STATISTICS_EVERY + 1)]
    assert [i for i, info in enumerate(infos) if info] == [0, STATISTICS_EVERY, 2 * STATISTICS_EVERY]
    assert all(len(infos[i]) == len(infos[0]) for i in (STATISTICS_EVERY, 2 * STATISTICS_EVERY))


def test_retrace_update_runs_on_sequences():
    agent = tiny_agent(MPOParams(**{**TINY.__dict__, "use_retrace": True, "retrace_steps": 3}))
    info = agent.update(random_batch(length=3))
    assert info is not None and all(math.isfinite(v) for v in info.values())


def test_replay_sequences_are_consecutive_across_the_wrap():
    replay = ReplayBuffer(5, (1,), (1,), extras={"ends": ()})
    for i in range(8):  # holds 3..7, stored at rows 3, 4, 0, 1, 2
        replay.add([i], [0], i, [i + 1], False, ends=False)
    batch = replay.sample_sequences(50, 3, np.random.default_rng(0))
    rewards = batch["rewards"].numpy()
    assert rewards.min() == 3 and rewards.max() == 7
    assert np.all(np.diff(rewards, axis=1) == 1)


def test_discrete_and_unknown_environments_are_refused_naming_the_key():
    with pytest.raises(InputError, match="mpo.env.*Box"):
        make_env("CartPole-v1")
    with pytest.raises(InputError, match="mpo.env"):
        make_env("NoSuchEnv-v0")


def test_short_training_repeats_exactly():
    params = MPOParams(**{**TINY.__dict__, "total_steps": 90, "learning_starts": 50, "log_every": 20,
                          "eval_episodes": 1})

    def once():
        env = make_env("Pendulum-v1")
        torch.manual_seed(0)
        result = train(env, params, torch.device("cpu"), 1, np.random.default_rng(1), torch.Generator().manual_seed(2),
                       "test")
        return result, evaluate(env, lambda observation: result.agent.act(observation, greedy=True)[0], 3, 1)

    (first, eval_first), (second, eval_second) = once(), once()
    assert len(first.diagnostics) == 2 and first.diagnostics["skipped_nonfinite_batches"].eq(0).all()
    assert first.diagnostics.equals(second.diagnostics)
    assert eval_first == eval_second
