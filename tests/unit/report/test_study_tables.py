"""The agents' and the offline study's results blocks, rendered from hand-made summaries."""

from pathlib import Path

import pandas as pd
import pytest

from rlstudy.report.cli.render_readme import markers, replace_block
from rlstudy.report.study_tables import STUDY_TABLES, render_agents, render_offline

ROOT = Path(__file__).resolve().parents[3]
AGENTS = pd.DataFrame({"agent": ["dqn", "mpo"], "env": ["CartPole-v1", "Pendulum-v1"], "seed": [0, 1],
                       "episodes": [4273, 75], "steps": [500000, 15000], "final_mean_return": [149.44, -121.86],
                       "solved_return": [475, -200], "solved": [False, True]})
OFFLINE = pd.DataFrame({"env": ["CartPole-v1"] * 2, "seed": [0, 0], "learner": ["bcq", "dqn"],
                        "iterations": [20000, 20000], "final_return": [295.71, 9.6], "final_std": [20.04, 0.5],
                        "best_return": [472.5, 19.0], "buffer_return": [182.51, 182.51],
                        "behavioural_return": [203.5, 203.5], "at_least_buffer": [True, False]})


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


@pytest.mark.parametrize("study", STUDY_TABLES, ids=lambda study: study.marker)
def test_each_page_holds_its_markers_once_and_the_renderer_reads_only_declared_columns(study):
    start, end = markers(study.marker)
    page = (ROOT / study.page).read_text()
    assert page.count(start) == 1 and page.count(end) == 1
    table = {"agents-results": AGENTS, "offline-results": OFFLINE}[study.marker]
    declared = [*study.columns, *study.finite]
    block = study.render(table[declared], "c", start, end)  # a column it did not declare would raise here
    assert replace_block(page, block, study.page, start, end).count(block) == 1
