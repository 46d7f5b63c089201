"""The error budget (bellman/budget/): the regression recovers a network of the class, the population
residual matches hand-computed values, DS exceeds UR by the variance term, and the steps refuse bad input."""

import dataclasses

import numpy as np
import pytest
import torch

from rlstudy.bellman.problem import exact
from rlstudy.bellman.budget import grid, interpolation, lbfgs, reach, tables
from rlstudy.bellman.budget.population import PopulationResidual
from rlstudy.bellman.budget.sampled import SampledResidual
from rlstudy.core.errors import InputError
from rlstudy.bellman.numerics.compiled.qnet import QNetShape, forward, init_params
from rlstudy.bellman.problem.sde import Problem
from bellman_fixtures import dynamics as shipped_dynamics
from hostile import cli  # noqa: F401 (a fixture)

GAMMA = 0.9
POINTS = 64
# One torch thread, as the budget's rules run: the fits are many small products, and two threads
# fighting other work for two cores made the regression test take minutes instead of seconds.
pytestmark = pytest.mark.usefixtures("one_thread")


def problem(reward_of="current"):
    return Problem(shipped_dynamics(reward_of=reward_of), GAMMA)


def test_regression_recovers_a_target_in_the_network_class():
    """A target the network represents exactly (another draw of its parameters), fitted from a different
    draw: the fit ends within 1 % of where it started from the target (L-BFGS is not a global optimiser,
    so this is the reach's resolution: the budget's parts and the study's final errors are all above
    0.04 of their initial error, so a 1 % resolution cannot reorder them)."""
    shape = QNetShape()
    feats = grid.features64(exact.grid(POINTS))
    truth = init_params(1, torch.Generator().manual_seed(1), shape)[0].double()
    target = forward(truth, feats).numpy()
    start = init_params(1, torch.Generator().manual_seed(2), shape)[0]
    fit = lbfgs.minimise(reach.regression_loss(target, POINTS), start, lbfgs.FitSettings(1500, 50, 1e-14), "test")
    before = np.linalg.norm(forward(start.double(), feats).numpy() - target)
    after = np.linalg.norm(forward(fit.theta, feats).numpy() - target)
    assert fit.history[-1]["loss"] < fit.history[0]["loss"]
    assert after < 0.01 * before


def test_the_weighted_regression_counts_only_where_the_weights_are():
    """Weights zero on half the circle: a target changed only there has the same loss; weights alike on
    every point give the unweighted mean."""
    feats = grid.features64(exact.grid(POINTS))
    target = forward(init_params(1, torch.Generator().manual_seed(1))[0].double(), feats).detach().numpy()
    changed = target.copy()
    changed[POINTS // 2:] += 1.0
    half = np.r_[np.ones(POINTS // 2), np.zeros(POINTS // 2)]
    theta = init_params(1, torch.Generator().manual_seed(2))[0].double()
    seen = float(reach.regression_loss(target, POINTS, half)(theta))
    assert float(reach.regression_loss(changed, POINTS, half)(theta)) == seen
    assert float(reach.regression_loss(changed, POINTS)(theta)) > seen + 0.4  # the unweighted loss sees the change
    alike = float(reach.regression_loss(target, POINTS, np.ones(POINTS))(theta))
    assert alike == pytest.approx(float(reach.regression_loss(target, POINTS)(theta)), rel=1e-12)


@pytest.mark.parametrize("estimator, reward_of", [("DS", "current"), ("DS", "next"), ("UR", "current"),
                                                   ("UR", "next"), ("BFF", "current"), ("BFF-matched", "current")])
@pytest.mark.parametrize("task", ["evaluation", "control"])
def test_a_constant_q_has_the_residual_of_its_one_step(task, estimator, reward_of):
    """Q = k everywhere: V = k, so each term is (E[r] + gamma k - k)^2 (the next value is the same constant);
    with reward_of next E[r] = E[sin(s')] + 1 by hand, and DS's single sample adds the reward's own variance
    Var(sin s') = (1 - cos(2 mu) e^{-2v}) / 2 - sin(mu)^2 e^{-v} for s' ~ N(mu = s + a dt, v = sigma^2 dt).
    BFF-matched keeps the transitions whose next action repeats a: its term carries
    P(a_{m+1} = a | s, a) = E_a[mu(a|s')]."""
    k = 3.7
    population = PopulationResidual(task, estimator, problem(reward_of), POINTS)
    s = exact.grid(POINTS)
    dyn = problem(reward_of).dynamics
    damping = np.exp(-0.5 * dyn.sigma ** 2 * dyn.dt)
    if reward_of == "current":
        r = np.stack([np.sin(s) + 1.0] * 2, axis=1)
    else:
        r = np.stack([np.sin(s + a * dyn.dt) * damping + 1.0 for a in (-1.0, 1.0)], axis=1)
    expected = (r + GAMMA * k - k) ** 2
    if estimator == "DS" and reward_of == "next":
        v = dyn.sigma ** 2 * dyn.dt
        expected += np.stack([(1.0 - np.cos(2.0 * (s + a * dyn.dt)) * np.exp(-2.0 * v)) / 2.0
                              - np.sin(s + a * dyn.dt) ** 2 * np.exp(-v) for a in (-1.0, 1.0)], axis=1)
    if estimator == "BFF-matched":
        # behaviour pi(+1|s) = 1/2 + sin(s)/5 on evaluation, so E_a[pi(+1|s')] = 1/2 + E_a[sin s']/5
        plus = np.stack([0.5 + (np.sin(s + a * dyn.dt) * damping / 5.0 if task == "evaluation" else np.zeros_like(s))
                         for a in (-1.0, 1.0)], axis=1)
        expected = expected * np.stack([1.0 - plus[:, 0], plus[:, 1]], axis=1)
    terms = population.terms(torch.full((POINTS, 2), k, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(terms, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("task", ["evaluation", "control"])
def test_the_exact_q_zeroes_ur_and_leaves_ds_the_variance(task):
    """On a grid fine enough that the kernel's noise (sigma sqrt(dt) = 0.089) spans several points: on a
    coarser one the band-limited kernel has negative lobes and a 'variance' can come out below 0."""
    points = 256
    solution = exact.solve_on_grid(points, exact.EVALUATED_POLICY[task], GAMMA, problem().dynamics)
    q = torch.from_numpy(solution.values)
    ur = PopulationResidual(task, "UR", problem(), points).terms(q).numpy()
    ds = PopulationResidual(task, "DS", problem(), points).terms(q).numpy()
    assert np.abs(ur).max() < 1e-20
    # gamma^2 Var[V(s')] by the solver's own kernel (numpy), apart from the torch code
    v = exact.state_values(solution.values, exact.grid(points), exact.EVALUATED_POLICY[task])
    op = exact.StepOperator.build(points, problem().dynamics)
    variance = GAMMA ** 2 * (op.expect(v ** 2) - op.expect(v) ** 2)
    np.testing.assert_allclose(ds, variance, rtol=1e-8, atol=1e-13)
    assert variance.min() > 0


def test_ds_exceeds_ur_by_the_variance_for_any_network():
    population = {name: PopulationResidual("evaluation", name, problem(), POINTS) for name in ("DS", "UR")}
    theta = init_params(1, torch.Generator().manual_seed(3))[0].double()
    q = forward(theta, population["DS"].feats)
    v = grid.state_values(q, population["DS"].target_probs).detach().numpy()
    op = exact.StepOperator.build(POINTS, problem().dynamics)
    variance = GAMMA ** 2 * (op.expect(v ** 2) - op.expect(v) ** 2)
    gap = (population["DS"].terms(q) - population["UR"].terms(q)).detach().numpy()
    np.testing.assert_allclose(gap, variance, rtol=1e-7, atol=1e-12)
    weights = np.full(POINTS, 1.0 / POINTS)[:, None] * population["DS"].behaviour.numpy()
    loss_gap = float(population["DS"].loss(theta) - population["UR"].loss(theta))
    assert loss_gap == pytest.approx(0.5 * (weights * variance).sum(), rel=1e-7)


def test_on_control_bff_matched_is_ur():
    """Uniform behaviour: the matched transitions' increment has the right law, independent of s1."""
    theta = init_params(1, torch.Generator().manual_seed(4))[0].double()
    ur = PopulationResidual("control", "UR", problem(), POINTS)
    matched = PopulationResidual("control", "BFF-matched", problem(), POINTS)
    assert float(matched.loss(theta)) == pytest.approx(float(ur.loss(theta)), rel=1e-10)


def test_weights_are_read_at_the_grid_and_checked(tmp_path):
    np.testing.assert_allclose(interpolation.weights_on(None, 4), 0.25)
    np.testing.assert_allclose(interpolation.weights_on(np.arange(8.0) + 1, 4), np.array([1, 3, 5, 7]) / 16)
    for bad, message in ((np.array([1.0, -1.0, 2.0]), "negative"), (np.array([1.0, np.nan]), "NaN"),
                         (np.zeros(4), "vanish")):
        np.save(tmp_path / "w.npy", bad)
        with pytest.raises(InputError, match=message):
            tables.load_weights(tmp_path / "w.npy")


def test_uniform_weights_score_as_the_unweighted_metric():
    """The weighted metric with equal weights is the notebook's (per-action centred) metric."""
    theta = init_params(1, torch.Generator().manual_seed(4))[0]
    exact_q = np.random.default_rng(0).normal(size=(400, 2))
    measured = tables.scores(theta, exact_q, np.ones(400))
    assert measured["error_exact_weighted_normalised"] == pytest.approx(measured["error_exact_normalised"], rel=1e-12)
    assert list(tables.scores(theta, exact_q, None)) == ["error_exact_normalised"]


def test_the_sampled_residual_interpolates_to_the_direct_loss():
    dyn = problem().dynamics
    rng = np.random.default_rng(5)
    traj_states = np.cumsum(np.r_[0.0, rng.choice([-1.0, 1.0], 2999) * dyn.dt + 0.09 * rng.normal(size=2999)])
    actions = (rng.random(3000) < 0.5).astype(np.int8)
    rewards = np.sin(traj_states) + 1.0
    theta = init_params(1, torch.Generator().manual_seed(6))[0].double()
    for estimator in ("DS", "UR", "BFF", "BFF-matched"):
        sampled = SampledResidual(traj_states, actions, rewards, "control", estimator, problem(),
                                         np.random.default_rng(7), 4096)
        assert float(sampled.loss(theta)) == pytest.approx(sampled.direct_loss(theta), rel=1e-5)


@pytest.mark.parametrize("args, option", [
    (["--points", "3"], "--points"),
    (["--fit", '{"max_iterations": 0, "chunk": 5, "rtol": 1e-6}'], "max_iterations"),
    (["--fit", "[1]"], "--fit"),
    (["--fit-weights"], "--weights"),
])
def test_the_reach_step_names_a_bad_option(tmp_path, args, option, cli):
    q = tmp_path / "q_exact.npy"
    np.save(q, np.ones((100, 2)))
    given = {"--task": "evaluation", "--exact": str(q), "--points": "50", "--seed": "1",
             "--fit": '{"max_iterations": 5, "chunk": 5, "rtol": 1e-6}', "--out-dir": str(tmp_path / "out")}
    flags = [a for a in args if a == "--fit-weights"]
    values = [a for a in args if a != "--fit-weights"]
    given.update(dict(zip(values[::2], values[1::2])))
    status, stderr = cli("bellman.cli.budget_reach", *[x for pair in given.items() for x in pair], *flags)
    assert status != 0
    assert option in stderr
    assert not (tmp_path / "out" / "q.pt").exists()


def test_the_population_step_refuses_bad_weights(tmp_path, cli):
    q, w = tmp_path / "q_exact.npy", tmp_path / "w.npy"
    np.save(q, np.ones((100, 2)))
    np.save(w, np.array([1.0, np.inf, 2.0]))
    status, stderr = cli("bellman.cli.budget_population", "--task", "control", "--estimator", "UR", "--exact", q,
                         "--points", "50", "--weights", w, "--fit", '{"max_iterations": 5, "chunk": 5, "rtol": 1e-6}',
                         "--start", "none.pt", "--ur-action", "recorded",
                         "--problem", '{"dynamics": {"dt": 0.2, "sigma": 0.2, "reward_of": "current"}, "gamma": 0.9}',
                         "--out-dir", tmp_path / "out")
    assert status == 2
    assert "--weights" in stderr


def test_an_estimator_without_written_out_terms_is_refused(monkeypatch):
    """A registered estimator without population terms is refused by name; one that brings its own
    (here UR's, under another name) gets the budget without any edit of budget/."""
    from rlstudy.bellman import estimators
    from rlstudy.bellman.estimators.ur import UR
    with pytest.raises(ValueError, match="config budget.estimators"):
        PopulationResidual("control", "TOY", problem(), POINTS)
    monkeypatch.setitem(estimators.ESTIMATORS, "TOY", dataclasses.replace(UR, name="TOY", population_terms=None))
    with pytest.raises(ValueError, match="'TOY' \\(config budget.estimators\\)"):
        PopulationResidual("control", "TOY", problem(), POINTS)
    monkeypatch.setitem(estimators.ESTIMATORS, "TOY", dataclasses.replace(UR, name="TOY"))
    q = torch.rand(POINTS, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    toy = PopulationResidual("control", "TOY", problem(), POINTS).loss_of_q(q)
    assert float(toy) == float(PopulationResidual("control", "UR", problem(), POINTS).loss_of_q(q))


@pytest.mark.parametrize("task, reward_of", [("control", "current"), ("evaluation", "current"), ("evaluation", "next")])
def test_the_compiled_loss_and_gradient_are_the_tensor_codes(task, reward_of):
    """The finite-data fit's compiled pass (budget_kernel.py) against the loss written with tensors on
    the same interpolation and its autograd gradient, for every estimator; on control also where the two
    actions tie everywhere (the max's gradient then goes to the first action, as torch.max sends it)."""
    dyn = problem(reward_of).dynamics
    rng = np.random.default_rng(8)
    traj_states = np.cumsum(np.r_[0.0, rng.choice([-1.0, 1.0], 1999) * dyn.dt + 0.09 * rng.normal(size=1999)])
    actions = (rng.random(2000) < 0.5).astype(np.int8)
    rewards = np.sin(traj_states) + 1.0
    q_grids = [torch.from_numpy(rng.normal(size=(POINTS, 2)))]
    if task == "control":
        q_grids.append(q_grids[0][:, :1].repeat(1, 2))
    for estimator in ("DS", "UR", "BFF", "BFF-matched"):
        sampled = SampledResidual(traj_states, actions, rewards, task, estimator, problem(reward_of),
                                         np.random.default_rng(7), POINTS)
        for q_grid in q_grids:
            q_grid = q_grid.clone().requires_grad_(True)
            j, j_hat = sampled.residuals(sampled.interpolated(q_grid))
            expected = 0.5 * (j * j_hat).mean()
            expected.backward()
            total, grad = sampled.sums(q_grid.detach())
            assert 0.5 * total / sampled.transitions == pytest.approx(float(expected.detach()), rel=1e-12, abs=1e-15)
            np.testing.assert_allclose(grad.numpy(), q_grid.grad.numpy(), rtol=1e-10, atol=1e-15)
