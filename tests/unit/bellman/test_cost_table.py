"""The equal-cost table (results/cost.csv) by hand, and the sweep's seeds kept apart from the study's."""

import math
from pathlib import Path

import pandas as pd
import yaml

from rlstudy.bellman.cli.summarise_cost import cost_row, evaluations_to
from rlstudy.bellman.config_checks import sweep_seed_problems

ROOT = Path(__file__).resolve().parents[3]


def curve(errors, exact):
    return pd.DataFrame({"dataset": "ours", "task": "control", "setting": "sgd", "estimator": "UR", "seed": 3,
                         "iteration": range(len(errors)), "evaluations": [0, 100, 250, 400][:len(errors)],
                         "rel_error": errors, "rel_error_exact": exact})


def test_evaluations_to_the_bound_by_hand():
    run = curve([1.0, 0.6, 0.5, 0.3], [1.0, 0.7, 0.8, 0.9])
    assert evaluations_to(run, "rel_error", 0.5) == 250  # the first iteration at or below the bound
    assert evaluations_to(run, "rel_error_exact", 0.5) == math.inf  # never
    row = cost_row(run, 0.5)
    assert row["seed"] == 3 and row["evaluations"] == 400 and row["final_rel_error_exact"] == 0.9
    assert row["evaluations_to_bound"] == 250 and row["evaluations_to_bound_exact"] == math.inf


def test_the_sweep_tunes_on_seeds_of_its_own():
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert sweep_seed_problems(config, {}) == []  # the shipped config keeps them apart
    config["cbo_sweep"]["seeds"] = [3, 100]
    problems = sweep_seed_problems(config, {})
    assert len(problems) == 1 and "'cbo_sweep.seeds': [3]" in problems[0]
