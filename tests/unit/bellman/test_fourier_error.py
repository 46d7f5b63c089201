"""Errors by Fourier mode (cli/fourier_error.py, cli/plot_fourier_error.py) and the Q figure's exact
errors, uniform and where the data are (cli/plot_q.py), on a hand-made run folder: a network whose
difference from the exact Q is a known sinusoid, so that each number has a value worked out by hand."""

import dataclasses
import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.bellman.problem.exact import grid
from rlstudy.bellman.learners.metrics import centred_norm, exact_scores, q_on_grid, weighted_centred_norm
from rlstudy.bellman.numerics.compiled.qnet import init_params, to_state_dict
from rlstudy.bellman.problem.stationary import load_density
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv, save_npy, save_tensors
from rlstudy.core.loaders import load_tensors
from rlstudy.core.provenance import provenance
from bellman_fixtures import dynamics
from hostile import cli, nothing_written, one_line_error  # noqa: F401 (cli: a fixture)

pytestmark = pytest.mark.usefixtures("one_thread")

GAMMA = 0.9
S = grid(100)


def difference(s: np.ndarray) -> np.ndarray:
    """Q_run - Q_exact of seed 0: mode 3 in each action, and an offset per action (mode 0)."""
    return np.stack([0.3 * np.cos(3 * s + 0.4) + 0.7, 0.4 * np.sin(3 * s) - 0.2], axis=1)


# e_3^2 = 2*pi * (0.3^2 + 0.4^2) / 2 (a sinusoid's mean square is half its amplitude's square);
# e_0^2 = 2*pi * (0.7^2 + 0.2^2): the per-action offsets the centred error ignores.
MODE_3 = math.sqrt(math.pi * 0.25)
MODE_0 = math.sqrt(2 * math.pi * (0.49 + 0.04))


def curve(task: str, seed: int) -> pd.DataFrame:
    return pd.DataFrame({"dataset": "ours", "task": task, "setting": "sgd", "estimator": "UR", "seed": seed,
                         "iteration": [0, 1], "evaluations": [0, 10], "error": [2.0, 1.0], "rel_error": [1, 0.5],
                         "error_exact": [2.0, 1.5], "rel_error_exact": [1, 0.75]})


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """root/seed{0,1}/{q.pt,errors.csv} of task evaluation, root/q_exact.npy = seed 0's Q - difference on
    200 points (the metric reads every other one; the Q figure wants a multiple of 200), root/q_star.pt, root/density.npy (1 + cos(6s)/2: mean 1 on the grid)."""
    root = tmp_path_factory.mktemp("fourier")
    thetas = init_params(3, torch.Generator().manual_seed(0))
    for seed in (0, 1):
        save_tensors(root / f"seed{seed}" / "q.pt", to_state_dict(thetas[seed]), provenance({}, None, {}))
        save_csv(root / f"seed{seed}" / "errors.csv", curve("evaluation", seed), provenance({}, None, {}))
    save_tensors(root / "q_star.pt", to_state_dict(thetas[2]), provenance({}, None, {}))
    exact = np.empty((200, 2))
    exact[::2] = q_on_grid(thetas[0]).double().numpy() - difference(S)  # the very values the metric computes
    exact[1::2] = q_on_grid(thetas[0], 200).double().numpy()[1::2] - difference(grid(200)[1::2])
    save_npy(root / "q_exact.npy", exact, provenance({}, None, {}))
    exact = exact[::2]
    save_npy(root / "density.npy", 1 + 0.5 * np.cos(6 * S), provenance({}, None, {}))
    return root, thetas, exact


def exact_json(root, **changes) -> str:
    row = {"dataset": "ours", "task": "evaluation", "exact": str(root / "q_exact.npy"),
           "dynamics": dataclasses.asdict(dynamics()), "density": str(root / "density.npy"), **changes}
    return json.dumps({"rows": [row]})


def fourier_args(root, out, *, exact=None, modes=50, gamma=GAMMA):
    return ["--curves", root / "seed0" / "errors.csv", root / "seed1" / "errors.csv",
            "--exact", exact or exact_json(root),
            "--problem", json.dumps({"dynamics": dataclasses.asdict(dynamics()), "gamma": gamma}), "--modes", modes, "--out", out]


@pytest.fixture(scope="module")
def table(made, tmp_path_factory):
    import importlib
    import sys

    root, _, _ = made
    out = tmp_path_factory.mktemp("fourier_out") / "fourier_error.csv"
    argv = sys.argv
    sys.argv = ["fourier_error", *map(str, fourier_args(root, out))]
    try:
        importlib.import_module("rlstudy.bellman.cli.fourier_error").main()
    finally:
        sys.argv = argv
    return pd.read_csv(out), out


def test_a_sinusoid_difference_lands_on_its_mode_and_the_offset_on_mode_0(made, table):
    _, _, exact = made
    rows = table[0][table[0]["seed"] == 0].set_index("mode")
    assert list(rows.index) == list(range(51))
    assert rows.loc[3, "error"] == pytest.approx(MODE_3, rel=1e-8)
    assert rows.loc[0, "error"] == pytest.approx(MODE_0, rel=1e-8)
    assert rows["error"].drop([0, 3]).max() < 1e-9
    norm = centred_norm(torch.from_numpy(exact))
    np.testing.assert_allclose(rows["error_normalised"], rows["error"] / norm, rtol=1e-8)


def test_the_squares_of_modes_1_and_up_add_up_to_the_centred_error(made, table):
    _, thetas, exact = made
    for seed in (0, 1):  # seed 1: a network unrelated to the exact Q, every mode in its difference
        rows = table[0][table[0]["seed"] == seed]
        whole = exact_scores(thetas[seed], exact, None)["error_exact_normalised"]
        assert math.sqrt((rows.loc[rows["mode"] >= 1, "error_normalised"] ** 2).sum()) == pytest.approx(whole, rel=1e-8)
    assert table[0].loc[table[0]["seed"] == 1, "error"].iloc[1:].min() > 0


def test_each_mode_carries_the_bellman_steps_contraction_and_the_table_its_provenance(made, table):
    d = dynamics()
    rows = table[0][table[0]["seed"] == 0]
    for k in (0, 1, 7):  # gamma * exp(-sigma^2 * dt * k^2 / 2)
        expected = GAMMA * math.exp(-d.sigma**2 * d.dt * k**2 / 2)
        assert rows.loc[rows["mode"] == k, "bellman_contraction"].item() == pytest.approx(expected, rel=1e-8)
    record = json.loads(table[1].with_name(table[1].name + ".provenance.json").read_text())
    root = made[0]
    assert {str(root / "q_exact.npy"), str(root / "seed1" / "q.pt"), str(root / "seed0" / "errors.csv")} <= \
        {entry["path"] for entry in record["inputs"].values()}
    assert record["parameters"]["modes"] == 50 and record["parameters"]["gamma"] == GAMMA


def damage(root, what):
    """A copy's file made bad: no q.pt, NaN in the exact Q, the exact Q of the wrong shape, NaN in a network."""
    if what == "no network":
        (root / "seed1" / "q.pt").unlink()
    elif what in ("nan exact", "shape exact"):  # the metric's grid divides 200: only the shape or NaN is wrong
        values = np.load(root / "q_exact.npy")
        values = np.concatenate([values, values[:, :1]], axis=1) if what == "shape exact" else values
        values[5, 0] = math.nan if what == "nan exact" else values[5, 0]
        save_npy(root / "q_exact.npy", values, provenance({}, None, {}))
    elif what == "nan network":
        state = load_tensors(root / "seed0" / "q.pt", "test")
        state["fc2.weight"][1, 2] = math.nan
        save_tensors(root / "seed0" / "q.pt", state, provenance({}, None, {}))


@pytest.mark.parametrize("what, fragments", [
    ("no network", ["missing input file", "seed1/q.pt"]),
    ("nan exact", ["q_exact.npy", "NaN"]),
    ("shape exact", ["q_exact.npy", "shape (n, 2)", "(200, 3)"]),
    ("nan network", ["seed0/q.pt", "'fc2.weight' holds NaN"]),
])
def test_a_bad_input_file_is_named_and_nothing_is_written(made, tmp_path, cli, what, fragments):  # noqa: F811
    root = shutil.copytree(made[0], tmp_path / "copy")
    damage(root, what)
    status, err = cli("bellman.cli.fourier_error", *fourier_args(root, tmp_path / "out" / "f.csv"))
    one_line_error(status, err, *fragments)
    assert nothing_written(tmp_path / "out")


@pytest.mark.parametrize("change, fragments", [
    ({"modes": 51}, ["--modes", "at most 50"]),
    ({"modes": 0}, ["--modes"]),
    ({"gamma": math.nan}, ["--problem", "gamma"]),
    ({"gamma": 1.5}, ["--problem", "gamma"]),
    ({"exact": '{"rows": []}'}, ["--exact", "at least one row"]),
    ({"exact": '{"rows": [{"dataset": "ours"}]}'}, ["--exact", "keys"]),
    ({"exact": "not json"}, ["--exact", "JSON"]),
    ({"exact": "task"}, ["--exact", "no exact Q given", "'evaluation'"]),
    ({"exact": "text"}, ["--exact", "['exact']", "must be text"]),
])
def test_a_bad_option_is_named_and_nothing_is_written(made, tmp_path, cli, change, fragments):  # noqa: F811
    root = made[0]
    if change.get("exact") == "task":
        change["exact"] = exact_json(root, task="control")
    elif change.get("exact") == "text":
        change["exact"] = exact_json(root, exact=["not", "a", "path"])
    status, err = cli("bellman.cli.fourier_error", *fourier_args(root, tmp_path / "out" / "f.csv", **change))
    one_line_error(status, err, *fragments)
    assert nothing_written(tmp_path / "out")


def tiny_table() -> pd.DataFrame:
    rows = [{"dataset": "ours", "task": "evaluation", "setting": "sgd", "estimator": estimator, "seed": seed,
             "mode": k, "error": 0.1 * (k + 1) * (seed + 1), "error_normalised": 0.01 * (k + 1) * (seed + 1) * scale,
             "bellman_contraction": GAMMA * math.exp(-0.01 * k * k)}
            for estimator, scale in (("UR", 1.0), ("DS", 3.0)) for seed in (0, 1, 2) for k in range(4)]
    return pd.DataFrame(rows)


def test_the_plot_step_writes_its_figure_files_from_a_tiny_table(tmp_path, cli):  # noqa: F811
    save_csv(tmp_path / "fourier_error.csv", tiny_table(), provenance({}, None, {}))
    status, err = cli("bellman.cli.plot_fourier_error", "--table", tmp_path / "fourier_error.csv", "--dataset", "ours",
                      "--task", "evaluation", "--out-prefix", tmp_path / "fig" / "fourier_error_evaluation",
                      "--formats", "png", "pdf", "--dpi", 30)
    assert status == 0, err
    for fmt in ("png", "pdf"):
        figure = tmp_path / "fig" / f"fourier_error_evaluation.{fmt}"
        assert figure.stat().st_size > 1000
        record = json.loads(figure.with_name(figure.name + ".provenance.json").read_text())
        assert str(tmp_path / "fourier_error.csv") in {entry["path"] for entry in record["inputs"].values()}


def test_the_figure_draws_each_estimators_median_over_seeds_and_the_contraction():
    import matplotlib.pyplot as plt

    from rlstudy.bellman.figures.fourier import plot_fourier_error_figure

    fig = plot_fourier_error_figure(tiny_table(), "test")
    lines = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    np.testing.assert_allclose(lines["sgd UR"].get_ydata(), 0.02 * np.arange(1, 5))  # the median seed: 1
    np.testing.assert_allclose(lines["sgd DS"].get_ydata(), 0.06 * np.arange(1, 5))
    contraction = next(line for label, line in lines.items() if label.startswith("Bellman step"))
    np.testing.assert_allclose(contraction.get_ydata(), GAMMA * np.exp(-0.01 * np.arange(4) ** 2))
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


@pytest.mark.parametrize("column", ["mode", "error_normalised", "bellman_contraction"])
def test_the_plot_step_refuses_a_table_missing_a_column_by_name(tmp_path, cli, column):  # noqa: F811
    save_csv(tmp_path / "fourier_error.csv", tiny_table().drop(columns=column), provenance({}, None, {}))
    status, err = cli("bellman.cli.plot_fourier_error", "--table", tmp_path / "fourier_error.csv", "--dataset", "ours",
                      "--task", "evaluation", "--out-prefix", tmp_path / "fig" / "f", "--formats", "png", "--dpi", 30)
    one_line_error(status, err, "fourier_error.csv", column)
    assert nothing_written(tmp_path / "fig")


def test_the_plot_step_refuses_a_dataset_the_table_does_not_hold(tmp_path, cli):  # noqa: F811
    save_csv(tmp_path / "fourier_error.csv", tiny_table(), provenance({}, None, {}))
    status, err = cli("bellman.cli.plot_fourier_error", "--table", tmp_path / "fourier_error.csv", "--dataset",
                      "authors", "--task", "evaluation", "--out-prefix", tmp_path / "fig" / "f", "--formats", "png", "--dpi", 30)
    one_line_error(status, err, "no rows of dataset 'authors'")
    assert nothing_written(tmp_path / "fig")


def test_the_q_figure_is_given_the_uniform_and_the_weighted_exact_error(made, tmp_path, cli, monkeypatch):  # noqa: F811
    from rlstudy.bellman.cli import plot_q

    root, thetas, exact = made
    given = {}
    original = plot_q.plot_q_figure

    def spy(*args):
        given["exact_errors"] = args[-1]
        return original(*args)

    monkeypatch.setattr(plot_q, "plot_q_figure", spy)
    status, err = cli("bellman.cli.plot_q", "--task", "evaluation", "--setting", "sgd", "--reference", root / "q_star.pt",
                      "--exact", root / "q_exact.npy", "--density", root / "density.npy",
                      "--runs", root / "seed0", root / "seed1", "--problem", json.dumps({"dynamics": dataclasses.asdict(dynamics()), "gamma": GAMMA}),
                      "--converged-below", 0.5, "--out-prefix", tmp_path / "q",
                      "--formats", "png", "--dpi", 30)
    assert status == 0, err
    assert (tmp_path / "q.png").stat().st_size > 1000
    seed0 = given["exact_errors"]["UR"][0]
    # Seed 0's difference is 0.3 cos(3s + 0.4) in action 0, 0.4 sin(3s) in action 1, plus offsets. Under
    # w = 1 + cos(6s)/2 a mode-3 wave's weighted mean is still 0 (w times it holds modes 3 and 9), and
    # mean(w * 0.09 cos^2(3s + 0.4)) = 0.045 + 0.5 * 0.045 * cos(0.8) / 2, mean(w * 0.16 sin^2(3s)) = 0.08 - 0.02:
    # e_w^2 = 2*pi * (0.105 + 0.01125 cos(0.8)), below the uniform e^2 = 2*pi * 0.125.
    weighted = math.sqrt(2 * math.pi * (0.105 + 0.01125 * math.cos(0.8)))
    weights = torch.from_numpy(load_density(root / "density.npy", 100))
    assert seed0["error_exact_weighted_normalised"] * weighted_centred_norm(torch.from_numpy(exact), weights) == \
        pytest.approx(weighted, rel=1e-9)
    assert seed0["error_exact_normalised"] * centred_norm(torch.from_numpy(exact)) == pytest.approx(MODE_3, rel=1e-8)
    assert set(given["exact_errors"]) == {"Q*", "UR"} and len(given["exact_errors"]["UR"]) == 2


def test_a_density_file_of_no_dimension_is_refused_by_name(tmp_path):
    np.save(tmp_path / "d.npy", np.float64(1.0))
    with pytest.raises(InputError, match=r"d\.npy: expected a density of shape \(n,\)"):
        load_density(tmp_path / "d.npy", None)
