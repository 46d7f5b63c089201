import numpy as np
import pytest
import torch

from rlstudy.agents.episodes import make_env
from rlstudy.agents.nets import linear
from rlstudy.agents.tabular import Grid, TabularParams, linear_q_table, linear_q_update, make_grid_env, train_qtable
from rlstudy.core.errors import InputError
from shipped_params import shipped


@pytest.fixture
def grid():
    return Grid.of(shipped(TabularParams, "qtable", "params"))


def test_every_cell_centre_maps_back_to_its_cell(grid):
    cells = np.arange(grid.n_cells)
    centres = grid.centre(cells)
    assert centres.shape == (51 * 51, 2)
    assert [grid.cell(c) for c in centres] == cells.tolist()
    assert np.all(centres > grid.low) and np.all(centres < grid.high)


def test_edges_belong_to_the_first_and_last_cells(grid):
    assert grid.cell(grid.low) == 0
    assert grid.cell(grid.high) == grid.n_cells - 1
    assert grid.cell([-1.2 + 1.8 / 51 * 1.5, 0.0]) == 1 * 51 + 25  # second position cell, middle velocity


def test_reset_snaps_the_state_to_its_cell_centre():
    env = make_grid_env("MountainCar-v0", shipped(TabularParams, "qtable", "params"), "qtable")
    cell, _ = env.reset(seed=3)
    np.testing.assert_allclose(env.unwrapped.state, Grid.of(shipped(TabularParams, "qtable", "params")).centre(cell))


def test_leaving_the_grid_truncates_the_episode():
    params = shipped(TabularParams, "qtable", "params", velocity_range=(-0.001, 0.001))  # ten steps of full throttle leave it
    env = make_grid_env("MountainCar-v0", params, "qtable")
    env.reset(seed=0)
    _, reward, terminated, truncated, _ = env.step(2)
    assert truncated and not terminated
    assert reward == -10.0  # the ten repeated steps' rewards


def test_an_episode_lasts_at_most_max_steps():
    env = make_grid_env("MountainCar-v0", shipped(TabularParams, "qtable", "params", max_steps=3), "qtable")
    env.reset(seed=0)
    ends = [env.step(1)[3] for _ in range(3)]
    assert ends == [False, False, True]


def test_linear_network_table_is_its_weights_transposed():
    net = linear(4, 3, torch.Generator().manual_seed(0), bias=False)
    table = linear_q_table(net)
    with torch.no_grad():
        np.testing.assert_allclose(table, net(torch.eye(4)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("terminated", [False, True])
def test_one_linear_q_step_is_the_q_table_update(terminated):
    # Q(x=1, .) = [0, -2, 0], Q(x'=3, .) = [-1, -4, -3]; action 1, reward -10, gamma 0.5, lr 0.25:
    # target = -10 + 0.5 * max(-1, -4, -3) = -10.5 (or -10 when terminal),
    # Q(1, 1) <- -2 + 0.25 * (target + 2) = -4.125 (or -4.0); every other entry stays.
    net = linear(4, 3, torch.Generator(), bias=False)
    with torch.no_grad():
        net.weight.zero_()
        net.weight[1, 1] = -2.0
        net.weight[:, 3] = torch.tensor([-1.0, -4.0, -3.0])
    before = linear_q_table(net)
    optimiser = torch.optim.SGD(net.parameters(), lr=0.25)
    stats = linear_q_update(net, optimiser, 1, 1, -10.0, 3, terminated, gamma=0.5)
    after = linear_q_table(net)
    expected = before.copy()
    expected[1, 1] = -4.0 if terminated else -4.125
    np.testing.assert_allclose(after, expected)
    # the update's statistics, as the Q-table's: Q(1, 1) = -2 before the step, target -10.5 (-10)
    error = 8.0 if terminated else 8.5
    assert stats == pytest.approx({"loss_q": 0.5 * error ** 2, "q_mean": -2.0, "target_mean": -2.0 - error})


def test_qtable_training_is_reproducible_and_learns_something():
    params = shipped(TabularParams, "qtable", "params", episodes=5, max_steps=10)
    env = make_grid_env("MountainCar-v0", params, "qtable")
    q1, r1 = train_qtable(env, params, 7, np.random.default_rng(0))
    q2, r2 = train_qtable(env, params, 7, np.random.default_rng(0))
    np.testing.assert_array_equal(q1, q2)
    assert r1.frame().equals(r2.frame())
    assert (q1 < 0).any()  # rewards are -1 per underlying step: visited entries fall below zero
    assert r1.frame()["step"].tolist() == [10, 20, 30, 40, 50]


def test_bad_environments_are_refused_with_the_config_key():
    with pytest.raises(InputError, match="config 'dqn.env'.*NoSuchEnv"):
        make_env("NoSuchEnv-v0", object, "dqn")
    with pytest.raises(InputError, match="config 'qtable.env'.*Box action space"):
        make_grid_env("Pendulum-v1", shipped(TabularParams, "qtable", "params"), "qtable")
    with pytest.raises(InputError, match="config 'qtable.env'.*shape"):
        make_grid_env("CartPole-v1", shipped(TabularParams, "qtable", "params"), "qtable")
