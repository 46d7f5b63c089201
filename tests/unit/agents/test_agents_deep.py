from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

from rlstudy.agents import ddpg, dqn
from rlstudy.agents.ddpg import DDPGParams
from rlstudy.agents.dqn import DQNParams
from rlstudy.agents.nets import frozen
from rlstudy.agents.replay import Batch, ReplayBuffer
from rlstudy.core.diagnostics import DiagnosticsLog
from shipped_params import shipped

pytestmark = pytest.mark.usefixtures("one_thread")


def batch(rewards, terminated, next_observations):
    n = len(rewards)
    return Batch(torch.zeros(n, 1), torch.zeros(n), torch.tensor(rewards), torch.tensor(next_observations),
                 torch.tensor(terminated))


def test_dqn_target_by_hand():
    target_network = lambda s: torch.cat([s, 2 * s], dim=1)  # noqa: E731  Q(s', .) = (s', 2 s')
    b = batch([1.0, 1.0, -1.0], [0.0, 1.0, 0.0], [[3.0], [3.0], [-2.0]])
    # max_a Q = 6, (terminal), -2
    expected = torch.tensor([1.0 + 0.5 * 6.0, 1.0, -1.0 + 0.5 * -2.0])
    torch.testing.assert_close(dqn.td_targets(target_network, b, 0.5), expected)


def test_ddpg_target_by_hand():
    target = SimpleNamespace(actor=lambda s: 3 * s, critic=lambda s, a: (s + a).squeeze(1))  # Q(s', mu(s')) = 4 s'
    b = batch([0.5, 2.0], [0.0, 1.0], [[1.0], [5.0]])
    torch.testing.assert_close(ddpg.critic_targets(target, b, 0.9), torch.tensor([0.5 + 0.9 * 4.0, 2.0]))


def test_epsilon_falls_linearly_then_stays():
    params = shipped(DQNParams, "dqn", "params", total_steps=1000, exploration_fraction=0.5, epsilon_start=1.0, epsilon_end=0.05)
    assert dqn.epsilon_at(0, params) == 1.0
    assert dqn.epsilon_at(250, params) == pytest.approx(0.525)
    assert dqn.epsilon_at(500, params) == pytest.approx(0.05)
    assert dqn.epsilon_at(900, params) == 0.05


def test_polyak_update_moves_targets_by_the_polyak_rate():
    online, target = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    before = [p.detach().clone() for p in target.parameters()]
    ddpg.polyak_update(target, online, 0.25)
    for t, b, p in zip(target.parameters(), before, online.parameters()):
        torch.testing.assert_close(t, 0.75 * b + 0.25 * p)


def test_actor_stays_in_the_action_box():
    space = gym.spaces.Box(-2.0, 1.0, (1,))
    actor = ddpg.Actor(3, space, (8,), torch.Generator().manual_seed(0))
    actions = actor(1e3 * torch.randn(100, 3, generator=torch.Generator().manual_seed(1)))
    assert actions.min() >= -2.0 and actions.max() <= 1.0
    assert actions.min() < -1.9 and actions.max() > 0.9  # saturated inputs reach both ends


def test_replay_buffer_overwrites_the_oldest_and_samples_filled_rows():
    buffer = ReplayBuffer(3, (1,), ())
    for i in range(5):
        buffer.add([i], i, float(i), [i + 1], i == 4)
    assert buffer.size == 3
    assert sorted(buffer.rewards.tolist()) == [2.0, 3.0, 4.0]
    sample = buffer.sample(50, np.random.default_rng(0))
    assert set(sample.rewards.tolist()) == {2.0, 3.0, 4.0}
    torch.testing.assert_close(sample.next_observations[:, 0], sample.observations[:, 0] + 1)
    torch.testing.assert_close(sample.terminated, (sample.rewards == 4.0).float())


def test_dqn_and_ddpg_runs_are_bit_reproducible():
    def dqn_run(log):
        env = gym.make("CartPole-v1")
        params = shipped(DQNParams, "dqn", "params", total_steps=300, learning_starts=0.1, train_every=5, target_every=50, log_every=100)
        return dqn.train_dqn(env, params, 3, np.random.default_rng(0), torch.Generator().manual_seed(0), log)

    def ddpg_run(log):
        env = gym.make("Pendulum-v1")
        params = shipped(DDPGParams, "ddpg", "params", total_steps=220, batch_size=32, hidden=(16, 16), random_fraction=0.5, log_every=50)
        return ddpg.train_ddpg(env, params, 3, np.random.default_rng(0), torch.Generator().manual_seed(0), log)

    for run in (dqn_run, ddpg_run):
        log_a, log_b = DiagnosticsLog(), DiagnosticsLog()
        (model_a, returns_a), (model_b, returns_b) = run(log_a), run(log_b)
        assert returns_a.frame().equals(returns_b.frame())
        for a, b in zip(model_a.state_dict().values(), model_b.state_dict().values()):
            assert torch.equal(a, b)
        assert len(log_a.frame()) >= 2 and log_a.frame().equals(log_b.frame())  # the diagnostics too
    assert returns_a.frame()["step"].tolist() == [200]  # Pendulum: 200-step episodes


def test_the_actor_update_leaves_the_critic_out_of_autograd_and_gets_the_same_gradients():
    env = gym.make("Pendulum-v1")
    params = shipped(DDPGParams, "ddpg", "params", hidden=(64, 64))
    model = ddpg.ActorCritic(env, params, torch.Generator().manual_seed(0))
    observations = torch.randn(32, 3, generator=torch.Generator().manual_seed(1))

    def actor_gradients(freeze: bool):
        model.zero_grad(set_to_none=True)
        if freeze:
            with frozen(model.critic):
                (-model.critic(observations, model.actor(observations)).mean()).backward()
        else:
            (-model.critic(observations, model.actor(observations)).mean()).backward()
        return [p.grad.clone() for p in model.actor.parameters()], [p.grad for p in model.critic.parameters()]

    (plain, critic_plain), (skipped, critic_skipped) = actor_gradients(False), actor_gradients(True)
    assert all(g is not None for g in critic_plain) and all(g is None for g in critic_skipped)
    assert all(torch.equal(a, b) for a, b in zip(plain, skipped))  # bit for bit

    layer = model.critic.net[0]
    layer.bias.requires_grad_(False)
    with pytest.raises(RuntimeError), frozen(model.critic):
        raise RuntimeError("the flags come back even on an error")
    assert layer.weight.requires_grad and not layer.bias.requires_grad
