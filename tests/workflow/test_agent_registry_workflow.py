"""Adding an agent touches the files docs/agents.md lists, and nothing else: on a temporary copy of
the project a toy agent is added so (its module, its registry line, its config section, its schema
entry, its smoke scale), the workflow plans its training, figures and summary row,
and its training job runs through the workflow at smoke scale."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from project_copy import copy_project, snakemake

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
REGISTRY_END = '    AgentEntry("mpo", "kinds", "MPO", "train_mpo", "model.pt", None, 30),\n'
TOY_LINE = '    AgentEntry("toy", "toy_agent", "MyopicTable", "train_agent", "q_table.npy", "toy_value_policy", 5),\n'
TOY_CONFIG = """
toy:
  env: MountainCar-v0
  seeds: [0]
  solved_return: -110
  evaluation_episodes: 2
  rollout_steps: 20
  params:
    bins: [11, 11]
    position_range: [-1.2, 0.6]
    velocity_range: [-0.1, 0.1]
    action_repeat: 10
    episodes: 200
    max_steps: 50
    learning_rate: 0.85
    gamma: 0.99
    log_every: 20
"""
TOY_SMOKE = """
toy:
  evaluation_episodes: 1
  params:
    episodes: 6
    log_every: 3
"""
RUN = "results/agents/toy/seed0"


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path.name} changed: update this test"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def toy_project(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("agents"))
    agents = workdir / "src" / "rlstudy" / "agents"
    shutil.copy(HERE / "toy_agent.py", agents / "toy_agent.py")  # the toy (tests/workflow/toy_agent.py)
    edit(agents / "registry.py", REGISTRY_END, REGISTRY_END + TOY_LINE)
    with open(workdir / "config.yaml", "a") as config:
        config.write(TOY_CONFIG)
    with open(workdir / "workflow" / "profiles" / "smoke" / "scale.yaml", "a") as smoke:
        smoke.write(TOY_SMOKE)
    schema_path = workdir / "workflow" / "schemas" / "config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    schema["required"].append("toy")
    schema["properties"]["toy"] = {"$ref": "#/$defs/tabular_agent"}
    schema_path.write_text(yaml.safe_dump(schema, sort_keys=False))
    return workdir


def test_the_workflow_plans_the_toy_agent_everywhere_the_registry_reaches(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "-n", "-p", "agents")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for planned in (f"{RUN}/q_table.npy", "figures/agents/toy_value_policy.png", "figures/agents/toy_rollout.gif",
                    "--agent toy"):
        assert planned in result.stdout, planned
    summary = next(line for line in result.stdout.splitlines() if "summarise_agents" in line and "--runs" in line)
    assert RUN in summary and '"toy"' in summary  # its row in results/agents/summary.csv


def test_a_toy_agent_trains_through_the_workflow_at_its_smoke_scale(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "--cores", "2", f"{RUN}/returns.csv")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    returns = pd.read_csv(toy_project / RUN / "returns.csv", comment="#")
    assert len(returns) == 6  # the smoke scale's episodes, not the config's 200
    assert (toy_project / RUN / "q_table.npy").is_file()
    record = json.loads((toy_project / RUN / "returns.csv.provenance.json").read_text())
    assert record["parameters"]["agent"] == "toy" and record["parameters"]["params"]["gamma"] == 0.99
