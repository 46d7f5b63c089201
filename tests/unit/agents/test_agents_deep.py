import copy
import dataclasses
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

from rlstudy.agents import ddpg, dqn
from rlstudy.agents.ddpg import DDPGParams
from rlstudy.agents.dqn import DQNParams
from rlstudy.core.dense import dense_layers, relu_backward, relu_forward
from rlstudy.agents.replay import Batch, ReplayBuffer
from rlstudy.core.diagnostics import DiagnosticsLog
from shipped_params import shipped

pytestmark = pytest.mark.usefixtures("one_thread")


def batch(rewards, terminated, next_observations):
    n = len(rewards)
    return Batch(torch.zeros(n, 1), torch.zeros(n), torch.tensor(rewards), torch.tensor(next_observations),
                 torch.tensor(terminated))


def test_dqn_target_by_hand():
    target = torch.nn.Sequential(torch.nn.Linear(1, 2))
    with torch.no_grad():
        target[0].weight.copy_(torch.tensor([[1.0], [2.0]]))
        target[0].bias.zero_()  # Q(s', .) = (s', 2 s')
    b = batch([1.0, 1.0, -1.0], [0.0, 1.0, 0.0], [[3.0], [3.0], [-2.0]])
    b = b._replace(actions=torch.zeros(3, dtype=torch.int64))
    update = dqn.TDUpdate(copy.deepcopy(target), target, shipped(DQNParams, "dqn", "params", gamma=0.5))
    # max_a Q = 6, (terminal), -2
    expected = torch.tensor([1.0 + 0.5 * 6.0, 1.0, -1.0 + 0.5 * -2.0])
    torch.testing.assert_close(update.gradients(b)[2], expected)


def test_ddpg_target_by_hand():
    space = gym.spaces.Box(-2.0, 2.0, (1,))
    model = ddpg.ActorCritic(SimpleNamespace(observation_space=gym.spaces.Box(-1.0, 1.0, (1,)), action_space=space),
                             shipped(DDPGParams, "ddpg", "params", hidden=(3,), gamma=0.9), torch.Generator())
    with torch.no_grad():  # mu'(s') = 2 tanh(s'): ReLU(s'), ReLU(-s'); Q'(s', a) = ReLU(s') + ReLU(-s') + ReLU(a)
        for net, weight in ((model.actor.net, [[1.0], [-1.0], [0.0]]), (model.critic.net, [[1.0, 0], [-1.0, 0], [0, 1.0]])):
            net[0].weight.copy_(torch.tensor(weight))
            net[0].bias.zero_()
            net[2].bias.zero_()
        model.actor.net[2].weight.copy_(torch.tensor([[1.0, -1.0, 0.0]]))
        model.critic.net[2].weight.copy_(torch.tensor([[1.0, 1.0, 1.0]]))
    b = batch([0.5, 2.0, 1.0], [0.0, 1.0, 0.0], [[1.0], [5.0], [-0.5]])
    b = b._replace(actions=torch.zeros(3, 1))
    updates = ddpg.Updates(copy.deepcopy(model), model, shipped(DDPGParams, "ddpg", "params", gamma=0.9))
    expected = [0.5 + 0.9 * (1.0 + 2 * np.tanh(1.0)), 2.0, 1.0 + 0.9 * 0.5]  # the last action negative: ReLU 0
    torch.testing.assert_close(updates.critic_gradients(b)[2], torch.tensor(expected, dtype=torch.float32))


def test_epsilon_falls_linearly_then_stays():
    params = shipped(DQNParams, "dqn", "params", total_steps=1000, exploration_fraction=0.5, epsilon_start=1.0, epsilon_end=0.05)
    assert dqn.epsilon_at(0, params) == 1.0
    assert dqn.epsilon_at(250, params) == pytest.approx(0.525)
    assert dqn.epsilon_at(500, params) == pytest.approx(0.05)
    assert dqn.epsilon_at(900, params) == 0.05


def test_polyak_update_moves_targets_by_the_polyak_rate():
    params = shipped(DDPGParams, "ddpg", "params", hidden=(4,), polyak=0.25)
    env, generator = gym.make("Pendulum-v1"), torch.Generator().manual_seed(0)
    online, target = ddpg.ActorCritic(env, params, generator), ddpg.ActorCritic(env, params, generator)
    updates = ddpg.Updates(online, target, params)
    before = [p.detach().clone() for p in target.parameters()]
    updates.polyak_update()
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


def test_relu_backward_gets_autograds_gradients_of_parameters_and_inputs():
    network = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4), torch.nn.ReLU())
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(1), requires_grad=True)
    weights = torch.randn(64, 4, generator=torch.Generator().manual_seed(2))
    (network(x) * weights).sum().backward()
    expected = [p.grad.clone() for p in network.parameters()]
    network.zero_grad(set_to_none=True)
    layers = dense_layers(network)
    outputs = relu_forward(layers, x.detach().numpy(), relu_last=True)
    torch.testing.assert_close(torch.from_numpy(outputs[-1]), network(x).detach())
    grad_input = relu_backward(layers, outputs, weights.numpy(), relu_last=True, inputs=True)
    for parameter, grad in zip(network.parameters(), expected):
        torch.testing.assert_close(parameter.grad, grad)
    torch.testing.assert_close(torch.from_numpy(grad_input), x.grad)


def test_hand_written_dqn_and_ddpg_gradients_equal_autograds():
    generator = torch.Generator().manual_seed(0)
    params = shipped(DQNParams, "dqn", "params", hidden=(32, 16))
    network, target = (dqn.q_network(gym.make("CartPole-v1"), params, generator) for _ in range(2))
    b = Batch(torch.randn(64, 4, generator=generator), torch.randint(2, (64,), generator=generator),
              torch.randn(64, generator=generator), torch.randn(64, 4, generator=generator),
              (torch.rand(64, generator=generator) < 0.2).float())
    loss, _, targets = dqn.TDUpdate(network, target, dataclasses.replace(params, gamma=0.9)).gradients(b)
    by_hand = [p.grad.clone() for p in network.parameters()]
    network.zero_grad(set_to_none=True)
    autograd_loss = torch.nn.functional.mse_loss(network(b.observations).gather(1, b.actions[:, None]).squeeze(1),
                                                 targets)
    autograd_loss.backward()
    torch.testing.assert_close(loss, autograd_loss.detach())
    for parameter, grad in zip(network.parameters(), by_hand):
        torch.testing.assert_close(parameter.grad, grad)

    env = gym.make("Pendulum-v1")
    ddpg_params = shipped(DDPGParams, "ddpg", "params", hidden=(64, 64))
    model, target_model = ddpg.ActorCritic(env, ddpg_params, generator), ddpg.ActorCritic(env, ddpg_params, generator)
    updates = ddpg.Updates(model, target_model, dataclasses.replace(ddpg_params, gamma=0.9))
    b = Batch(b.observations[:, :3].contiguous(), torch.rand(64, 1, generator=generator) * 4 - 2, b.rewards,
              b.next_observations[:, :3].contiguous(), b.terminated)
    critic_loss, _, targets = updates.critic_gradients(b)
    actor_loss = updates.actor_gradients(b.observations)
    by_hand = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    expected_critic_loss = torch.nn.functional.mse_loss(model.critic(b.observations, b.actions), targets)
    expected_actor_loss = -model.critic(b.observations, model.actor(b.observations)).mean()
    model.actor.zero_grad()
    expected_critic_loss.backward()
    critic_grads = [p.grad.clone() for p in model.critic.parameters()]
    model.zero_grad(set_to_none=True)
    expected_actor_loss.backward()  # the actor's gradients through the critic
    torch.testing.assert_close(critic_loss, expected_critic_loss.detach())
    torch.testing.assert_close(actor_loss, expected_actor_loss.detach())
    hand_actor, hand_critic = by_hand[:len(list(model.actor.parameters()))], by_hand[len(list(model.actor.parameters())):]
    for parameter, grad in zip(model.actor.parameters(), hand_actor):
        torch.testing.assert_close(parameter.grad, grad)
    for expected, grad in zip(critic_grads, hand_critic):
        torch.testing.assert_close(expected, grad)


def test_fused_adam_steps_are_bit_reproducible():
    """The agents' optimiser (fused Adam on the CPU): the same gradients give the same bits, step after step."""
    def run():
        layer = torch.nn.Linear(8, 4)
        with torch.no_grad():
            for parameter in layer.parameters():
                parameter.copy_(torch.linspace(-1, 1, parameter.numel()).reshape(parameter.shape))
        optimiser = torch.optim.Adam(layer.parameters(), lr=1e-2, fused=True)
        generator = torch.Generator().manual_seed(3)
        for _ in range(50):
            for parameter in layer.parameters():
                parameter.grad = torch.randn(parameter.shape, generator=generator)
            optimiser.step()
        return [parameter.detach().clone() for parameter in layer.parameters()]

    assert all(torch.equal(a, b) for a, b in zip(run(), run()))
