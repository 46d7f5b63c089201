"""Discrete BCQ and DQN: masking, targets, loss terms, epsilon schedule, bad environments."""

import numpy as np
import pytest
import torch

from rlstudy.core.errors import InputError
from rlstudy.offline.bcq import BCQ, allowed_actions, bcq_loss, constrained_greedy
from rlstudy.offline.buffer import Batch
from rlstudy.offline.double_dqn import DQN, LearnerParams, double_q_target
from rlstudy.offline.envs import AtariPreprocessing, EnvInfo, make_env
from shipped_params import shipped

CPU = torch.device("cpu")
INFO = EnvInfo("CartPole-v1", False, (4,), 1, 3, False)


def batch(n=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Batch(torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g),
                 torch.randn(n, generator=g), torch.randn(n, 4, generator=g),
                 torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])[:n])


def test_actions_at_or_under_the_threshold_relative_to_the_most_likely_are_masked():
    probs = torch.tensor([[0.50, 0.20, 0.10, 0.20], [0.05, 0.60, 0.175, 0.175]])
    allowed = allowed_actions(probs.log(), threshold=0.3)
    assert allowed.tolist() == [[True, True, False, True], [False, True, False, False]]
    assert allowed_actions(probs.log() + 7.0, threshold=0.3).tolist() == allowed.tolist()  # logits, not probs


def test_constrained_greedy_takes_the_best_allowed_action_even_when_a_masked_one_has_more_value():
    q = torch.tensor([[1.0, 5.0, 2.0], [3.0, 2.0, 1.0]])
    logits = torch.tensor([[0.0, -5.0, 0.0], [-5.0, 0.0, 0.0]]).log_softmax(1)
    assert constrained_greedy(q, logits, 0.3).tolist() == [2, 1]
    assert constrained_greedy(q, logits, 0.0).tolist() == [1, 0]  # threshold 0: plain Q-learning


def test_double_q_target_takes_the_value_from_the_target_network_and_stops_at_terminals():
    b = batch()
    target_q = torch.arange(15.0).reshape(5, 3)
    next_actions = torch.tensor([2, 0, 1, 1, 2])
    expected = b.rewards + 0.9 * b.not_done * target_q[torch.arange(5), next_actions]
    assert torch.equal(double_q_target(next_actions, target_q, b, 0.9), expected)
    assert double_q_target(next_actions, target_q, b, 0.9)[1] == b.rewards[1]


def test_bcq_loss_terms_and_statistics_by_hand():
    # G(.|s) of three states, twice: ratios to the most likely action (1, .5, .17), (.33, .33, 1),
    # (1, .06, .06); at threshold 0.3 the filter keeps 2, 3 and 1 of the 3 actions: 6 of 9.
    probs = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.9, 0.05, 0.05]]).repeat(2, 1)
    logits = probs.log() + 1.5  # logits, not log-probabilities
    q = torch.arange(18.0).reshape(6, 3)
    actions, target = torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([1.0, 4.0, 8.5, 9.0, 10.0, 20.0])
    loss, stats = bcq_loss(q, logits, actions, target, threshold=0.3)
    chosen = torch.tensor([0.0, 4.0, 8.0, 9.0, 13.0, 17.0])
    # Huber: |d| = 1, 0, 0.5, 0, 3, 3 -> 0.5, 0, 0.125, 0, 2.5, 2.5
    td = (0.5 + 0.125 + 2.5 + 2.5) / 6
    nll = -probs.log()[torch.arange(6), actions].mean().item()
    penalty = 1e-2 * (logits ** 2).mean().item()
    assert stats == pytest.approx({"loss_q": td, "q_mean": chosen.mean().item(), "q_max": 17.0,
                                   "target_mean": target.mean().item(), "loss_imitation": nll,
                                   "loss_logit_penalty": penalty, "kept_share": 6 / 9})
    assert loss.item() == pytest.approx(td + nll + penalty)


def test_bcq_target_chooses_the_next_action_with_the_online_network_among_allowed_ones():
    torch.manual_seed(0)
    learner = BCQ(INFO, shipped(LearnerParams, "offline", "regular", gamma=0.9), threshold=0.3, device=CPU)
    with torch.no_grad():
        for p in learner.target.parameters():
            p.add_(0.1 * torch.randn_like(p))
    b = batch()
    q_next, logits_next = learner.network(b.next_states)
    next_actions = constrained_greedy(q_next, logits_next, 0.3)
    next_values = learner.target.q_values(b.next_states).gather(1, next_actions[:, None])[:, 0]
    target = b.rewards + 0.9 * b.not_done * next_values
    q, logits = learner.network(b.states)
    _, expected = bcq_loss(q, logits, b.actions, target.detach(), 0.3)
    _, terms = learner.loss(b, measure=True)
    assert terms == pytest.approx(expected)
    assert learner.loss(b, measure=False)[1] == {}


def test_dqn_update_moves_q_towards_the_target_and_the_target_by_the_polyak_rate():
    torch.manual_seed(0)
    learner = DQN(INFO, shipped(LearnerParams, "offline", "regular", lr=1e-2, polyak=0.5), CPU)
    before = [p.clone() for p in learner.target.parameters()]
    b = batch()
    first = learner.loss(b, measure=True)[1]["loss_q"]
    learner.update(b)
    for p, t, old in zip(learner.network.parameters(), learner.target.parameters(), before):
        torch.testing.assert_close(t, 0.5 * old + 0.5 * p)
    for _ in range(30):
        learner.update(b)
    assert learner.loss(b, measure=True)[1]["loss_q"] < first


def test_copy_target_update_every_n_updates():
    torch.manual_seed(0)
    learner = DQN(INFO, shipped(LearnerParams, "offline", "regular", polyak_target_update=False, target_update_every=3), CPU)
    initial = [p.clone() for p in learner.target.parameters()]
    for _ in range(2):
        learner.update(batch())
    assert all(torch.equal(a, b) for a, b in zip(initial, learner.target.parameters()))
    learner.update(batch())
    assert all(torch.equal(a, b) for a, b in zip(learner.network.parameters(), learner.target.parameters()))


def test_divergence_fails_loudly():
    learner = DQN(INFO, shipped(LearnerParams, "offline", "regular"), CPU)
    b = batch()
    b.rewards[0] = float("nan")
    with pytest.raises(Exception, match="loss is nan"):
        learner.update(b)


def test_epsilon_schedule_random_start_then_linear_decay():
    p = shipped(LearnerParams, "offline", "regular", start_steps=10, initial_eps=1.0, end_eps=0.1, eps_decay_steps=100)
    assert p.epsilon(0) == p.epsilon(9) == 1.0
    assert p.epsilon(60) == pytest.approx(0.55)
    assert p.epsilon(110) == p.epsilon(10_000) == pytest.approx(0.1)


@pytest.mark.parametrize("env_id, message", [("NoSuchEnv-v0", "unknown gymnasium id"),
                                             ("ALE/Pong-v5", "contains '/'"),
                                             ("Pendulum-v1", "Discrete")])
def test_bad_environments_are_named(env_id, message):
    with pytest.raises(InputError, match=message):
        make_env(env_id, shipped(AtariPreprocessing, "offline", "atari_preprocessing"))


def test_atari_states_are_uint8_stacks_of_84x84_frames_and_rewards_are_clipped_for_learning():
    env, info = make_env("PongNoFrameskip-v4", shipped(AtariPreprocessing, "offline", "atari_preprocessing"))
    state, _ = env.reset(seed=0)
    assert info.is_atari and info.state_shape == (4, 84, 84) and state.shape == (4, 84, 84)
    assert state.dtype == np.uint8 and not state[:3].any() and state[3].any()  # zeros before the first frame
    assert info.clip_rewards
    assert env.spec.max_episode_steps == 27000 or env.unwrapped.spec.max_episode_steps == 27000


@pytest.mark.parametrize("make", [lambda params: DQN(INFO, params, CPU), lambda params: BCQ(INFO, params, 0.3, CPU)],
                         ids=["dqn", "bcq"])
def test_hand_written_gradients_and_statistics_equal_autograds(make):
    """On the CPU an MLP learner's update computes its loss's gradient compiled (core/compiled_updates);
    autograd's backward of the learner's `loss` is the reference."""
    torch.manual_seed(0)
    learner = make(shipped(LearnerParams, "offline", "regular", gamma=0.9))
    with torch.no_grad():
        for p in learner.target.parameters():
            p.add_(0.1 * torch.randn_like(p))
    b = batch()
    b.rewards[1] = 40.0  # a TD error beyond the Huber loss's quadratic part
    assert learner.flat is not None
    loss, stats = learner.gradients(b, measure=True)
    by_hand = [p.grad.clone() for p in learner.network.parameters()]
    expected_loss, expected_stats = learner.loss(b, measure=True)
    learner.network.zero_grad(set_to_none=False)
    expected_loss.backward()
    assert loss == pytest.approx(float(expected_loss), rel=1e-6)
    assert stats == pytest.approx(expected_stats, rel=1e-6)
    for parameter, grad in zip(learner.network.parameters(), by_hand):
        torch.testing.assert_close(parameter.grad, grad)
    assert learner.gradients(b, measure=False)[1] == {}
