"""DS, UR and BFF residuals and SGD's gradient against scalar, hand-written arithmetic."""

import math

import pytest
import torch

from rlstudy.bellman import qnet
from rlstudy.bellman.qnet import backward, forward, forward_cached, forward_no_grad, init_params, unflatten
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.residuals import cbo_loss, make_batch, residual_pair, sgd_grad_q
from bellman_fixtures import dynamics

GAMMA = 0.9
DYN = dynamics()


def q_scalar(theta, s):
    """Q(s, .) with plain Python floats: the network of the notebook, one neuron at a time."""
    (w1, b1), (w2, b2), (w3, b3) = [(w.tolist(), b.tolist()) for w, b in unflatten(theta)]
    x = [math.sin(s), math.cos(s)]
    h1 = [math.cos(sum(w * xi for w, xi in zip(row, x)) + b) for row, b in zip(w1, b1)]
    h2 = [math.cos(sum(w * hi for w, hi in zip(row, h1)) + b) for row, b in zip(w2, b2)]
    return [sum(w * hi for w, hi in zip(row, h2)) + b for row, b in zip(w3, b3)]


def v_scalar(theta, s, task):
    q = q_scalar(theta, s)
    if task == "control":
        return max(q)
    plus = 0.5 + math.sin(s) / 5.0
    return (1 - plus) * q[0] + plus * q[1]


def j_scalar(theta, traj, m, s_next, task, reward=None):
    s, a = float(traj.states[m]), int(traj.action_indices[m])
    r = float(traj.rewards[m]) if reward is None else reward
    return r + GAMMA * v_scalar(theta, s_next, task) - q_scalar(theta, s)[a]


def alt_next_states(traj, starts, method, seed):
    """The second next state of each method, written out from its definition."""
    g = torch.Generator().manual_seed(seed)
    if method == "UR":
        z = torch.randn(len(starts), generator=g, dtype=torch.float64)
        return [float(traj.states[m]) + (2 * int(traj.action_indices[m]) - 1) * DYN.eps
                + DYN.sigma * math.sqrt(DYN.eps) * float(zi) for m, zi in zip(starts.tolist(), z)]
    if method == "BFF":
        return [float(traj.states[m] + traj.states[m + 2] - traj.states[m + 1]) for m in starts.tolist()]
    return [float(traj.states[m + 1]) for m in starts.tolist()]


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("method", ["DS", "UR", "BFF"])
def test_residual_pair_matches_scalar_arithmetic(small_trajectory, theta, task, method):
    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    starts = torch.tensor([0, 5, 17, 400])
    batch = make_batch(traj, starts, method, task, DYN, torch.Generator().manual_seed(3))
    q_main = forward(theta, batch.feats)
    q_next = None if batch.next_feats is None else forward(theta, batch.next_feats)
    j, j_hat = residual_pair(q_main, q_next, batch, GAMMA)
    alts = alt_next_states(traj, starts, method, 3)
    for i, m in enumerate(starts.tolist()):
        assert float(j[i]) == pytest.approx(j_scalar(theta, traj, m, float(traj.states[m + 1]), task), abs=1e-5)
        assert float(j_hat[i]) == pytest.approx(j_scalar(theta, traj, m, alts[i], task), abs=1e-5)
    expected_loss = sum(float(a) * float(b) for a, b in zip(j, j_hat)) / (2 * len(starts))
    assert float(cbo_loss(j, j_hat)) == pytest.approx(expected_loss, rel=1e-6)


def test_ur_policy_variant_draws_a_fresh_action(small_trajectory):
    """The notebook's UR draws a new action from the policy; ours reuses a_m unless asked."""
    traj = small_trajectory("uniform", n=5000, dynamics=dynamics(sigma=0.0))
    starts = torch.arange(4000)
    recorded = make_batch(traj, starts, "UR", "control", dynamics(sigma=0.0), torch.Generator().manual_seed(0))
    fresh = make_batch(traj, starts, "UR", "control", dynamics(sigma=0.0), torch.Generator().manual_seed(0),
                       ur_action="policy")
    # With sigma = 0, s^' = s + a*eps: the recorded action reproduces s' exactly, a fresh one half the time.
    assert torch.equal(recorded.feats[4000:], recorded.next_feats)
    same = (fresh.feats[4000:] == fresh.next_feats).all(dim=1).double().mean()
    assert 0.45 < float(same) < 0.55


def test_reward_of_next_pairs_the_alt_state_with_its_own_reward(small_trajectory):
    traj = small_trajectory("uniform", dynamics=dynamics(reward_of="next"))
    starts = torch.tensor([3, 9])
    batch = make_batch(traj, starts, "BFF", "control", dynamics(reward_of="next"), torch.Generator())
    s_alt = traj.states[starts] + traj.states[starts + 2] - traj.states[starts + 1]
    torch.testing.assert_close(batch.alt_rewards, (torch.sin(s_alt) + 1).float())
    torch.testing.assert_close(batch.rewards, (torch.sin(traj.states[starts + 1]) + 1).float())


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("method", ["DS", "UR", "BFF"])
def test_sgd_gradient_is_mean_of_j_times_grad_j_hat(small_trajectory, theta, task, method):
    """The hand-written backward pass equals autograd of mean(stop_grad(j) * j^) (the notebook's j^.backward(j))."""
    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    batch = make_batch(traj, torch.arange(0, 1500, 7), method, task, DYN, torch.Generator().manual_seed(1))
    q_main, cache = forward_cached(theta, batch.feats)
    q_next = None if batch.next_feats is None else forward_no_grad(theta, batch.next_feats)
    j, j_hat = residual_pair(q_main, q_next, batch, GAMMA)
    ours = backward(theta, cache, sgd_grad_q(j, q_main, batch, GAMMA))

    leaf = theta.clone().requires_grad_(True)
    j_ref, j_hat_ref = residual_pair(forward(leaf, batch.feats), q_next, batch, GAMMA)
    (reference,) = torch.autograd.grad((j_ref.detach() * j_hat_ref).mean(), leaf)
    torch.testing.assert_close(ours, reference, rtol=1e-5, atol=1e-6)


def test_ds_gradient_is_half_the_gradient_of_the_squared_residual(small_trajectory, theta):
    """For DS, mean(j grad j) = grad mean(j^2)/2: a finite-difference check in one direction."""
    traj = small_trajectory()
    batch = make_batch(traj, torch.arange(200), "DS", "evaluation", DYN, torch.Generator())
    q_main, cache = forward_cached(theta.double(), batch.feats.double())
    j, _ = residual_pair(q_main, None, batch, GAMMA)
    grad = backward(theta.double(), cache, sgd_grad_q(j, q_main, batch, GAMMA))
    direction = torch.randn(theta.shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)

    def loss(t):
        jj, _ = residual_pair(forward(t, batch.feats.double()), None, batch, GAMMA)
        return float((jj ** 2).mean() / 2)

    h = 1e-6
    numeric = (loss(theta.double() + h * direction) - loss(theta.double() - h * direction)) / (2 * h)
    assert float(grad @ direction) == pytest.approx(numeric, rel=1e-5)


def test_usable_starts():
    assert ESTIMATORS["DS"].usable_starts(10) == 9
    assert ESTIMATORS["UR"].usable_starts(10) == 9
    assert ESTIMATORS["BFF"].usable_starts(10) == 8
    assert ESTIMATORS["BFF-matched"].usable_starts(10) == 8


def test_unknown_estimator_is_refused(small_trajectory):
    with pytest.raises(ValueError, match="estimator must be one of"):
        make_batch(small_trajectory(), torch.arange(3), "TD", "control", DYN, torch.Generator())


def test_init_matches_torch_linear_bounds():
    theta = init_params(3, torch.Generator().manual_seed(0))
    (w1, b1), (w2, _), (w3, _) = unflatten(theta[0])
    assert w1.abs().max() <= 1 / math.sqrt(2) and b1.abs().max() <= 1 / math.sqrt(2)
    assert w2.abs().max() <= 1 / math.sqrt(50) and w3.abs().max() <= 1 / math.sqrt(50)
    assert not torch.equal(theta[0], theta[1])


def test_the_fast_cosine_and_sine_match_torchs_and_cos_works_in_place():
    """qnet.cos_ and qnet.sin take NumPy's vectorised kernels on the CPU: the same values as
    PyTorch's to float32 rounding, over the range the pre-activations span and beyond."""
    z = torch.linspace(-200.0, 200.0, 100_001)
    expected_cos, expected_sin = torch.cos(z.double()), torch.sin(z.double())
    got_sin = qnet.sin(z)
    buffer = z.clone()
    assert qnet.cos_(buffer) is buffer
    assert torch.allclose(buffer.double(), expected_cos, rtol=0, atol=2e-7)
    assert torch.allclose(got_sin.double(), expected_sin, rtol=0, atol=2e-7)
    needs_grad = z[:10].clone().requires_grad_()  # autograd keeps PyTorch's own kernels
    assert torch.allclose(qnet.sin(needs_grad), torch.sin(z[:10]))
