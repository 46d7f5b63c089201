"""Hostile and broken inputs of the agents' study: a run folder copied over another seed, a returns
table whose steps are not numbers, an --agents JSON given by hand."""

import json
import shutil

import pandas as pd
import pytest

from rlstudy.agents.cli.summarise_agents import summary_row
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from rlstudy.core.provenance import provenance_path

from hostile import cli, one_line_error

AGENTS = {"dqn": {"env": "CartPole-v1", "solved_return": 475}, "mpo": {"env": "Pendulum-v1", "solved_return": -200}}


def write_run(folder, agent, seed, env, steps=(20, 520)):
    """returns.csv and evaluation.csv as train_agent (train_mpo for MPO) writes them, with their record."""
    names = {"env": env, "run_seed": seed, **({} if agent == "mpo" else {"agent": agent})}
    record = {"parameters": names, "seed": 7}
    save_csv(folder / "returns.csv", pd.DataFrame({"episode": [1, 2], "step": list(steps), "return": [20.0, 500.0]}),
             record)
    save_csv(folder / "evaluation.csv", pd.DataFrame({"episode": [1, 2], "return": [480.0, 490.0]}), record)


@pytest.fixture
def runs(tmp_path):
    for seed in (0, 1):
        write_run(tmp_path / "dqn" / f"seed{seed}", "dqn", seed, "CartPole-v1")
    write_run(tmp_path / "mpo" / "seed0", "mpo", 0, "Pendulum-v1")
    return tmp_path


def test_each_run_is_summarised_as_the_run_its_record_names(runs):
    rows = [summary_row(runs / agent / f"seed{seed}", AGENTS) for agent, seed in (("dqn", 0), ("dqn", 1), ("mpo", 0))]
    assert [(r["agent"], r["env"], r["seed"]) for r in rows] == [("dqn", "CartPole-v1", 0), ("dqn", "CartPole-v1", 1),
                                                                  ("mpo", "Pendulum-v1", 0)]
    # the evaluation's own noise, which the claims' per-run tests read: returns 480 and 490, sd 7.07
    assert rows[0]["evaluation_episodes"] == 2 and rows[0]["final_return_sd"] == pytest.approx(50 ** 0.5)


def test_a_run_copied_over_another_seed_is_refused_by_name(runs, cli):
    """cp -a results/agents/dqn/seed1 results/agents/dqn/seed0 gave two identical rows, exit 0."""
    shutil.rmtree(runs / "dqn" / "seed0")
    shutil.copytree(runs / "dqn" / "seed1", runs / "dqn" / "seed0")
    out = runs / "summary.csv"
    status, err = cli("agents.cli.summarise_agents", "--runs", runs / "dqn" / "seed0", runs / "dqn" / "seed1",
                      "--agents", json.dumps(AGENTS), "--out", out)
    one_line_error(status, err, "dqn/seed0/returns.csv", "parameters.run_seed 1, but it is read as 0")
    assert not out.exists()


def test_a_run_of_another_environment_or_agent_is_refused(runs):
    with pytest.raises(InputError, match="parameters.env 'CartPole-v1', but it is read as 'Acrobot-v1'"):
        summary_row(runs / "dqn" / "seed0", {"dqn": {"env": "Acrobot-v1", "solved_return": 1}})
    shutil.copytree(runs / "dqn" / "seed0", runs / "ddpg" / "seed0")
    with pytest.raises(InputError, match="parameters.agent 'dqn', but it is read as 'ddpg'"):
        summary_row(runs / "ddpg" / "seed0", {"ddpg": {"env": "CartPole-v1", "solved_return": 1}})


def test_a_run_without_its_record_is_refused(runs):
    provenance_path(runs / "dqn" / "seed0" / "returns.csv").unlink()
    with pytest.raises(InputError, match=r"seed0/returns\.csv .*no provenance record"):
        summary_row(runs / "dqn" / "seed0", AGENTS)


def test_the_same_folder_twice_is_refused(runs, cli):
    folder = runs / "dqn" / "seed0"
    one_line_error(*cli("agents.cli.summarise_agents", "--runs", folder, folder, "--agents", json.dumps(AGENTS),
                        "--out", runs / "s.csv"), "hold the same run")


def test_a_non_numeric_step_is_one_error_naming_file_and_column(runs):
    write_run(runs / "dqn" / "seed0", "dqn", 0, "CartPole-v1", steps=(20, "x"))
    with pytest.raises(InputError, match=r"seed0/returns\.csv \(dqn training returns\): column 'step' is not a finite "
                                         r"number in row 1 \('x'\)"):
        summary_row(runs / "dqn" / "seed0", AGENTS)


@pytest.mark.parametrize("agents, message", [
    ('{"dqn": 3}', "agent 'dqn' must be"),
    ('{"dqn": {"env": "CartPole-v1"}}', "agent 'dqn' must be"),
    ('{"dqn": {"env": 1, "solved_return": 1}}', "agent 'dqn' must be"),
    ('{"dqn": {"env": "CartPole-v1", "solved_return": NaN}}', "agent 'dqn' must be"),
    ('[1]', "expected a JSON object"),
    ('{"dqn": ', "not valid JSON"),
])
def test_a_malformed_agents_json_by_hand_is_one_error(runs, cli, agents, message):
    status, err = cli("agents.cli.summarise_agents", "--runs", runs / "dqn" / "seed0", "--agents", agents,
                      "--out", runs / "s.csv")
    assert status == 2 and message in err and "Traceback" not in err, err
    assert not (runs / "s.csv").exists()


def test_a_run_folder_not_named_seed_n_is_refused(runs):
    shutil.copytree(runs / "dqn" / "seed0", runs / "dqn" / "seedX")
    with pytest.raises(InputError, match="a run folder is named seed<N>, got 'seedX'"):
        summary_row(runs / "dqn" / "seedX", AGENTS)
