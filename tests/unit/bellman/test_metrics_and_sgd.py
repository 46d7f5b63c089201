import math

import pytest
import torch

from rlstudy.bellman.learners.metrics import ErrorMeter, centred_error, grid, q_on_grid
from rlstudy.bellman.numerics.compiled.qnet import q_values
from rlstudy.bellman.learners.batching import start_lookup
from rlstudy.bellman.learners.sgd import SGDParams, epoch_batches, train_sgd
from rlstudy.core.errors import DivergenceError
from bellman_fixtures import PROBLEM


def test_centred_error_by_hand():
    q = torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 6.0], [2.0, 2.0]])
    ref = torch.zeros(4, 2)
    # Column means 2 and 2: centred columns (-1, 1, 0, 0) and (-2, -2, 4, 0); squared norm 2 + 24 = 26.
    assert centred_error(q, ref) == pytest.approx(math.sqrt(2 * math.pi / 4) * math.sqrt(26))


def test_error_ignores_a_constant_offset_per_action(theta):
    meter = ErrorMeter({"error": q_on_grid(theta)})
    shifted = theta.clone()
    shifted[-2:] += torch.tensor([5.0, -3.0])  # output biases
    assert meter(theta) == {"error": 0.0}
    assert meter(shifted)["error"] == pytest.approx(0.0, abs=1e-5)


def test_a_meter_measures_against_each_reference(theta):
    other = q_on_grid(theta) + torch.linspace(0, 1, 100).view(-1, 1)  # a ramp in s, the same on both actions
    errors = ErrorMeter({"error": q_on_grid(theta), "error_exact": other})(theta)
    # the centred ramp: values i/99 - 1/2 on both columns; sqrt(2 pi / 100) * norm
    ramp = torch.linspace(0, 1, 100, dtype=torch.float64) - 0.5
    assert errors["error"] == 0.0
    assert errors["error_exact"] == pytest.approx(math.sqrt(2 * math.pi / 100) * math.sqrt(2 * float(ramp @ ramp)), rel=1e-6)


def test_error_grid_has_100_points_whatever_the_dataset(theta):
    """The notebook's CBO code overwrote the grid size with the dataset size."""
    meter = ErrorMeter({"error": q_on_grid(theta)})
    assert meter.feats.shape == (100, 2) and meter.n == 100
    g = grid()
    assert float(g[0]) == 0.0 and float(g[-1]) == pytest.approx(2 * math.pi * 99 / 100)


def test_epoch_batches_carry_the_remainder():
    g = torch.Generator().manual_seed(0)
    batches, rest = epoch_batches(10, 4, torch.empty(0, dtype=torch.long), g)
    assert len(batches) == 2 and len(rest) == 2
    batches2, rest2 = epoch_batches(10, 4, rest, g)
    assert len(batches2) == 3 and len(rest2) == 0
    assert torch.equal(batches2[0][:2], rest)  # the leftovers come first
    assert sorted(torch.cat(batches + [rest]).tolist()) == list(range(10))


def test_a_start_is_the_pools_entry_at_its_position_and_a_whole_pools_position_is_its_start():
    positions = torch.tensor([3, 0, 2])
    whole = start_lookup(torch.arange(5))
    assert whole(positions) is positions  # 0..n-1: no gather
    filtered = start_lookup(torch.tensor([0, 2, 5, 6]))  # BFF-matched's kind: some starts left out
    assert filtered(positions).tolist() == [6, 0, 5]
    assert start_lookup(torch.tensor([1, 2, 3]))(torch.tensor([0, 2])).tolist() == [1, 3]  # n entries, not from 0
    assert start_lookup(torch.empty(0, dtype=torch.long))(torch.empty(0, dtype=torch.long)).numel() == 0


def test_one_sgd_step_is_theta_minus_lr_times_mean_j_grad_j_hat(small_trajectory, theta):
    traj = small_trajectory(n=101)  # 100 usable DS transitions: one epoch is one batch of all of them
    params = SGDParams(epochs=1, batch_size=100, lr0=0.2, lr_decay=0.5, ur_action="recorded")
    final, history = train_sgd(theta, traj, "DS", "control", params, PROBLEM, torch.Generator())
    leaf = theta.clone().requires_grad_(True)
    s, s_next = traj.states[:100], traj.states[1:101]
    q = q_values(leaf, s).gather(1, traj.action_indices[:100].view(-1, 1)).squeeze(1)
    j = traj.rewards[:100].float() + 0.9 * q_values(leaf, s_next).max(dim=1).values - q
    loss = (j ** 2).mean() / 2
    (grad,) = torch.autograd.grad(loss, leaf)  # the batch order does not matter for a mean
    torch.testing.assert_close(final, theta - 0.2 * grad, rtol=1e-5, atol=1e-6)
    assert history.lr == [pytest.approx(math.nan, nan_ok=True), 0.2]
    assert history.loss[1] == pytest.approx(loss.item(), rel=1e-5)
    # DS evaluates Q at s and s' (2 rows) and backpropagates through both (2 x 2): 6 per transition.
    assert history.evaluations == [0, 600]


def test_sgd_divergence_fails_loudly(small_trajectory, theta):
    params = SGDParams(epochs=5, batch_size=500, lr0=1e6, lr_decay=1.0, ur_action="recorded")
    with pytest.raises(DivergenceError, match="diverged at iteration"):
        train_sgd(theta, small_trajectory(), "UR", "control", params, PROBLEM, torch.Generator())


def test_batch_larger_than_the_data_is_refused(small_trajectory, theta):
    with pytest.raises(ValueError, match="batch_size"):
        train_sgd(theta, small_trajectory(n=100), "DS", "control", SGDParams(1, 1000, 0.1, 1.0, "recorded"), PROBLEM,
                  torch.Generator())
