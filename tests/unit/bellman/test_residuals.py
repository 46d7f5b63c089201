"""DS, UR and BFF residuals and SGD's gradient against scalar, hand-written arithmetic."""

import math

import numpy as np
import pytest
import torch

from rlstudy.bellman.numerics.compiled import qnet, trig
from rlstudy.bellman.numerics.compiled.qnet import backward, forward, forward_cached, forward_no_grad, init_params, unflatten
from rlstudy.bellman.estimators import ESTIMATORS
from rlstudy.bellman.numerics.loss import bellman_loss
from rlstudy.bellman.numerics.compiled.residuals import (gather_rows, gather_rows_by_tensors, make_batch, residual_pair,
                                                         sgd_grad_q, start_pool)
from bellman_fixtures import PROBLEM, dynamics

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


def alt_next_states(traj, starts, estimator, seed):
    """The second next state of each estimator, written out from its definition."""
    g = torch.Generator().manual_seed(seed)
    if estimator == "UR":
        z = torch.randn(len(starts), generator=g, dtype=torch.float64)
        return [float(traj.states[m]) + (2 * int(traj.action_indices[m]) - 1) * DYN.dt
                + DYN.sigma * math.sqrt(DYN.dt) * float(zi) for m, zi in zip(starts.tolist(), z)]
    if estimator == "BFF":
        return [float(traj.states[m] + traj.states[m + 2] - traj.states[m + 1]) for m in starts.tolist()]
    return [float(traj.states[m + 1]) for m in starts.tolist()]


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("estimator", ["DS", "UR", "BFF"])
def test_residual_pair_matches_scalar_arithmetic(small_trajectory, theta, task, estimator):
    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    starts = torch.tensor([0, 5, 17, 400])
    batch = make_batch(traj, starts, estimator, task, DYN, torch.Generator().manual_seed(3))
    q_main = forward(theta, batch.feats)
    q_next = None if batch.next_feats is None else forward(theta, batch.next_feats)
    j, j_hat = residual_pair(q_main, q_next, batch, GAMMA)
    alts = alt_next_states(traj, starts, estimator, 3)
    for i, m in enumerate(starts.tolist()):
        assert float(j[i]) == pytest.approx(j_scalar(theta, traj, m, float(traj.states[m + 1]), task), abs=1e-5)
        assert float(j_hat[i]) == pytest.approx(j_scalar(theta, traj, m, alts[i], task), abs=1e-5)
    expected_loss = sum(float(a) * float(b) for a, b in zip(j, j_hat)) / (2 * len(starts))
    assert float(bellman_loss(j, j_hat)) == pytest.approx(expected_loss, rel=1e-6)


def test_ur_policy_variant_draws_a_fresh_action(small_trajectory):
    """The notebook's UR draws a new action from the policy; ours reuses a_m unless asked."""
    traj = small_trajectory("uniform", n=5000, dynamics=dynamics(sigma=0.0))
    starts = torch.arange(4000)
    recorded = make_batch(traj, starts, "UR", "control", dynamics(sigma=0.0), torch.Generator().manual_seed(0))
    fresh = make_batch(traj, starts, "UR", "control", dynamics(sigma=0.0), torch.Generator().manual_seed(0),
                       ur_action="policy")
    # With sigma = 0, s^' = s + a*dt: the recorded action reproduces s' exactly, a fresh one half the time.
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
@pytest.mark.parametrize("estimator", ["DS", "UR", "BFF"])
def test_sgd_gradient_is_mean_of_j_times_grad_j_hat(small_trajectory, theta, task, estimator):
    """The hand-written backward pass equals autograd of mean(stop_grad(j) * j^) (the notebook's j^.backward(j))."""
    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    batch = make_batch(traj, torch.arange(0, 1500, 7), estimator, task, DYN, torch.Generator().manual_seed(1))
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


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("estimator", list(ESTIMATORS))
def test_a_batch_gathered_from_the_packed_rows_has_each_arrays_bits(small_trajectory, task, estimator):
    """make_batch reads each transition from one row of TrajectoryTensors.transitions: its states,
    actions, rewards and features are bit for bit those indexed from the trajectory's own arrays, at
    random starts and at the last usable one (the row that reads s_{m+2} at the trajectory's end)."""
    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    pool = start_pool(estimator, traj.action_indices)
    starts = torch.cat([pool[torch.randperm(len(pool), generator=torch.Generator().manual_seed(4))[:200]], pool[-1:]])
    batch = make_batch(traj, starts, estimator, task, DYN, torch.Generator().manual_seed(5))
    m = len(starts)
    assert torch.equal(batch.action_indices, traj.action_indices[starts])
    assert torch.equal(batch.rewards, traj.rewards[starts].float())
    assert torch.equal(batch.feats[:m], traj.features[starts])
    expected_next = traj.features[starts + 1]
    assert torch.equal(batch.feats[m:] if estimator == "DS" else batch.next_feats, expected_next)
    if estimator.startswith("BFF"):
        borrowed = traj.states[starts] + (traj.states[starts + 2] - traj.states[starts + 1])
        assert torch.equal(batch.feats[m:], qnet.features(borrowed))
    if task == "evaluation":
        plus = 0.5 + expected_next[:, 0] / 5.0
        assert torch.equal(batch.next_probs, torch.stack([1.0 - plus, plus], dim=-1))


def test_the_compiled_gather_gives_the_tensor_gathers_bits(small_trajectory):
    """On the CPU a batch's rows come from one compiled pass, on another device from PyTorch's gather
    (residuals.gather_rows): the same values, dtypes and shapes, so a run on either keeps its batches."""
    traj = small_trajectory("uniform")
    starts = torch.cat([torch.randperm(len(traj.states) - 2, generator=torch.Generator().manual_seed(6))[:300],
                        torch.tensor([len(traj.states) - 1])])  # the last row: NaN past the end
    compiled, tensors = gather_rows(traj.transitions, starts), gather_rows_by_tensors(traj.transitions, starts)
    for name in ("s", "ahead", "action_indices", "rewards", "feats"):
        ours, theirs = getattr(compiled, name), getattr(tensors, name)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, name
        assert torch.equal(ours.nan_to_num(7.0), theirs.nan_to_num(7.0)), name
    assert compiled.ahead[-1].isnan().all() and not compiled.ahead[:-1].isnan().any()
    for outside in (-1, len(traj.states)):  # refused as PyTorch's gather refuses it, not read past the table
        with pytest.raises(IndexError):
            gather_rows(traj.transitions, torch.tensor([0, outside]))


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


def test_the_compiled_cosine_and_sine_match_float64_within_float32_rounding():
    """trig.cos and trig.sincos against the float64 functions over the range the pre-activations span
    (and up to LIMIT): within 2e-7 absolute, as NumPy's float32 cosine (7e-8) and PyTorch's are."""
    z = np.linspace(-trig.LIMIT, trig.LIMIT, 400_001, dtype=np.float32)[:-1]
    z = np.concatenate([z, np.linspace(-7.0, 7.0, 100_000, dtype=np.float32), np.float32([0.0, -0.0])])
    cosine = trig.cos(z)
    sine, cosine2 = trig.sincos(z)
    assert cosine.dtype == sine.dtype == np.float32
    assert np.array_equal(cosine, cosine2)
    assert np.array_equal(trig.sincos(z, negate_sine=True)[0], -sine)
    assert np.abs(cosine - np.cos(z.astype(np.float64))).max() < 2e-7
    assert np.abs(sine - np.sin(z.astype(np.float64))).max() < 2e-7
    assert np.isnan(trig.cos(np.float32([np.nan, np.inf, -np.inf]))).all()


def test_the_compiled_kernels_give_the_same_bits_on_every_call_and_shape():
    """No state and no reassociation: an element's value does not depend on the call, on its position
    in the array (vector lanes or the loop's scalar tail) or on the array's length."""
    z = (np.random.default_rng(3).standard_normal(10_007) * 4).astype(np.float32)
    first = trig.cos(z)
    assert np.array_equal(first, trig.cos(z.copy()))
    assert np.array_equal(first[5:], trig.cos(z[5:].copy()))
    assert np.array_equal(first[:13], trig.cos(z[:13].copy()))
    assert np.array_equal(trig.sincos(z)[1], first)


def test_the_network_takes_the_compiled_passes_only_where_the_weights_bound_the_arguments():
    """Within LIMIT the passes use trig's kernels; weights that allow |z| >= LIMIT, or NaN, fall back
    to torch's cosine (exact for large arguments, NaN for NaN), as do autograd and float64."""
    gen = torch.Generator().manual_seed(12)
    theta = init_params(1, gen)[0]
    feats = qnet.features(torch.rand(300, generator=gen, dtype=torch.float64) * 7)
    assert qnet.Network(theta).layers is not None
    big = theta.clone()
    unflatten(big)[1][0].mul_(1e4)  # the hidden layer's weights: |z2| may pass LIMIT
    assert qnet.Network(big).layers is None
    assert torch.equal(forward_no_grad(big, feats), forward(big, feats))
    nan = theta.clone()
    unflatten(nan)[0][1][0] = float("nan")
    assert qnet.Network(nan).layers is None
    assert forward_no_grad(nan, feats).isnan().any()
    assert qnet.Network(theta.clone().requires_grad_()).layers is None
    assert qnet.Network(theta.double()).layers is None
    assert qnet._compiled_layers(qnet.Network(theta), feats.double()) is None
    w, b = torch.rand(50, 50) - 0.5, torch.rand(50) - 0.5
    nan_b = b.clone()
    nan_b[0] = float("nan")
    assert not trig.bounded(w.numpy(), nan_b.numpy())
    assert trig.bounded(np.ones((2, 3), np.float32), np.float32([1.0, 8190.0])) is False  # 8193 > LIMIT
    assert trig.bounded(np.ones((2, 3), np.float32), np.float32([1.0, 8188.0])) is True


def test_the_compiled_forward_matches_the_previous_kernels_within_float32_tolerance():
    """forward_no_grad with the compiled passes, and trig's layer pass with its derivative (SGD's compiled
    call), against the same network with NumPy's cosine and sine (the kernels before trig.py): Q and the
    derivatives within float32 tolerance."""
    gen = torch.Generator().manual_seed(11)
    theta = init_params(1, gen)[0]
    feats = qnet.features(torch.rand(5000, generator=gen, dtype=torch.float64) * 20 - 10)
    (w1, b1), (w2, b2), (w3, b3) = unflatten(theta)
    z1 = torch.addmm(b1, feats, w1.t()).numpy()
    h1 = torch.from_numpy(np.cos(z1))
    z2 = torch.addmm(b2, h1, w2.t()).numpy()
    expected = torch.addmm(b3, torch.from_numpy(np.cos(z2)), w3.t())
    assert torch.allclose(forward_no_grad(theta, feats), expected, rtol=1e-5, atol=1e-6)
    kern, x, none = trig.kernels(), feats.float().numpy(), np.empty((0, 0), np.float32)
    h1, dcos1, h2, dcos2 = (np.empty((len(x), 50), np.float32) for _ in range(4))
    kern.cos_layer(x, np.ascontiguousarray(w1.numpy().T), b1.numpy(), none, dcos1, h1)
    kern.cos_layer(none, none, b2.numpy(), h1 @ w2.numpy().T, dcos2, h2)
    assert np.allclose(h1, np.cos(z1), rtol=0, atol=2e-7)
    assert np.allclose(dcos1, -np.sin(z1), rtol=0, atol=2e-7)
    assert np.allclose(dcos2, -np.sin(z2), rtol=0, atol=1e-5)  # z2 carries h1's last bits


def test_sgds_compiled_mini_batch_is_within_float32_rounding_of_the_float64_gradient(small_trajectory):
    """SGD's compiled mini-batch (residual_kernels.py: bias sums and the narrow layers' products in float64,
    the 50x50 products by BLAS) against autograd in float64 (DS: mean(j grad j) = grad mean(j^2)/2), block
    by block of parameters: within float32 rounding, and no farther than PyTorch's own float32 path
    (forward_cached and backward, the kernels before)."""
    from rlstudy.bellman.numerics.compiled import backend as compiled

    theta = init_params(1, torch.Generator().manual_seed(13))[0] * 3
    assert qnet.Network(theta).layers is not None  # the compiled call runs
    batch = make_batch(small_trajectory(n=20_001), torch.arange(20_000), "DS", "evaluation", DYN, torch.Generator())
    fused = compiled.sgd_direction(theta, batch, GAMMA)[0]
    q_main, cache = forward_cached(theta, batch.feats)
    library = backward(theta, cache, sgd_grad_q(residual_pair(q_main, None, batch, GAMMA)[0], q_main, batch, GAMMA))
    leaf = theta.double().requires_grad_(True)
    j, _ = residual_pair(forward(leaf, batch.feats.double()), None, batch, GAMMA)
    (truth,) = torch.autograd.grad((j ** 2).mean() / 2, leaf)
    offset = 0
    for fan_in, fan_out in qnet.SHAPE.layers:
        for size in (fan_in * fan_out, fan_out):
            block = slice(offset, offset + size)
            offset += size
            scale = truth[block].abs().max()
            ours = float((fused[block].double() - truth[block]).abs().max() / scale)
            before = float((library[block].double() - truth[block]).abs().max() / scale)
            assert ours < 2e-6 and ours <= max(before, 1e-6), (size, ours, before)


def test_an_sgd_run_repeats_bit_for_bit_with_the_compiled_kernels(small_trajectory, theta):
    """Two SGD runs of the same seed (sines and cosines by trig.py, every estimator's rows) end on the
    same bits, with the same losses."""
    from rlstudy.bellman.learners.sgd import SGDParams, train_sgd

    traj = small_trajectory(n=3000)
    params = SGDParams(epochs=2, batch_size=500, lr0=0.5, lr_decay=0.9, ur_action="recorded")
    for estimator in ("DS", "UR"):
        runs = [train_sgd(theta, traj, estimator, "evaluation", params, PROBLEM, torch.Generator().manual_seed(4))
                for _ in range(2)]
        assert torch.equal(runs[0][0], runs[1][0])
        assert runs[0][1].loss == runs[1][1].loss


@pytest.mark.parametrize("task", ["evaluation", "control"])
@pytest.mark.parametrize("estimator", ["DS", "UR", "BFF", "BFF-matched"])
def test_a_mini_batch_in_parts_gives_the_whole_batchs_gradient(small_trajectory, theta, task, estimator, monkeypatch):
    """compiled.sgd_direction by parts of uneven size (7 transitions, the last part shorter) against one
    pass over the whole mini-batch: j, j^, Q(s, a) and the gradient within float32 rounding (BLAS
    rounds a row's product differently with the number of rows around it)."""
    from rlstudy.bellman.numerics.compiled import backend as compiled

    traj = small_trajectory("evaluation" if task == "evaluation" else "uniform")
    starts = start_pool(estimator, traj.action_indices)[:100]
    batch = make_batch(traj, starts, estimator, task, DYN, torch.Generator().manual_seed(5))
    whole = compiled.sgd_direction(theta, batch, GAMMA)
    monkeypatch.setattr(compiled, "TRANSITIONS_PER_PASS", 7)
    parts = compiled.sgd_direction(theta, batch, GAMMA)
    for ours, reference in zip(parts[1:], whole[1:]):
        torch.testing.assert_close(ours, reference, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(parts[0], whole[0], rtol=1e-5, atol=1e-6)


def test_a_mini_batch_bounds_the_network_once_not_once_per_part(small_trajectory, theta, monkeypatch):
    """The compiled passes' bound reads every weight: compiled.sgd_direction checks it once per cosine layer
    for the whole mini-batch (it cost several per cent of an SGD run when every part of the batch, forward
    and next states, checked it again), and the gradient is the same either way (within float32
    rounding: the mini-batch's fused pass sums its parts in float64, the calls here in float32)."""
    from rlstudy.bellman.numerics.compiled import backend as compiled

    traj = small_trajectory("uniform")
    batch = make_batch(traj, start_pool("UR", traj.action_indices)[:100], "UR", "control", DYN,
                       torch.Generator().manual_seed(5))
    monkeypatch.setattr(compiled, "TRANSITIONS_PER_PASS", 7)
    calls = []
    bounded = trig.bounded
    monkeypatch.setattr(trig, "bounded", lambda weight, bias: calls.append(1) or bounded(weight, bias))
    grad = compiled.sgd_direction(theta, batch, GAMMA)[0]
    assert len(calls) == 2  # not once per part and pass (15 parts, forward and next states)
    per_call = torch.zeros_like(theta)
    for start in range(0, 100, 7):
        part = batch.transitions(start, min(start + 7, 100))
        q_main, cache = forward_cached(theta, part.feats)  # a bare vector: bounded again at each call
        q_next = forward_no_grad(theta, part.next_feats)
        per_call += backward(theta, cache, sgd_grad_q(residual_pair(q_main, q_next, part, GAMMA)[0], q_main, part,
                                                      GAMMA, batch_size=100))
    torch.testing.assert_close(grad, per_call, rtol=1e-6, atol=1e-7)


def test_the_output_bias_added_a_column_at_a_time_is_numpys_broadcast():
    rng = np.random.default_rng(2)
    q, bias = rng.standard_normal((301, 2), np.float32), rng.standard_normal(2, np.float32)
    expected = q + bias
    qnet._add_bias(q, bias)
    assert q.tobytes() == expected.tobytes()
