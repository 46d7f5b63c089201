"""The figures' layout (issue 40): a Q figure about as tall as wide, legends outside every axes'
data, and the budget figure in the common style (plotting/style.setup). The whole set of figures of a
smoke build is checked in tests/workflow/test_report_workflow.py."""

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch

from figure_layout import MAX_ASPECT, legends_over_axes, png_size
from rlstudy.agents.figures import learning_curve_figure
from rlstudy.bellman.cli.plot_budget import plot_budget
from rlstudy.bellman.problem.exact import solve_on_grid
from rlstudy.bellman.figures.q import plot_q_figure
from rlstudy.bellman.numerics.compiled.qnet import init_params
from rlstudy.plotting import style
from bellman_fixtures import dynamics


def error_curves(estimator, finals):
    return pd.DataFrame([dict(estimator=estimator, seed=seed, iteration=k, rel_error=e, rel_error_exact=2 * e)
                         for seed, final in enumerate(finals) for k, e in enumerate(np.geomspace(1.0, final, 5))])


def q_figure():
    thetas = init_params(3, torch.Generator().manual_seed(0))
    curves = pd.concat([error_curves("UR", [0.1, 0.2]), error_curves("DS", [1.3, 1.1])])
    return plot_q_figure(thetas[0], solve_on_grid(200, None, 0.9, dynamics()).values,
                         {"UR": [thetas[1], thetas[2]], "DS": [thetas[2], thetas[1]]}, curves, "test",
                         converged_below=0.5)


def mpo_against_ddpg():
    """MPO's curve beside DDPG's, as plot_mpo draws it: the legend once hid DDPG's curve."""
    def returns(level, seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame({"episode": np.arange(40), "step": 200 * np.arange(1, 41),
                             "return": level + np.linspace(0, 800, 40) + rng.normal(0, 30, 40)})
    return learning_curve_figure({"MPO": [returns(-1200, 0), returns(-1150, 1)],
                                  "DDPG": [returns(-1400, 2), returns(-1300, 3)]}, "step", 10, "test", -200.0)


def budget_table():
    rows = [dict(task="control", part="reach", estimator="any", setting=None, converged=True,
                 error_exact_normalised=0.02)]
    for estimator in ("UR", "DS", "BFF"):
        for part, error in (("population", 0.1), ("finite_data", 0.2)):
            rows.append(dict(task="control", part=part, estimator=estimator, setting=None, converged=part == "population",
                             error_exact_normalised=error))
        for setting in ("sgd", "cbo"):
            rows.append(dict(task="control", part="optimiser", estimator=estimator, setting=setting, converged=True,
                             error_exact_normalised=1.0, error_exact_normalised_min=0.8,
                             error_exact_normalised_max=1.2))
    return pd.DataFrame(rows)


def test_the_q_figure_is_two_by_two_and_not_a_strip(tmp_path):
    """Drawn 1 x 4, it was about 6 times as wide as tall: a strip in the report."""
    fig = q_figure()
    assert [ax.get_subplotspec().get_geometry()[:2] for ax in fig.axes] == [(2, 2)] * 4
    style.save(fig, tmp_path / "q", formats=["png"], dpi=50)
    width, height = png_size(tmp_path / "q.png")
    assert width / height <= MAX_ASPECT


@pytest.mark.parametrize("draw", [q_figure, mpo_against_ddpg, lambda: plot_budget(budget_table(), "control")],
                         ids=["q", "mpo-against-ddpg", "budget"])
def test_no_legend_lies_over_any_axes(draw):
    fig = draw()
    assert legends_over_axes(fig) == []
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_the_budget_figure_has_the_common_style():
    """It drew with matplotlib's defaults and tab10 where every other figure has style.setup's look."""
    import matplotlib.pyplot as plt

    matplotlib.rcdefaults()
    fig = plot_budget(budget_table(), "control")
    ax = fig.axes[0]
    style.setup()
    reference_fig, reference = plt.subplots()
    assert ax.spines["left"].get_edgecolor() == reference.spines["left"].get_edgecolor()
    assert ax.yaxis.label.get_size() == reference.yaxis.label.get_size()
    assert any(line.get_visible() for line in ax.get_ygridlines())
    palette = {tuple(np.round(colour, 6)) for colour in style.palette(range(10)).values()}
    bars = {tuple(np.round(patch.get_facecolor()[:3], 6)) for patch in ax.patches}
    assert bars and bars <= palette
    plt.close(fig)
    plt.close(reference_fig)


def test_every_module_that_draws_a_figure_sets_the_common_style():
    """A module making a figure without style.setup() draws in matplotlib's defaults, as plot_budget did."""
    from pathlib import Path

    src = Path(style.__file__).resolve().parents[1]
    drawing = [path for path in sorted(src.rglob("*.py"))
               if any(call in path.read_text() for call in ("plt.subplots(", "subplot_mosaic(", "plt.figure("))]
    assert drawing and [str(p.relative_to(src)) for p in drawing if "style.setup()" not in p.read_text()] == []


def test_mpo_against_ddpg_gives_each_seed_in_a_table_not_the_title(tmp_path):
    """Eight seeds a method in the title widened the figure until the curves had about 40 % of it."""
    import matplotlib.pyplot as plt

    def returns(level, seed):
        rng = np.random.default_rng(seed)
        return pd.DataFrame({"episode": np.arange(40), "step": 200 * np.arange(1, 41),
                             "return": level + np.linspace(0, 800, 40) + rng.normal(0, 30, 40)})
    seeds = [f"seed{10000 + i}" for i in range(8)]
    by_seed = {"MPO": [(s, -150.0 - 10 * i) for i, s in enumerate(seeds)],
               "DDPG": [(s, -221.2 if i == 2 else -120.0) for i, s in enumerate(seeds)]}
    fig = learning_curve_figure({"MPO": [returns(-1200, i) for i in range(8)],
                                 "DDPG": [returns(-1300, i) for i in range(8)]}, "step", 10,
                                "Pendulum-v1: MPO and DDPG, mean and min-max over seeds", -200.0, by_seed=by_seed)
    curves, table_axes = fig.axes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert curves.get_window_extent(renderer).width / fig.dpi >= 0.7 * fig.get_tightbbox(renderer).width
    [table] = table_axes.tables
    cells = table.get_celld()
    assert cells[0, 0].get_text().get_text() == "10000" and cells[2, 2].get_text().get_text() == "-221.2"
    assert cells[2, 2].get_text().get_color() != cells[1, 2].get_text().get_color()  # below the solved bar
    assert "-221.2" not in curves.get_title() and legends_over_axes(fig) == []
    style.save(fig, tmp_path / "mpo", formats=["png"], dpi=60)
    width, height = png_size(tmp_path / "mpo.png")
    assert width / height <= MAX_ASPECT
    plt.close(fig)


def test_the_sweeps_grey_cells_say_what_they_are():
    """A diverged cell was grey with no word (seaborn annotates no cell without a value) and no legend said why."""
    import matplotlib.pyplot as plt

    from rlstudy.bellman.figures.sweep import DIVERGED, GREY_MEANS, NO_RUN, plot_sweep_figure

    rows = [dict(grid="g", x="eta", x_value=x, y="noise", y_value=y, seed=seed, final_rel_error=0.4 + x,
                 diverged=(x, y) == (1.0, 3.0)) for x in (0.1, 1.0) for y in (0.0, 3.0) for seed in (0, 1)
            if (x, y) != (0.1, 3.0)]  # one pair not run
    fig = plot_sweep_figure(pd.DataFrame(rows), 0.5, "test")
    ax = fig.axes[0]
    words = [text.get_text() for text in ax.texts]
    assert DIVERGED in words and NO_RUN in words and "0.50" in words
    assert [text.get_text() for text in fig.legends[0].get_texts()] == [GREY_MEANS]
    assert legends_over_axes(fig) == []
    plt.close(fig)
