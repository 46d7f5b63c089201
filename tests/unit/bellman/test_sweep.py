import math

import numpy as np
import pandas as pd
import pytest

from rlstudy.bellman.cli.summarise_sweep import sweep_table
from rlstudy.bellman.figures.sweep import grid_matrix, tick_label
from rlstudy.bellman.learners.sweep import format_value, sweep_points
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv

BASE = {"particles": 30, "particle_batch": 30, "samples": 1000, "beta": 10.0, "noise": 0.3}


def sweep(**grids):
    return {"task": "control", "estimator": "UR", "seeds": [0, 1], "base": BASE, "grids": grids}


def test_points_are_the_product_of_each_grid_with_the_base_elsewhere():
    points = sweep_points(sweep(beta_noise={"beta": [1.0, 100.0], "noise": [0.0, 0.1, 1.0]},
                                n_m={"particles": [10, 50], "samples": [100]}))
    assert len(points) == 2 * 3 + 2 * 1
    first = points[0]
    assert (first.grid, first.label) == ("beta_noise", "beta=1,noise=0")
    assert first.params == {**BASE, "beta": 1.0, "noise": 0.0}
    # changing N keeps one epoch one step over the swarm
    assert [p.params["particle_batch"] for p in points[6:]] == [10, 50]
    assert len({(p.grid, p.label) for p in points}) == len(points)


def test_with_moves_a_grids_fixed_point_and_the_axes_win():
    points = sweep_points(sweep(g={"beta": [1.0], "samples": [50], "with": {"noise": 3.0, "beta": 7.0}}))
    assert [p.params for p in points] == [{**BASE, "noise": 3.0, "beta": 1.0, "samples": 50}]
    assert points[0].label == "beta=1,samples=50"


def test_a_grid_needs_two_parameters():
    with pytest.raises(ValueError, match="cbo_sweep.grids.g"):
        sweep_points(sweep(g={"beta": [1.0]}))


def test_values_print_as_in_the_config():
    assert [format_value(v) for v in (1000.0, 0.01, 30, "reward_level", 1e-4)] == \
        ["1000", "0.01", "30", "reward_level", "0.0001"]


def test_tick_labels_read_numbers_back_from_text():
    assert [tick_label(v) for v in ("0.0", 1000.0, "reward_level", "30")] == ["0", "1000", "reward_level", "30"]


def write_curve(path, finals, diverged=False, params=None):
    """An errors.csv as run_method writes it (its run keys, errors and evaluation counts), with the
    provenance record naming the run: its task, estimator, seed and CBO parameters."""
    rel = np.array([1.0, *finals])
    keys = {"dataset": "ours", "task": "control", "setting": "cbo", "estimator": "UR", "seed": int(path.parent.name[4:])}
    record = {"parameters": {**keys, "setting": "cbo-sweep", "params": params or {}}}
    save_csv(path, pd.DataFrame({**keys, "iteration": range(len(rel)), "evaluations": 10 * np.arange(len(rel)),
                                 "error": 2.0 * rel, "rel_error": rel, "error_exact": 3.0 * rel,
                                 "rel_error_exact": rel, "diverged": diverged}), record)


def test_table_has_one_row_per_run_and_marks_divergence(tmp_path):
    config = sweep(beta_noise={"beta": [1.0, 100.0], "noise": [0.0]})
    for point in sweep_points(config):
        for seed in config["seeds"]:
            diverged = point.x_value == 100.0 and seed == 1
            write_curve(tmp_path / point.grid / point.label / f"seed{seed}" / "errors.csv",
                        [0.7, 0.4 + 0.1 * seed], diverged, point.params)
    table, inputs = sweep_table(config, tmp_path, converged_below=0.45)
    assert len(table) == len(inputs) == 4
    assert {"grid", "x", "x_value", "y", "y_value", "seed", "particles", "samples", "beta", "noise", "evaluations",
            "final_rel_error", "min_rel_error", "diverged", "converged"} <= set(table.columns)
    row = table[(table["x_value"] == 100.0) & (table["seed"] == 1)].iloc[0]
    assert row["diverged"] and math.isinf(row["final_rel_error"]) and not row["converged"]
    assert table["converged"].tolist() == [True, False, True, False]
    assert table["evaluations"].tolist() == [20] * 4

    final, text = grid_matrix(table)
    assert list(final.columns) == [1.0, 100.0] and list(final.index) == [0.0]
    assert final.loc[0.0, 1.0] == pytest.approx(0.45)
    assert text.loc[0.0, 100.0] == "div" and math.isnan(final.loc[0.0, 100.0])


def test_table_names_a_missing_run(tmp_path):
    with pytest.raises(Exception, match="beta_noise/beta=1,noise=0/seed0/errors.csv"):
        sweep_table(sweep(beta_noise={"beta": [1.0], "noise": [0.0]}), tmp_path, converged_below=0.5)



def test_two_values_printing_alike_are_refused_naming_both():
    """beta 1234567.0 and 1234568.0 both print as 1.23457e+06: they would share one run folder."""
    with pytest.raises(ValueError, match=r"beta=1234567.0, noise=0.0 and beta=1234568.0, noise=0.0 .* labelled"):
        sweep_points(sweep(g={"beta": [1234567.0, 1234568.0], "noise": [0.0]}))


def test_the_table_refuses_a_run_whose_record_names_other_parameters(tmp_path):
    """A run copied into another point's folder (or made with other values) is not that point's row."""
    config = sweep(beta_noise={"beta": [1.0, 100.0], "noise": [0.0]}, )
    config["seeds"] = [0]
    first, second = sweep_points(config)
    write_curve(tmp_path / first.grid / first.label / "seed0" / "errors.csv", [0.5], params=first.params)
    write_curve(tmp_path / second.grid / second.label / "seed0" / "errors.csv", [0.5], params=first.params)
    with pytest.raises(InputError, match=r"beta=100,noise=0/seed0/errors.csv .*record gives parameters.params.beta 1.0, "
                                         r"but it is read as 100.0"):
        sweep_table(config, tmp_path, converged_below=0.5)


def test_a_sweep_given_by_hand_is_checked():
    with pytest.raises(InputError, match="--sweep: not a valid config 'cbo_sweep'"):
        sweep_table({"task": "control"}, None, converged_below=0.5)
