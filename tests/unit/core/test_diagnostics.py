"""Training diagnostics: the window means, a value of each learner family by hand, the shared
figure, and that computing them changes nothing in a run."""

import math
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.agents import ddpg, dqn, tabular
from rlstudy.agents.ddpg import DDPGParams
from rlstudy.agents.dqn import DQNParams
from rlstudy.agents.tabular import TabularParams
from rlstudy.agents.replay import ReplayBuffer
from rlstudy.bellman.learners import sgd
from rlstudy.bellman.learners.cbo import CBOParams, initial_swarm, train_cbo
from rlstudy.core.diagnostics import DiagnosticsLog, grad_norm, td_statistics
from rlstudy.offline import bcq, double_dqn
from rlstudy.offline.double_dqn import DQN, LearnerParams
from rlstudy.offline.envs import EnvInfo
from rlstudy.plotting.diagnostics_figure import DiagnosticsRun, columns_of, diagnostics_figure
from bellman_fixtures import PROBLEM
from shipped_params import shipped

pytestmark = pytest.mark.usefixtures("one_thread")
DOCS = Path(__file__).resolve().parents[3] / "docs" / "diagnostics.md"


# ---------------------------------------------------------------- the log


def test_a_row_holds_the_windows_means_then_the_running_values():
    log = DiagnosticsLog()
    log.add({"loss_q": 1.0, "q_mean": 2.0})
    log.add({"loss_q": 3.0, "q_mean": 4.0, "loss_policy": -5.0})  # an actor update every other step
    assert len(log) == 2
    log.write("step", 100, skipped=0)
    log.write("step", 150)  # an empty window writes no row
    log.add({"loss_q": float("nan"), "q_mean": 6.0})
    log.write("step", 200, skipped=1)
    frame = log.frame()
    assert list(frame.columns) == ["step", "loss_q", "q_mean", "loss_policy", "skipped"]
    assert frame["step"].tolist() == [100, 200]
    assert frame.iloc[0][["loss_q", "q_mean", "loss_policy", "skipped"]].tolist() == [2.0, 3.0, -5.0, 0]
    assert math.isnan(frame.iloc[1]["loss_q"]) and frame.iloc[1]["q_mean"] == 6.0  # non-finite kept as is
    assert math.isnan(frame.iloc[1]["loss_policy"]) and len(log) == 0


def test_a_windows_means_are_pandas_means_bit_for_bit():
    """window_means (the log's rows, without a DataFrame per row) gives what DataFrame(window).mean()
    gave before it: the same float64 sums, NaN skipped, a statistic some updates lack, infinities."""
    from rlstudy.core.diagnostics import window_means

    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 8, 9, 16, 17, 100, 257, 1000):
        window = [{"loss": float(rng.normal() * 10.0 ** rng.integers(-8, 8)), "ess": float(rng.random())}
                  for _ in range(size)]
        for stats in window[::3]:
            stats["actor"] = float(rng.normal())
        window[size // 2]["loss"] = float("nan")
        if size > 8:
            window[3]["ess"] = float("inf")
        expected = {name: float(value) for name, value in pd.DataFrame(window).mean().items()}
        ours = window_means(window)
        assert list(ours) == list(expected)
        assert np.array(list(ours.values())).tobytes() == np.array(list(expected.values())).tobytes(), size
    assert math.isnan(window_means([{"loss": float("nan")}])["loss"])
    for value in (-0.0, 0.0, 3, float("inf"), float("-inf"), 1e-310):  # a window of one update: its own path
        window = [{"loss": value, "ess": float("nan")}]
        expected = np.array(pd.DataFrame(window).mean().to_numpy(dtype=np.float64))
        assert np.array(list(window_means(window).values())).tobytes() == expected.tobytes(), value


def test_a_restored_log_continues_after_the_rows_it_was_given():
    first = DiagnosticsLog()
    first.add({"loss_q": 1.0})
    first.write("iteration", 10)
    resumed = DiagnosticsLog()
    resumed.restore(first.rows, "iteration", 10)
    resumed.add({"loss_q": 3.0})
    resumed.write("iteration", 20)
    assert resumed.frame().to_dict("list") == {"iteration": [10, 20], "loss_q": [1.0, 3.0]}


def test_tensorboard_needs_its_extra_or_says_so(tmp_path):
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        with pytest.raises(Exception, match=r"pip install -e '\.\[tensorboard\]'"):
            DiagnosticsLog(tmp_path)
    else:
        DiagnosticsLog(tmp_path).close()


def test_tensorboard_event_files_hold_the_rows(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = DiagnosticsLog(tmp_path)
    for step, values in ((500, (1.0, 3.0)), (1000, (0.5, 0.25))):
        for value in values:
            log.add({"loss_q": value})
        log.write("step", step, skipped_nonfinite_batches=step // 500)
    log.close()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("diagnostics/loss_q")] == [(500, 2.0), (1000, 0.375)]
    assert [e.value for e in events.Scalars("diagnostics/skipped_nonfinite_batches")] == [1.0, 2.0]


# ---------------------------------------------------------------- values by hand


def test_td_statistics_and_gradient_norm_by_hand():
    stats = td_statistics(torch.tensor(0.75), torch.tensor([1.0, 5.0, 3.0]), torch.tensor([2.0, 2.0, 8.0]))
    assert stats == {"loss_q": 0.75, "q_mean": 3.0, "q_max": 5.0, "target_mean": 4.0}
    layer = torch.nn.Linear(2, 1)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 2.0]]))
        layer.bias.zero_()
    layer(torch.tensor([[3.0, 4.0]])).sum().backward()  # d/dw = (3, 4), d/db = 1
    assert grad_norm(layer.parameters()) == pytest.approx(math.sqrt(9 + 16 + 1))
    assert grad_norm(torch.nn.Linear(2, 1).parameters()) == 0.0  # before any backward


def test_dqn_buffer_composition_by_hand():
    buffer = ReplayBuffer(3, (4,), (), np.int64)
    buffer.add([0.1, -1.0, 0.02, 0.0], 0, 1.0, [0.0] * 4, False)
    buffer.add([-0.3, 1.0, -0.06, 2.0], 1, 1.0, [0.0] * 4, True)
    # the two transitions held, not the buffer's empty third row
    assert dqn.buffer_composition(buffer) == pytest.approx({
        "buffer_terminal_share": 0.5, "buffer_abs_obs_0": 0.2, "buffer_abs_obs_1": 1.0, "buffer_abs_obs_2": 0.04,
        "buffer_abs_obs_3": 1.0})


def test_dqn_rows_average_the_measured_updates_of_each_window():
    # updates at steps 35, 40, ..., 295 (after 10 % of 300 steps, every 5th); every 10th update is
    # measured (steps 50, 100, ..., 250); rows every 100 steps, with the buffer then (all transitions)
    params = shipped(DQNParams, "dqn", "params", total_steps=300, learning_starts=0.1, train_every=5, target_every=50, log_every=100,
                           hidden=(8,))
    log = DiagnosticsLog()
    _, returns = dqn.train_dqn(gym.make("CartPole-v1"), params, 3, np.random.default_rng(0),
                               torch.Generator().manual_seed(0), log)
    frame = log.frame()
    assert frame["step"].tolist() == [100, 200, 300]
    for row, steps in zip(frame.itertuples(), ([50], [100, 150], [200, 250])):
        assert row.epsilon == pytest.approx(np.mean([dqn.epsilon_at(s, params) for s in steps]))
    assert (frame["q_max"] >= frame["q_mean"]).all() and (frame["grad_norm"] > 0).all()
    # CartPole ends every episode it does not truncate in a terminal transition: one per episode
    episodes_by = [int((returns.frame()["step"] <= step).sum()) for step in (100, 200, 300)]
    assert frame["buffer_terminal_share"].tolist() == pytest.approx([n / s for n, s in zip(episodes_by, (100, 200, 300))])


def test_ddpg_rows_by_hand():
    # Pendulum's torque lies in [-2, 2]: exploration noise 0.1 of the half-range, 0.2; 130 random steps
    # first, then a critic update every step and an actor update every 2nd, rows every 100 steps
    log = DiagnosticsLog()
    RUNS["ddpg"](log)
    frame = log.frame()
    assert frame["step"].tolist() == [200, 260]  # no update before step 131: no row at 100
    # measured: steps 140, 150, ..., 250 (every 10th), each also an actor step (every 2nd)
    assert frame["exploration_noise"].tolist() == pytest.approx([0.2, 0.2])
    assert (frame["q_max"] >= frame["q_mean"]).all() and (frame["grad_norm_policy"] > 0).all()


def test_mpo_update_reports_the_duals_it_leaves():
    from mpo_fixtures import random_batch, tiny_agent

    from rlstudy.agents.mpo.losses import dual_value
    agent = tiny_agent()
    stats = agent.update(random_batch())
    # the duals step before the M-step, which uses (and reports) them; nothing moves them after
    assert stats["temperature"] == pytest.approx(float(dual_value(agent.log_temperature.detach().numpy())[0]))
    assert stats["alpha_mean"] == pytest.approx(float(dual_value(agent.log_alpha_mean.detach().numpy())[0].mean()))
    assert stats["alpha_std"] == pytest.approx(float(dual_value(agent.log_alpha_std.detach().numpy())[0].mean()))
    assert stats["q_min"] <= stats["q_mean"] <= stats["q_max"]


def test_offline_dqn_update_statistics_are_its_loss_q_and_targets():
    torch.manual_seed(0)
    info = EnvInfo("CartPole-v1", False, (4,), 1, 3, False)
    learner = DQN(info, shipped(LearnerParams, "offline", "regular", gamma=0.5), torch.device("cpu"))
    g = torch.Generator().manual_seed(1)
    batch = double_dqn.Batch(torch.randn(8, 4, generator=g), torch.randint(0, 3, (8,), generator=g),
                             torch.randn(8, generator=g), torch.randn(8, 4, generator=g), torch.ones(8))
    with torch.no_grad():
        q = learner.network(batch.states)[torch.arange(8), batch.actions]
        next_actions = learner.network(batch.next_states).argmax(1)
        target = batch.rewards + 0.5 * learner.target(batch.next_states)[torch.arange(8), next_actions]
    stats = learner.update(batch)
    assert stats["loss_q"] == pytest.approx(torch.nn.functional.smooth_l1_loss(q, target).item())
    assert (stats["q_mean"], stats["q_max"], stats["target_mean"]) == pytest.approx(
        (q.mean().item(), q.max().item(), target.mean().item()))
    assert stats["grad_norm"] > 0


def test_an_sgd_steps_statistics_by_hand():
    # two transitions: Q(s, a) at their actions 2 and 3
    q_taken = torch.tensor([2.0, 3.0])
    j = torch.tensor([0.5, -1.0])  # r + gamma V(s') - Q(s, a): targets 2.5 and 2.0
    stats = sgd.step_statistics(torch.tensor(0.1), j, q_taken, torch.tensor([3.0, 4.0]), 0.05)
    assert stats == pytest.approx({"loss_q": 0.1, "q_mean": 2.5, "q_max": 3.0, "target_mean": 2.25,
                                   "grad_norm": 5.0, "lr": 0.05})


def test_sgd_rows_are_epochs(small_trajectory, theta):
    params = sgd.SGDParams(epochs=3, batch_size=500, lr0=0.1, lr_decay=0.5, ur_action="recorded")
    _, history = sgd.train_sgd(theta, small_trajectory(), "DS", "control", params, PROBLEM, torch.Generator())
    frame = history.diagnostics
    # 1999 usable transitions: 3 batches in epoch 0, 4 in 1 (with the carried-over rest), 4 in 2
    assert frame["iteration"].tolist() == [3, 7, 11]
    assert frame["lr"].tolist() == pytest.approx([0.1, 0.05, 0.025])
    assert frame["loss_q"].tolist() == pytest.approx([np.mean(history.loss[1:4]), np.mean(history.loss[4:8]),
                                                      np.mean(history.loss[8:12])])


def test_cbo_rows_are_its_steps_when_every_particle_moves_every_step(small_trajectory):
    p = CBOParams(particles=6, particle_batch=6, samples=200, epochs=4, lam=1.0, eta=0.25, noise=1.0, beta=10.0,
                  ur_action="recorded", output_bias_init="default", kick=0.2, kick_decay=0.5, ess_target=0.0)
    g = torch.Generator().manual_seed(5)
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "UR", "control", p, PROBLEM, g)
    frame = history.diagnostics
    assert frame["iteration"].tolist() == [1, 2, 3, 4]
    for column in ("ess", "beta", "spread"):
        assert frame[column].tolist() == getattr(history, column)[1:]
    assert frame["loss_consensus"].tolist() == history.loss[1:]
    assert frame["exploration_noise"].tolist() == pytest.approx([0.2 * 0.5 ** k * 0.5 for k in range(4)])
    # weights fall with the loss: the weighted mean lies between the best particle's loss and the plain mean
    assert (frame["loss_min"] <= frame["loss_consensus"]).all()
    assert (frame["loss_consensus"] <= frame["loss_mean"] + 1e-12).all()


# ---------------------------------------------------------------- computing them changes nothing


def _no_statistics(monkeypatch, *modules):
    for module in modules:
        for name, replacement in (("td_statistics", lambda *a: {}), ("grad_norm", lambda p: 0.0),
                                  ("buffer_composition", lambda b: {}), ("step_statistics", lambda *a: {})):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, replacement)


def _same_state(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


RUNS = {
    "dqn": lambda log=None: dqn.train_dqn(
        gym.make("CartPole-v1"), shipped(DQNParams, "dqn", "params", total_steps=300, learning_starts=0.1, train_every=5, target_every=50,
                                               log_every=100),
        3, np.random.default_rng(0), torch.Generator().manual_seed(0), log),
    "ddpg": lambda log=None: ddpg.train_ddpg(
        gym.make("Pendulum-v1"), shipped(DDPGParams, "ddpg", "params", total_steps=260, batch_size=32, hidden=(16, 16), random_fraction=0.5,
                                                 log_every=100),
        3, np.random.default_rng(0), torch.Generator().manual_seed(0), log),
}


@pytest.mark.parametrize("name", RUNS)
def test_computing_the_statistics_changes_nothing_in_an_agents_run(name, monkeypatch):
    model, returns = RUNS[name]()
    _no_statistics(monkeypatch, dqn, ddpg)
    bare_model, bare_returns = RUNS[name]()
    assert returns.frame().equals(bare_returns.frame()) and _same_state(model, bare_model)


def test_computing_the_statistics_changes_nothing_in_offline_updates(monkeypatch):
    info = EnvInfo("CartPole-v1", False, (4,), 1, 3, False)

    def updates():
        torch.manual_seed(0)
        learners = [bcq.BCQ(info, shipped(LearnerParams, "offline", "regular"), 0.3, torch.device("cpu")), DQN(info, shipped(LearnerParams, "offline", "regular"),
                                                                                  torch.device("cpu"))]
        g = torch.Generator().manual_seed(1)
        for _ in range(5):
            batch = double_dqn.Batch(torch.randn(16, 4, generator=g), torch.randint(0, 3, (16,), generator=g),
                                     torch.randn(16, generator=g), torch.randn(16, 4, generator=g), torch.ones(16))
            for learner in learners:
                learner.update(batch)
        return learners

    measured = updates()
    _no_statistics(monkeypatch, double_dqn, bcq)
    for learner, bare in zip(measured, updates()):
        assert _same_state(learner.network, bare.network) and _same_state(learner.target, bare.target)


def test_computing_the_statistics_changes_nothing_in_sgd(small_trajectory, theta, monkeypatch):
    params = sgd.SGDParams(epochs=2, batch_size=500, lr0=0.1, lr_decay=0.5, ur_action="recorded")
    measured, history = sgd.train_sgd(theta, small_trajectory(), "UR", "control", params, PROBLEM,
                                      torch.Generator().manual_seed(3))
    _no_statistics(monkeypatch, sgd)
    bare, bare_history = sgd.train_sgd(theta, small_trajectory(), "UR", "control", params, PROBLEM,
                                       torch.Generator().manual_seed(3))
    assert torch.equal(measured, bare) and history.loss == bare_history.loss
    assert bare_history.diagnostics.columns.tolist() == ["iteration"]  # the no-op statistics were used


# ---------------------------------------------------------------- the figure


def test_the_figure_has_a_panel_per_column_and_dashes_the_failing_run():
    frame = pd.DataFrame({"step": [1, 2, 3], "loss_q": [1.0, 0.1, 0.01], "q_mean": [-1.0, 0.0, 1.0]})
    runs = [DiagnosticsRun("seed0 FAILS", frame, failing=True),
            DiagnosticsRun("seed1", frame.assign(epsilon=[1.0, 0.5, 0.1]))]
    assert columns_of(runs, "step") == ["loss_q", "q_mean", "epsilon"]
    fig = diagnostics_figure(runs, "step", "environment steps", "title", bounds={"q_mean": 0.5})
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["loss_q", "q_mean", "epsilon"]
    assert [ax.get_yscale() for ax in panels] == ["log", "linear", "linear"]  # losses span decades
    lines = {line.get_label(): line for line in panels[0].get_lines()}
    assert lines["seed0 FAILS"].get_linestyle() == "--" and lines["seed1"].get_linestyle() == "-"
    assert len(panels[2].get_lines()) == 1  # the failing run has no epsilon
    assert any(line.get_ydata()[0] == 0.5 for line in panels[1].get_lines())  # the bound
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["seed0 FAILS", "seed1"]
    assert "failing" in legend.get_title().get_text()


def test_every_column_a_learner_writes_is_documented(small_trajectory, theta):
    """The columns table of docs/diagnostics.md names every column of every learner's diagnostics."""
    from mpo_fixtures import random_batch, tiny_agent

    documented = set(re.findall(r"`([a-z_{}0-9]+)`", DOCS.read_text().split("## The columns")[1].split("##")[0]))
    written = {}
    grid = shipped(TabularParams, "qtable", "params", episodes=2, max_steps=5, log_every=1)
    env = tabular.make_grid_env("MountainCar-v0", grid, "qtable")
    for name, train in (("qtable", lambda log: tabular.train_qtable(env, grid, 0, np.random.default_rng(0), log)),
                        ("linear_q", lambda log: tabular.train_linear_q(env, grid, 0, np.random.default_rng(0),
                                                                         torch.Generator(), log)),
                        ("dqn", lambda log: RUNS["dqn"](log)), ("ddpg", lambda log: RUNS["ddpg"](log))):
        log = DiagnosticsLog()
        train(log)
        written[name] = set(log.frame().columns) - {"step", "episode"}
    info = EnvInfo("CartPole-v1", False, (4,), 1, 3, False)
    batch = double_dqn.Batch(torch.randn(4, 4), torch.tensor([0, 1, 2, 0]), torch.randn(4), torch.randn(4, 4),
                             torch.ones(4))
    written["behavioural and offline DQN"] = set(DQN(info, shipped(LearnerParams, "offline", "regular"), torch.device("cpu")).update(batch)) | {
        "epsilon"}
    written["bcq"] = set(bcq.BCQ(info, shipped(LearnerParams, "offline", "regular"), 0.3, torch.device("cpu")).update(batch))
    written["mpo"] = set(tiny_agent().update(random_batch())) | {"skipped_nonfinite_batches"}
    _, history = sgd.train_sgd(theta, small_trajectory(), "DS", "control", sgd.SGDParams(1, 500, 0.1, 1.0, "recorded"),
                               PROBLEM, torch.Generator())
    written["sgd"] = set(history.diagnostics.columns) - {"iteration"}
    p = CBOParams(particles=4, particle_batch=4, samples=100, epochs=1, lam=1.0, eta=0.1, noise=1.0, beta=1.0,
                  ur_action="recorded", output_bias_init="default", kick=0.0, kick_decay=1.0, ess_target=0.0)
    g = torch.Generator().manual_seed(0)
    _, history = train_cbo(initial_swarm(p, g, 1.0), small_trajectory(), "DS", "control", p, PROBLEM, g)
    written["cbo"] = set(history.diagnostics.columns) - {"iteration"}
    for learner, columns in written.items():
        names = {re.sub(r"_\d+$", "_{i}", column) for column in columns}
        assert names <= documented, (learner, names - documented)
    assert "buffer_abs_obs_{i}" in documented and {"loss_q", "q_mean"} <= written["sgd"]


def test_restore_refuses_rows_a_log_never_writes():
    log = DiagnosticsLog()
    for rows, message in [([{"iteration": 30, "loss_q": 1.0}], "not windows"),
                          ([{"iteration": 10, "loss_q": "1.0"}], "named numbers"),
                          ([{"iteration": 20}, {"iteration": 10}], "not windows"),
                          ("rows", "not a list")]:
        with pytest.raises(ValueError, match=message):
            log.restore(rows, "iteration", 20)
    assert log.rows == []
