"""The agents', the offline study's and the error budget's results blocks, rendered from hand-made tables."""

from pathlib import Path

import pandas as pd
import pytest

from rlstudy.report.cli.render_readme import markers, replace_block
from rlstudy.agents.agents_page import render_agents
from rlstudy.bellman.results.bellman_page import budget_reading, render_budget
from rlstudy.offline.offline_page import render_offline
from rlstudy.report.study_tables import STUDY_TABLES

ROOT = Path(__file__).resolve().parents[3]
AGENTS = pd.DataFrame({"agent": ["dqn", "mpo"], "env": ["CartPole-v1", "Pendulum-v1"], "seed": [0, 1],
                       "episodes": [4273, 75], "steps": [500000, 15000], "final_mean_return": [149.44, -121.86],
                       "solved_return": [475, -200], "solved": [False, True]})
OFFLINE = pd.DataFrame({"env": ["CartPole-v1"] * 2, "seed": [0, 0], "learner": ["bcq", "dqn"],
                        "iterations": [20000, 20000], "final_return": [295.71, 9.6], "final_std": [20.04, 0.5],
                        "best_return": [472.5, 19.0], "buffer_return": [182.51, 182.51],
                        "behavioural_return": [203.5, 203.5], "at_least_buffer": [True, False]})
NAN = float("nan")
BUDGET = pd.DataFrame({"task": ["control", "control"], "part": ["reach", "optimiser"], "estimator": ["any", "UR"],
                       "setting": [NAN, "sgd"], "error_exact_normalised": [0.0123, 0.187],
                       "error_exact_weighted_normalised": [0.011, 0.2], "converged": [True, NAN],
                       "runs": [NAN, 40], "error_exact_normalised_min": [NAN, 0.05],
                       "error_exact_normalised_max": [NAN, 0.851]})


def test_the_agents_block_has_a_row_per_run_with_its_verdict():
    start, end = markers("agents-results")
    block = render_agents(AGENTS, "abc1234", start, end)
    lines = block.splitlines()
    assert lines[0] == start and lines[-1] == end
    assert "results/agents/summary.csv` (commit abc1234)" in lines[1]
    assert lines[-3] == "| dqn | CartPole-v1 | 0 | 4273 | 500000 | 149.4 | 475 | **no** |"
    assert lines[-2] == "| mpo | Pendulum-v1 | 1 | 75 | 15000 | -121.9 | -200 | yes |"


def test_the_offline_block_has_a_row_per_learner_against_the_buffer():
    start, end = markers("offline-results")
    lines = render_offline(OFFLINE, "abc1234", start, end).splitlines()
    assert lines[-3] == "| CartPole-v1 | 0 | bcq | 20000 | 295.7 (20.0) | 472.5 | 182.5 | 203.5 | yes |"
    assert lines[-2] == "| CartPole-v1 | 0 | dqn | 20000 | 9.6 (0.5) | 19.0 | 182.5 | 203.5 | **no** |"


def test_the_budget_block_has_a_row_per_part_with_the_runs_spread():
    start, end = markers("budget-results")
    lines = render_budget(BUDGET, "abc1234", start, end).splitlines()
    assert lines[0] == start and lines[-1] == end
    assert "| control | reach | any |  | 0.012 | 0.011 | yes |" in lines
    assert "| control | optimiser | UR | sgd | 0.187 [0.050, 0.851] | 0.200 | 40 runs |" in lines
    unweighted = render_budget(BUDGET.drop(columns="error_exact_weighted_normalised"), "c", start, end)
    assert "weighted" not in unweighted and "| 0.187 [0.050, 0.851] | 40 runs |" in unweighted


def test_the_budget_reading_names_the_step_that_adds_most():
    """reach 0.01 -> population 0.02 (x2) -> finite data 0.1 (x5, a fit still moving) -> runs 0.2 (x2)."""
    rows = [("reach", "any", NAN, 0.01, True), ("population", "UR", NAN, 0.02, True),
            ("finite_data", "UR", NAN, 0.1, False), ("optimiser", "UR", "sgd", 0.2, NAN),
            ("optimiser", "DS", "sgd", 0.5, NAN)]  # DS was not fitted: no reading
    table = pd.DataFrame([{"task": "control", "part": p, "estimator": e, "setting": s, "error_exact_normalised": d,
                           "converged": c, "runs": 10, "error_exact_normalised_min": d, "error_exact_normalised_max": d}
                          for p, e, s, d, c in rows])
    reading = budget_reading(table)
    assert reading[-1] == "| control | UR | sgd | 0.010 | x2 | **x5*** | x2 | 0.200 |"
    assert not any("| DS |" in line for line in reading)
    assert not any("weighted" in line for line in reading)  # no weighted column, no weighted chain


def test_the_weighted_reading_starts_from_the_weighted_reach():
    """Weighted metric: weighted reach 0.004 -> population 0.012 (x3) -> finite data 0.024 (x2) -> runs 0.24
    (x10); the uniform reach (0.01 in both metrics) is the uniform chain's start only."""
    rows = [("reach", 0.01, 0.01), ("reach_weighted", 0.02, 0.004), ("population", 0.02, 0.012),
            ("finite_data", 0.1, 0.024), ("optimiser", 0.2, 0.24)]
    table = pd.DataFrame([{"task": "control", "part": p, "estimator": "any" if p.startswith("reach") else "UR",
                           "setting": "sgd" if p == "optimiser" else NAN, "error_exact_normalised": d,
                           "error_exact_weighted_normalised": w, "converged": True if p != "optimiser" else NAN,
                           "runs": 10} for p, d, w in rows])
    reading = budget_reading(table)
    weighted = reading[reading.index(next(line for line in reading if "weighted by where the data are" in line)):]
    assert weighted[-1] == "| control | UR | sgd | 0.004 | x3 | x2 | **x10** | 0.240 |"
    assert "| control | UR | sgd | 0.010 | x2 | **x5** | x2 | 0.200 |" in reading  # the uniform chain, unchanged


@pytest.mark.parametrize("study", STUDY_TABLES, ids=lambda study: study.marker)
def test_each_page_holds_its_markers_once_and_the_renderer_reads_only_declared_columns(study):
    start, end = markers(study.marker)
    page = (ROOT / study.page).read_text()
    assert page.count(start) == 1 and page.count(end) == 1
    table = {"agents-results": AGENTS, "offline-results": OFFLINE, "budget-results": BUDGET}[study.marker]
    declared = [*study.columns, *study.finite]
    block = study.render(table[declared], "c", start, end)  # a column it did not declare would raise here
    assert replace_block(page, block, study.page, start, end).count(block) == 1
