"""results/summary.csv's columns measured on the final networks: appended after the curve's, the
greedy ones for control only, each aggregated over seeds like the others."""

import dataclasses
import json
import math
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from rlstudy.bellman.cli import summarise
from rlstudy.bellman.problem.exact import solve_on_grid
from rlstudy.bellman.problem.greedy import GreedyJudge
from rlstudy.bellman.learners.metrics import (
    common_centred_error,
    common_centred_norm,
    q_on_grid,
    weighted_centred_error,
    weighted_centred_norm,
)
from rlstudy.bellman.numerics.compiled.qnet import init_params, to_state_dict
from rlstudy.bellman.problem.stationary import stationary_density
from bellman_fixtures import dynamics as shipped_dynamics
from rlstudy.core.atomic_writes import save_csv, save_npy, save_tensors
from rlstudy.core.provenance import provenance

CURVE_COLUMNS = ["dataset", "task", "setting", "estimator", "seed", "iterations", "final_rel_error", "min_rel_error",
                 "final_rel_error_exact", "min_rel_error_exact", "evaluations", "converged", "converged_exact"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("summary")
    dynamics = shipped_dynamics()
    thetas = init_params(2, torch.Generator().manual_seed(0))
    entries, curves = [], []
    for task, policy in (("control", None), ("evaluation", "evaluation")):
        save_npy(root / f"{task}.npy", solve_on_grid(400, policy, 0.9, dynamics).values, provenance({}, None, {}))
        density = stationary_density("evaluation" if task == "evaluation" else "uniform", dynamics)[0]
        save_npy(root / f"{task}_density.npy", density, provenance({}, None, {}))
        entries.append({"dataset": "ours", "task": task, "exact": str(root / f"{task}.npy"),
                        "dynamics": dataclasses.asdict(dynamics), "density": str(root / f"{task}_density.npy")})
        for seed, theta in enumerate(thetas):
            folder = root / task / f"seed{seed}"
            save_tensors(folder / "q.pt", to_state_dict(theta), provenance({}, None, {}))
            curve = pd.DataFrame({"dataset": "ours", "task": task, "setting": "sgd", "estimator": "UR", "seed": seed,
                                  "iteration": [0, 1], "evaluations": [0, 10], "error": [2.0, 1.0], "rel_error": [1, 0.5],
                                  "error_exact": [2.0, 1.5], "rel_error_exact": [1, 0.75]})
            save_csv(folder / "errors.csv", curve, provenance({}, None, {}))
            curves.append(str(folder / "errors.csv"))
    argv = sys.argv
    sys.argv = ["summarise", "--curves", *curves, "--exact", json.dumps({"rows": entries}),
                "--problem", json.dumps({"dynamics": dataclasses.asdict(shipped_dynamics()), "gamma": 0.9}),
                "--converged-below", "0.6", "--out", str(root / "summary.csv"),
                "--stats-out", str(root / "stats.csv")]
    summarise.main()
    sys.argv = argv
    return root, thetas, pd.read_csv(root / "summary.csv"), pd.read_csv(root / "stats.csv")


def test_the_new_columns_are_appended(tables):
    _, _, summary, stats = tables
    assert list(summary.columns) == CURVE_COLUMNS + ["final_error_exact_normalised",
                                                     "final_error_exact_common_normalised",
                                                     "final_greedy_shortfall", "final_greedy_wrong_share",
                                                     "final_error_exact_weighted_normalised"]
    assert list(stats.columns[:14]) == ["dataset", "task", "setting", "estimator", "n",
                                        *(f"final_rel_error_{s}" for s in ("mean", "median", "iqm", "ci_low", "ci_high")),
                                        "final_rel_error_exact_mean", "final_rel_error_exact_median",
                                        "final_rel_error_exact_iqm", "final_rel_error_exact_ci_low"]
    assert "final_greedy_shortfall_ci_high" == stats.columns[-11]
    assert stats.columns[-6] == "final_greedy_wrong_share_ci_high"
    assert stats.columns[-1] == "final_error_exact_weighted_normalised_ci_high"


def test_control_runs_are_scored_and_evaluation_runs_left_empty(tables):
    root, thetas, summary, stats = tables
    control = summary[summary["task"] == "control"].sort_values("seed")
    evaluation = summary[summary["task"] == "evaluation"]
    assert control.notna().all().all()
    assert evaluation[["final_greedy_shortfall", "final_greedy_wrong_share"]].isna().all().all()
    assert evaluation[["final_error_exact_normalised", "final_error_exact_common_normalised"]].notna().all().all()
    exact = np.load(root / "control.npy")
    judge = GreedyJudge.build(exact, 0.9, shipped_dynamics())
    for theta, (_, row) in zip(thetas, control.iterrows()):
        score = judge.score(q_on_grid(theta, 400).double().numpy())
        assert row["final_greedy_shortfall"] == pytest.approx(score.shortfall, rel=1e-8)
        assert row["final_greedy_wrong_share"] == pytest.approx(score.wrong_share, rel=1e-8)
        reference = torch.from_numpy(exact[::4])
        expected = common_centred_error(q_on_grid(theta).double(), reference) / common_centred_norm(reference)
        assert row["final_error_exact_common_normalised"] == pytest.approx(expected, rel=1e-8)
    row = stats[stats["task"] == "control"].iloc[0]
    assert row["final_greedy_shortfall_mean"] == pytest.approx(control["final_greedy_shortfall"].mean(), rel=1e-8)
    assert math.isnan(stats[stats["task"] == "evaluation"].iloc[0]["final_greedy_shortfall_mean"])


def test_the_weighted_error_weighs_by_the_stationary_density(tables):
    root, thetas, summary, _ = tables
    for task in ("control", "evaluation"):
        exact = torch.from_numpy(np.load(root / f"{task}.npy")[::4])
        weights = torch.from_numpy(np.load(root / f"{task}_density.npy")[::2])
        for theta, (_, row) in zip(thetas, summary[summary["task"] == task].sort_values("seed").iterrows()):
            q = q_on_grid(theta).double()
            expected = weighted_centred_error(q, exact, weights) / weighted_centred_norm(exact, weights)
            assert row["final_error_exact_weighted_normalised"] == pytest.approx(expected, rel=1e-8)
            if task == "control":  # the uniform behaviour's density is flat: the uniform metric
                assert row["final_error_exact_weighted_normalised"] == pytest.approx(
                    row["final_error_exact_normalised"], rel=1e-8)
