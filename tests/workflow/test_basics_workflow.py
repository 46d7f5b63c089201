"""The basics agents' rules at smoke scale, in a temporary copy of the project, and their CLI's errors."""

import json
import sys

import pandas as pd
import pytest

from rlstudy.agents.cli import train_agent
from rlstudy.agents.registry import AGENTS as REGISTRY
from rlstudy.agents.registry import BASICS
from rlstudy.agents.cli.summarise_agents import summary_row
from rlstudy.core.cli import run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_csv
from shipped_params import CONFIG

AGENTS = BASICS  # the registry's basics agents


@pytest.mark.parametrize("args, message", [
    (["--agent", "dqn", "--env", "NoSuchEnv-v0"], "config 'dqn.env': cannot make environment 'NoSuchEnv-v0'"),
    (["--agent", "ddpg", "--env", "CartPole-v1"],
     "config 'ddpg.env': CartPole-v1 has a Discrete action space; this agent needs Box"),
    (["--agent", "dqn", "--env", "CartPole-v1", "--params", '{"epsilon": 0.1}'],
     "config 'dqn.params': unknown keys ['epsilon']"),
])
def test_bad_input_is_a_clear_error_naming_the_config_key(args, message, monkeypatch, capsys, tmp_path):
    agent = args[args.index("--agent") + 1]  # its shipped parameters (a later --params replaces them)
    monkeypatch.setattr(sys, "argv", ["train_agent", "--run-seed", "0", "--seed", "1", "--evaluation-episodes", "1",
                                      "--params",
                                      json.dumps(CONFIG[agent]["params"]), "--out-dir", str(tmp_path), *args])
    with pytest.raises(SystemExit) as stop:
        run(train_agent.main)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_summary_marks_a_run_below_its_bar_as_failing(tmp_path):
    agents = {"dqn": {"env": "CartPole-v1", "solved_return": 475}}
    for seed, evaluation in ((0, [150, 148]), (1, [500, 450])):
        run_dir = tmp_path / "dqn" / f"seed{seed}"
        record = {"parameters": {"agent": "dqn", "env": "CartPole-v1", "run_seed": seed}}  # as train_agent's
        save_csv(run_dir / "returns.csv", pd.DataFrame({"episode": [1, 2], "step": [20, 520], "return": [20.0, 500.0]}),
                 record)
        save_csv(run_dir / "evaluation.csv", pd.DataFrame({"episode": [1, 2], "return": evaluation}), record)
    failing, solved = (summary_row(tmp_path / "dqn" / f"seed{seed}", agents) for seed in (0, 1))
    assert (failing["final_mean_return"], failing["solved"]) == (149.0, False)
    assert (solved["final_mean_return"], solved["solved"]) == (475.0, True)  # the bar itself counts as solved
    assert (solved["episodes"], solved["steps"], solved["solved_return"]) == (2, 520, 475.0)
    with pytest.raises(InputError, match="agent 'dqn' is not in --agents"):
        summary_row(tmp_path / "dqn" / "seed0", {"mpo": agents["dqn"]})


@pytest.mark.integration
def test_smoke_profile_builds_every_agent_figure_and_run_file(smoke_project):
    workdir = smoke_project

    figures = workdir / "figures" / "agents"
    names = [f"{a}_learning_curve" for a in AGENTS] + [REGISTRY[a].value_figure for a in AGENTS]
    for name in names:
        for fmt in ("png", "pdf"):
            assert (figures / f"{name}.{fmt}").stat().st_size > 10_000, name
    for agent in AGENTS:
        assert (figures / f"{agent}_rollout.gif").read_bytes()[:6] == b"GIF89a"

    for folder in sorted((workdir / "results" / "agents").glob("*/seed*")):
        model = REGISTRY[folder.parent.name].model_file
        for name in ("returns.csv", "evaluation.csv", model):
            assert (folder / f"{name}.provenance.json").is_file(), folder / name
        returns = pd.read_csv(folder / "returns.csv")
        assert list(returns.columns) == ["episode", "step", "return"]
        assert returns["step"].is_monotonic_increasing and returns["episode"].tolist() == list(range(1, len(returns) + 1))
        evaluation = pd.read_csv(folder / "evaluation.csv")
        assert list(evaluation.columns) == ["episode", "return"]
        assert evaluation["episode"].tolist() == list(range(1, len(evaluation) + 1))

    summary = pd.read_csv(workdir / "results" / "agents" / "summary.csv")
    assert list(summary.columns) == ["agent", "env", "seed", "episodes", "steps", "final_mean_return",
                                     "solved_return", "solved", "final_return_sd", "evaluation_episodes"]
    # the per-run claims' noise (claims.yaml run_noise): the evaluation episodes' spread and count
    assert (summary["evaluation_episodes"] >= 1).all() and (summary["final_return_sd"] >= 0).all()
    assert (summary["solved"] == (summary["final_mean_return"] >= summary["solved_return"])).all()
    assert sorted(set(summary["agent"])) == sorted(REGISTRY)
