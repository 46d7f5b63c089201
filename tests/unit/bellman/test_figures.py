import math

import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.bellman.problem.exact import interpolate, solve_on_grid
from rlstudy.bellman.figures.q import plot_q_figure
from rlstudy.bellman.numerics.compiled.qnet import init_params, q_values
from bellman_fixtures import dynamics


def curves(estimator, finals):
    rows = []
    for seed, final in enumerate(finals):
        for k, e in enumerate(np.geomspace(1.0, final, 5)):
            rows.append(dict(task="control", setting="sgd", estimator=estimator, seed=seed, iteration=k, rel_error=e,
                             rel_error_exact=2 * e))
    return pd.DataFrame(rows)


@pytest.fixture
def figure():
    thetas = init_params(3, torch.Generator().manual_seed(0))
    reference = thetas[0]
    data = pd.concat([curves("UR", [0.1, 0.2]), curves("DS", [1.3, 1.1])])
    exact = solve_on_grid(200, None, 0.9, dynamics()).values
    fig = plot_q_figure(reference, exact, {"UR": [thetas[1], thetas[2]], "DS": [thetas[2], thetas[1]]}, data,
                        "test", converged_below=0.5)
    yield fig, reference, exact
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_panel_i_draws_q_star_of_action_i(figure):
    """The notebook drew Q*(a_1, s) in both action panels."""
    fig, reference, exact = figure
    states = torch.linspace(0, 2 * math.pi, 100, dtype=torch.float64)
    q_star = q_values(reference, states).double().numpy()
    q_exact = interpolate(exact, states.numpy())
    for i in range(2):
        star = [line for line in fig.axes[i].get_lines() if line.get_label() == "learned Q*"]
        assert len(star) == 1
        np.testing.assert_allclose(star[0].get_ydata(), q_star[:, i])
        truth = [line for line in fig.axes[i].get_lines() if line.get_label().startswith("exact Q")]
        drawn = truth[0].get_ydata()  # the exact Q of action i, offset to Q*'s mean level
        np.testing.assert_allclose(drawn - drawn.mean(), q_exact[:, i] - q_exact[:, i].mean(), atol=1e-9)
        np.testing.assert_allclose(drawn.mean(), q_star[:, i].mean())
    assert not np.allclose(q_star[:, 0], q_star[:, 1])


def test_failed_runs_are_marked_and_the_error_axis_is_logarithmic(figure):
    fig, _, _ = figure
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(label.startswith("DS") and "NOT converged" in label for label in labels)
    assert any(label.startswith("UR") and "NOT converged" not in label for label in labels)
    assert fig.axes[2].get_yscale() == fig.axes[3].get_yscale() == "log"


def test_the_last_panel_draws_the_error_against_the_exact_q(figure):
    fig, _, _ = figure
    assert "exact Q" in fig.axes[3].get_title() and "learned Q*" in fig.axes[2].get_title()
    ur_exact = fig.axes[3].get_lines()[0].get_ydata()  # UR first; mean over seeds of rel_error_exact
    np.testing.assert_allclose(ur_exact, 2 * fig.axes[2].get_lines()[0].get_ydata())


def test_a_figure_records_every_file_its_process_read(tmp_path):
    import json

    import matplotlib.pyplot as plt

    from rlstudy.core.atomic_writes import save_csv
    from rlstudy.core.loaders import load_csv
    from rlstudy.core.provenance import sha256_file
    from rlstudy.plotting import style

    table = tmp_path / "table.csv"
    save_csv(table, pd.DataFrame({"x": [1, 2]}), None)
    load_csv(table, "a table")
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    style.save(fig, tmp_path / "figure", formats=["png"], dpi=50)
    record = json.loads((tmp_path / "figure.png.provenance.json").read_text())
    assert record["parameters"] == {"formats": ["png"], "dpi": 50}
    assert {"path": str(table), "sha256": sha256_file(table)} in record["inputs"].values()
    assert record["artefact"]["sha256"] == sha256_file(tmp_path / "figure.png")


def test_control_legends_give_each_greedy_policys_exact_score():
    from rlstudy.bellman.problem.greedy import GreedyScore

    thetas = init_params(3, torch.Generator().manual_seed(0))
    exact = solve_on_grid(200, None, 0.9, dynamics()).values
    greedy = {"Q*": [GreedyScore(0.005, 0.037)], "UR": [GreedyScore(0.1, 0.2), GreedyScore(0.3, 0.4)]}
    fig = plot_q_figure(thetas[0], exact, {"UR": [thetas[1], thetas[2]]}, curves("UR", [0.1, 0.2]), "test",
                        converged_below=0.5, greedy=greedy)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert "learned Q*\ngreedy shortfall 0.005, wrong in 3.7 % of states" in labels  # one line each, as the runs
    assert any(label.endswith("\ngreedy shortfall 0.2, wrong in 30 % of states") for label in labels)  # seed means
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_legends_give_the_exact_error_uniform_and_where_the_data_are_beside_the_greedy_score():
    from rlstudy.bellman.problem.greedy import GreedyScore

    thetas = init_params(3, torch.Generator().manual_seed(0))
    exact = solve_on_grid(200, None, 0.9, dynamics()).values
    greedy = {"Q*": [GreedyScore(0.005, 0.037)], "UR": [GreedyScore(0.1, 0.2), GreedyScore(0.3, 0.4)]}
    errors = {"Q*": [{"error_exact_normalised": 0.04, "error_exact_weighted_normalised": 0.02}],
              "UR": [{"error_exact_normalised": 0.1, "error_exact_weighted_normalised": 0.05},
                     {"error_exact_normalised": 0.3, "error_exact_weighted_normalised": 0.15}]}
    fig = plot_q_figure(thetas[0], exact, {"UR": [thetas[1], thetas[2]]}, curves("UR", [0.1, 0.2]), "test",
                        converged_below=0.5, greedy=greedy, exact_errors=errors)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert ("learned Q*\ngreedy shortfall 0.005, wrong in 3.7 % of states\n"
            "error/exact Q 0.04 uniform, 0.02 where the data are") in labels
    assert any(label.endswith("wrong in 30 % of states\nerror/exact Q 0.2 uniform, 0.1 where the data are")
               for label in labels)  # seed means, on the line after the greedy score
    import matplotlib.pyplot as plt
    plt.close(fig)
