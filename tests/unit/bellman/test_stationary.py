"""Where the data are: the stationary density of each task's behaviour policy (bellman/problem/stationary.py),
the density-weighted error (metrics.weighted_centred_error), the error by Fourier mode
(metrics.error_by_mode), and the density step's refusals."""

import math

import numpy as np
import pytest
import torch

from rlstudy.bellman.problem.exact import grid
from rlstudy.bellman.learners.metrics import centred_error, error_by_mode, weighted_centred_error
from rlstudy.bellman.problem.sde import prob_plus
from rlstudy.bellman.problem.stationary import PushOperator, load_density, stationary_density, stationary_on_grid
from rlstudy.core.errors import InputError
from bellman_fixtures import dynamics
from hostile import cli, nothing_written, one_line_error  # noqa: F401 (cli: a fixture)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_uniform_policy_leaves_the_uniform_density():
    # Both actions equally likely everywhere: every step is a rotation-invariant convolution, so the
    # flat density (1 / (2*pi), mean 1 on the grid) is stationary, whatever dt and sigma.
    density, _ = stationary_density("uniform", dynamics())
    np.testing.assert_allclose(density, 1.0, rtol=0, atol=1e-12)


def test_the_evaluation_density_is_invariant_under_one_step_and_piles_up_near_pi():
    density, history = stationary_density("evaluation", dynamics())
    assert history[-1].relative_change < 1e-8 and len(density) % 100 == 0
    assert density.mean() == pytest.approx(1.0, rel=1e-12)
    pushed = PushOperator.build(len(density), "evaluation", dynamics()).push(density)
    np.testing.assert_allclose(pushed, density, rtol=0, atol=1e-12 * density.max())
    s = grid(len(density))
    assert s[density.argmax()] == pytest.approx(math.pi, abs=0.1) and density.max() / density.min() > 100


def test_one_push_conserves_mass_and_is_the_adjoint_of_the_expectation():
    push = PushOperator.build(64, "evaluation", dynamics())
    rng = np.random.default_rng(0)
    p, f = rng.random(64), rng.random(64)
    assert push.push(p).sum() == pytest.approx(p.sum(), rel=1e-13)
    # <push p, f> = sum_{s,a} p(s) pi(a|s) E[f(s') | s, a]: pushing densities is the adjoint of expect.
    plus = prob_plus("evaluation", grid(64))
    expected = (p * ((1 - plus) * push.step.expect(f)[:, 0] + plus * push.step.expect(f)[:, 1])).sum()
    assert push.push(p) @ f == pytest.approx(expected, rel=1e-12)


def test_the_evaluation_density_matches_simulated_chains():
    # 40,000 independent chains of the evaluation policy from uniform starts, 300 steps each (the
    # chain's second eigenvalue is 0.94 per step: 0.94**300 ~ 1e-8), histogram of the final states.
    d = dynamics()
    rng = np.random.default_rng(20240522)
    s = rng.uniform(0, 2 * math.pi, 40_000)
    for _ in range(300):
        a = np.where(rng.random(s.size) < prob_plus("evaluation", s), 1.0, -1.0)
        s = np.remainder(d.step(s, a, rng.standard_normal(s.size)), 2 * math.pi)
    bins = 20
    counts = np.histogram(s, bins=bins, range=(0, 2 * math.pi))[0]
    density, _ = stationary_density("evaluation", d)
    expected = density.reshape(bins, -1).mean(axis=1) / bins * s.size  # grid points fall evenly in the bins
    counted = expected > 100
    z = (counts - expected)[counted] / np.sqrt(expected[counted])
    assert np.abs(z).max() < 5, z
    flat = np.full(bins, s.size / bins)  # the uniform metric's implicit density: far off, by construction
    assert np.abs((counts - flat) / np.sqrt(flat)).max() > 50


def test_equal_weights_reproduce_the_uniform_error_and_one_heavy_point_sees_only_itself():
    rng = np.random.default_rng(1)
    q, q_ref = torch.from_numpy(rng.random((8, 2))), torch.from_numpy(rng.random((8, 2)))
    assert weighted_centred_error(q, q_ref, torch.ones(8)) == pytest.approx(centred_error(q, q_ref), rel=1e-13)
    # Hand computed: n = 4, D = [[1, 0], [0, 0], [0, 0], [0, 2]], weights [2, 2, 0, 0] (mean 1).
    # Weighted means m = [(2*1)/4, 0] = [0.5, 0]; centred at the weighted points: [[0.5, 0], [-0.5, 0]],
    # so e_w^2 = 2*pi/4 * (2 * 0.25 + 2 * 0.25) = pi/2; the point of D = 2 has no weight.
    diff = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    weights = torch.tensor([2.0, 2.0, 0.0, 0.0], dtype=torch.float64)
    assert weighted_centred_error(diff, torch.zeros_like(diff), weights) == pytest.approx(math.sqrt(math.pi / 2))


def test_a_sinusoid_difference_lands_on_its_one_mode():
    s = grid(100)
    q_ref = np.stack([np.sin(s), np.cos(2 * s)], axis=1)
    q = q_ref + np.stack([0.3 * np.cos(3 * s + 0.4), 0.4 * np.sin(3 * s)], axis=1) + 0.7
    errors = error_by_mode(q, q_ref, 10)
    # e_3^2 = 2*pi * (0.3^2 + 0.4^2) / 2 = pi * 0.25; e_0^2 = 2*pi * 2 * 0.7^2, the offset; nothing else.
    assert errors[3] == pytest.approx(math.sqrt(math.pi * 0.25), rel=1e-12)
    assert errors[0] == pytest.approx(math.sqrt(2 * math.pi * 2 * 0.49), rel=1e-12)
    assert np.delete(errors, [0, 3]).max() < 1e-12
    # Over every mode, the squares of k >= 1 add up to the centred error's square.
    all_modes = error_by_mode(q, q_ref, 50)
    centred = centred_error(torch.from_numpy(q), torch.from_numpy(q_ref))
    assert math.sqrt((all_modes[1:] ** 2).sum()) == pytest.approx(centred, rel=1e-12)


def test_a_grid_too_small_and_a_density_file_of_the_wrong_shape_are_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 4 points"):
        stationary_on_grid(2, "evaluation", dynamics())
    np.save(tmp_path / "d.npy", np.ones(150))
    with pytest.raises(InputError, match="multiple of 100"):
        load_density(tmp_path / "d.npy", 100)


DYNAMICS = '{"dt": 0.19634954084936207, "sigma": 0.2, "reward_of": "current"}'


@pytest.mark.parametrize("args, fragments", [
    (["--task", "evaluation", "--dynamics", DYNAMICS, "--rtol", "nan"], ["--rtol", "finite"]),
    (["--task", "evaluation", "--dynamics", DYNAMICS, "--rtol", "0.5"], ["--rtol", "(0, 0.01]"]),
    (["--task", "evaluation", "--dynamics", DYNAMICS.replace("0.2,", "-0.2,")], ["problem.dynamics", "sigma"]),
    (["--task", "evaluation", "--dynamics", "[1]"], ["--dynamics", "JSON object"]),
    (["--task", "nowhere", "--dynamics", DYNAMICS], ["--task", "invalid choice"]),
])
def test_the_density_step_refuses_bad_arguments_by_name(tmp_path, cli, args, fragments):  # noqa: F811
    status, err = cli("bellman.cli.solve_density", *args, "--out", tmp_path / "out" / "d.npy")
    one_line_error(status, err, *fragments)
    assert nothing_written(tmp_path / "out")


def test_a_rounding_level_negative_value_is_clipped_so_that_the_file_loads(tmp_path, monkeypatch):
    """stationary_on_grid tolerates min >= -RESIDUAL_RTOL * max; load_density refuses any negative value:
    what the solve writes must load."""
    from rlstudy.bellman.problem import stationary
    from rlstudy.core.atomic_writes import save_npy
    from rlstudy.core.provenance import provenance

    solve = np.linalg.solve

    def rounded(a, b):  # the flat density with one value just below zero
        x = solve(a, b)
        x[7] = -1e-14 * x.max()
        return x

    monkeypatch.setattr(stationary.np.linalg, "solve", rounded)
    # The tolerance widened so that this made-up solution passes the residual and sign checks.
    density = stationary_on_grid(100, "uniform", dynamics(), residual_rtol=1.0)
    assert density.min() == 0.0 and density.mean() == pytest.approx(1.0, rel=1e-14)
    save_npy(tmp_path / "d.npy", density, provenance({}, None, {}))
    np.testing.assert_array_equal(load_density(tmp_path / "d.npy", 100), density)
