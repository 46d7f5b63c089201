"""MPO's hand-written NumPy passes and gradients (agents/mpo/passes.py, losses.py, flat.py) against
PyTorch autograd and torch's optimisers, on small networks of every layer kind (a middle ELU layer
included), two action dimensions and random inputs: within float32 rounding."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rlstudy.agents.mpo.config import MPOParams
from rlstudy.agents.mpo.flat import SGD, FlatParameters
from rlstudy.agents.mpo.learner import MPO
from rlstudy.agents.mpo.losses import DUAL_FLOOR, SOFTPLUS_EPS, dual_value, e_step
from rlstudy.agents.mpo.networks import Critic
from rlstudy.core.flat_networks import FlatAdam

from mpo_fixtures import TINY

pytestmark = pytest.mark.usefixtures("one_thread")

OBS, ACT, ROWS, SAMPLES = 3, 2, 8, 5
CLOSE = {"rtol": 1e-4, "atol": 1e-5}


def agent(seed=0):
    params = MPOParams(**{**TINY.__dict__, "policy_layer_sizes": (16, 8), "critic_layer_sizes": (16, 12, 8),
                          "batch_size": ROWS, "action_samples": SAMPLES})
    torch.manual_seed(seed)
    learner = MPO(OBS, ACT, np.array([-1.0, -2.0], np.float32), np.array([1.0, 2.0], np.float32), params,
                  torch.device("cpu"), torch.Generator().manual_seed(seed))
    with torch.no_grad():  # away from a fresh LayerNorm's unit scale and zero shift, and targets unlike the online nets
        for module in (learner.policy, learner.critic, learner.policy_target, learner.critic_target):
            for parameter in module.parameters():
                parameter.add_(0.3 * torch.randn(parameter.shape, generator=torch.Generator().manual_seed(seed + 7)))
    return learner


def rand(*shape, seed=1, scale=1.0):
    return (scale * torch.randn(*shape, generator=torch.Generator().manual_seed(seed))).numpy()


def autograd_of(loss, module):
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(module.parameters()))]).numpy()


def test_critic_forward_and_td_gradient_match_autograd():
    learner = agent()
    obs, actions, target = rand(ROWS, OBS), rand(ROWS, ACT, seed=2, scale=2.0), rand(ROWS, seed=3)
    q, cache = learner.online[1].forward(obs, actions)
    learner.online[1].backward(cache, (q - target) * np.float32(2.0 / ROWS))
    q_torch = learner.critic(torch.from_numpy(obs), torch.from_numpy(actions))
    np.testing.assert_allclose(q, q_torch.detach().numpy(), **CLOSE)
    reference = autograd_of(F.mse_loss(q_torch, torch.from_numpy(target)), learner.critic)
    np.testing.assert_allclose(learner.critic_flat.grads, reference, **CLOSE)


def test_critic_evaluation_over_sampled_actions_matches_the_module():
    learner = agent()
    states, actions = rand(ROWS, OBS, scale=3.0), rand(ROWS, SAMPLES, ACT, seed=2, scale=2.0)
    values = learner.targets[1].values(states, actions)
    with torch.no_grad():
        expected = learner.critic_target(torch.from_numpy(states)[:, None].expand(-1, SAMPLES, -1),
                                         torch.from_numpy(actions))
    np.testing.assert_allclose(values, expected.numpy(), **CLOSE)


def test_critic_evaluation_of_a_one_layer_torso():
    critic = Critic(OBS, ACT, (16,), np.full(ACT, -1.0, np.float32), np.full(ACT, 1.0, np.float32))
    from rlstudy.agents.mpo.passes import CriticPasses
    states, actions = rand(ROWS, OBS), rand(ROWS, SAMPLES, ACT, seed=2)
    with torch.no_grad():
        expected = critic(torch.from_numpy(states)[:, None].expand(-1, SAMPLES, -1), torch.from_numpy(actions))
    np.testing.assert_allclose(CriticPasses(critic).values(states, actions), expected.numpy(), **CLOSE)


def torch_log_prob(action, mean, log_std):
    return (-0.5 * ((action - mean) / log_std.exp()) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)


def torch_kl(mean_p, log_std_p, mean_q, log_std_q):
    return (0.5 * (torch.exp(2 * (log_std_p - log_std_q)) + (mean_p - mean_q) ** 2 * torch.exp(-2 * log_std_q) - 1)
            + log_std_q - log_std_p)


def test_policy_m_step_gradient_matches_autograd():
    learner = agent()
    obs = rand(ROWS, OBS, scale=2.0)
    mean_target, log_std_target = rand(ROWS, ACT, seed=4), rand(ROWS, ACT, seed=5, scale=0.3)
    actions = mean_target[:, None] + rand(ROWS, SAMPLES, ACT, seed=6)
    weights = torch.softmax(torch.from_numpy(rand(ROWS, SAMPLES, seed=7)), dim=1).numpy()
    alpha_mean, alpha_std = np.array([0.5, 2.0], np.float32), np.array([3.0, 0.1], np.float32)
    mean, log_std, cache = learner.online[0].forward(obs)
    learner._policy_gradients(weights, actions, mean_target, log_std_target, mean, log_std, alpha_mean, alpha_std,
                              cache)
    loss = learner._policy_loss(weights, actions, mean_target, log_std_target, mean, log_std)

    mean_t, log_std_t = learner.policy(torch.from_numpy(obs))
    np.testing.assert_allclose(mean, mean_t.detach().numpy(), **CLOSE)
    np.testing.assert_allclose(log_std, log_std_t.detach().numpy(), **CLOSE)
    a, w, mt, lst = (torch.from_numpy(x) for x in (actions, weights, mean_target, log_std_target))
    loss_t = -(w * (torch_log_prob(a, mean_t[:, None], lst[:, None])
                    + torch_log_prob(a, mt[:, None], log_std_t[:, None]))).sum(1).mean()
    kl_mean, kl_std = torch_kl(mt, lst, mean_t, lst).mean(0), torch_kl(mt, lst, mt, log_std_t).mean(0)
    total = loss_t + (torch.from_numpy(alpha_mean) * kl_mean).sum() + (torch.from_numpy(alpha_std) * kl_std).sum()
    assert loss == pytest.approx(loss_t.item(), rel=1e-5)
    np.testing.assert_allclose(learner.policy_flat.grads, autograd_of(total, learner.policy), **CLOSE)


def test_a_clamped_log_std_gets_no_gradient():
    learner = agent()
    with torch.no_grad():
        learner.policy.log_std.bias.fill_(50.0)  # every log std above MAX_LOG_STD
    mean, log_std, cache = learner.online[0].forward(rand(ROWS, OBS))
    learner.online[0].backward(cache, np.zeros_like(mean), np.ones_like(log_std))
    assert not learner.policy.log_std.weight.grad.any() and not learner.policy.log_std.bias.grad.any()


def test_e_step_and_temperature_gradient_match_autograd():
    q = rand(ROWS, SAMPLES, scale=5.0)
    temperature = torch.tensor(0.7, requires_grad=True)
    weights, loss, gradient = e_step(q, np.float32(0.7), 0.1)
    scaled = torch.from_numpy(q) / temperature
    loss_t = temperature * (0.1 + torch.logsumexp(scaled, dim=1).mean() - math.log(SAMPLES))
    loss_t.backward()
    np.testing.assert_allclose(weights, torch.softmax(scaled, dim=1).detach().numpy(), **CLOSE)
    assert loss == pytest.approx(loss_t.item(), rel=1e-5)
    assert gradient == pytest.approx(temperature.grad.item(), rel=1e-4)


def test_dual_value_and_slope_match_autograd():
    u = torch.tensor([-30.0, DUAL_FLOOR, -3.0, 0.0, 4.0, 19.5, 25.0, 1000.0], requires_grad=True)
    value_t = F.softplus(torch.clamp(u, min=DUAL_FLOOR)) + SOFTPLUS_EPS
    value_t.sum().backward()
    value, slope = dual_value(u.detach().numpy())
    np.testing.assert_allclose(value, value_t.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(slope, u.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kind", ["adam", "sgd"])
def test_flat_optimiser_steps_match_torch(kind):
    torch.manual_seed(0)
    ours, theirs = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    theirs.load_state_dict(ours.state_dict())
    flat = FlatParameters(ours.parameters())
    parts = [(flat.part(0, 12), 1e-2), (flat.part(12, 15), 3e-2)]  # a learning rate per part, as the duals'
    if kind == "adam":
        optimisers = [FlatAdam(part, lr, eps=1e-5) for part, lr in parts]
        reference = torch.optim.Adam([{"params": [theirs.weight], "lr": 1e-2}, {"params": [theirs.bias], "lr": 3e-2}],
                                     eps=1e-5)
    else:
        optimisers = [SGD(part, lr, momentum=0.9) for part, lr in parts]
        reference = torch.optim.SGD([{"params": [theirs.weight], "lr": 1e-2}, {"params": [theirs.bias], "lr": 3e-2}],
                                    momentum=0.9)
    for step in range(5):
        gradient = torch.randn(15, generator=torch.Generator().manual_seed(step))
        flat.grads[:] = gradient.numpy()
        theirs.weight.grad, theirs.bias.grad = gradient[:12].reshape(3, 4).clone(), gradient[12:].clone()
        for optimiser in optimisers:
            optimiser.step()
        reference.step()
    for mine, expected in zip(ours.parameters(), theirs.parameters()):
        torch.testing.assert_close(mine.detach(), expected.detach(), rtol=1e-5, atol=1e-6)


def test_gradient_clipping_matches_torch():
    torch.manual_seed(0)
    ours, theirs = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    flat = FlatParameters(ours.parameters())
    flat.grads[:] = 3.0 * torch.randn(15, generator=torch.Generator().manual_seed(1)).numpy()
    theirs.weight.grad, theirs.bias.grad = (torch.from_numpy(flat.grads[:12].reshape(3, 4).copy()),
                                            torch.from_numpy(flat.grads[12:].copy()))
    flat.clip_gradient(1.0)
    torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
    np.testing.assert_allclose(flat.grads, torch.cat([theirs.weight.grad.reshape(-1), theirs.bias.grad]).numpy(),
                               rtol=1e-6)


def test_targets_copy_the_online_networks_every_period_and_the_saved_state_is_separate_tensors():
    learner = agent()
    batch = {name: torch.from_numpy(value) for name, value in batch_arrays().items()}
    assert learner.update(batch) is not None
    assert not np.array_equal(learner.critic_flat.values, learner.critic_target_flat.values)  # the online nets stepped
    learner.updates = learner.p.target_update_period  # the next update copies them first
    policy_before, critic_before = learner.policy_flat.values.copy(), learner.critic_flat.values.copy()
    learner.update(batch)
    np.testing.assert_array_equal(learner.policy_target_flat.values, policy_before)
    np.testing.assert_array_equal(learner.critic_target_flat.values, critic_before)
    torch.testing.assert_close(learner.critic_target.head.weight, torch.from_numpy(critic_before[-9:-1]).reshape(1, 8))
    state = learner.state_dict()
    assert all(tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size() for tensor in state.values())


def batch_arrays():
    rng = np.random.default_rng(0)
    return {"observations": rng.normal(size=(ROWS, 1, OBS)).astype(np.float32),
            "actions": rng.uniform(-1, 1, size=(ROWS, 1, ACT)).astype(np.float32),
            "rewards": rng.normal(size=(ROWS, 1)).astype(np.float32),
            "next_observations": rng.normal(size=(ROWS, 1, OBS)).astype(np.float32),
            "terminated": np.zeros((ROWS, 1), np.float32),
            "actions_raw": rng.normal(size=(ROWS, 1, ACT)).astype(np.float32),
            "ends": np.zeros((ROWS, 1), np.float32),
            "behaviour_log_probs": np.full((ROWS, 1), -1.0, np.float32)}


def test_warm_up_compiles_the_kernels_an_update_calls():
    """The warm-start server's warm-up (agents/warmup.py) loads each MPO kernel for the argument
    types an update passes: a forked job then compiles nothing."""
    from rlstudy.agents import warmup
    from rlstudy.agents.mpo.kernels import kernels

    warmup.warm_up()
    warmed = {name: list(kernel.signatures) for name, kernel in vars(kernels()).items()}
    learner = agent()
    assert learner.update({name: torch.from_numpy(value) for name, value in batch_arrays().items()}) is not None
    assert {name: list(kernel.signatures) for name, kernel in vars(kernels()).items()} == warmed


def test_the_compiled_elu_is_within_an_ulp_of_float64s_and_keeps_nan():
    """kernels.elu computes expm1 itself (NumPy's float32 expm1 is scalar on AVX2 CPUs): against the
    float64 ELU over [-100, 5], tiny negatives and the edges, at most one float32 ulp apart."""
    from rlstudy.agents.mpo.kernels import kernels

    z = np.concatenate([np.linspace(-100, 5, 200_001), -np.logspace(-30, 2, 10_001),
                        [0.0, -0.0, -0.5, -0.3465736, -0.3465737, -87.0, -88.0, -1e-45]]).astype(np.float32)
    exact = np.where(z > 0, z.astype(np.float64), np.expm1(np.minimum(z, 0).astype(np.float64)))
    got = kernels().elu(z.copy())
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - exact) <= ulp).all()
    edges = kernels().elu(np.array([np.nan, -np.inf, np.inf, -0.0], np.float32))
    assert np.isnan(edges[0]) and edges[1] == -1.0 and edges[2] == np.inf and edges[3] == 0.0
    block = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)  # the 2-D blocks the passes give
    expected = F.elu(torch.from_numpy(block)).numpy()
    np.testing.assert_allclose(kernels().elu(block.copy()), expected, rtol=2e-7, atol=1e-7)
