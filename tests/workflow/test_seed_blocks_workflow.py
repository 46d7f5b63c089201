"""The seed blocks in the workflow (issue 42): config.yaml runs the confirmatory block, resolved into the
lists every rule reads when the Snakefile loads the config; the exploratory block is one switch away; a
confirmatory seed that is also an exploratory one stops the workflow before any job, naming both keys.
The confirmatory lists are the committed protocol.lock's (config `start: protocol`). Dry runs only."""

import json
import re

import pytest
import yaml

from project_copy import copy_project, snakemake

pytestmark = pytest.mark.integration
SEED_PLAN = "rlstudy.report.cli.record_seed_plan"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("project"))


def planned(workdir, *args):
    result = snakemake(workdir, "-n", "-p", "--cores", "1", *args)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def locked(workdir) -> dict:
    return json.loads((workdir / "protocol.lock").read_text())


def first_look(workdir, key: str) -> list[int]:
    """The seeds of the list's first look: what a checkout that made no look yet runs."""
    lock = locked(workdir)
    return lock["seed_plan"][key][:lock["design"]["lists"][key]["looks"][0]]


def test_the_paper_config_runs_the_confirmatory_block_and_records_it(workdir):
    plan = planned(workdir, "results/seed_plan.csv",
                   f"results/runs/ours/control/sgd/UR/seed{first_look(workdir, 'seeds.control')[-1]}/errors.csv",
                   f"results/agents/mpo/seed{first_look(workdir, 'mpo.seeds')[-1]}/evaluation.csv")
    command = next(line for line in plan.splitlines() if SEED_PLAN in line)
    block = yaml.safe_load((workdir / "config.yaml").read_text())["confirmatory_block"]
    sweep = first_look(workdir, "cbo_sweep.seeds")
    assert block["start"] == "protocol"
    assert len(locked(workdir)["seed_plan"]["cbo_sweep.seeds"]) == block["counts"]["cbo_sweep.seeds"]
    assert "--block confirmatory" in command and f'"cbo_sweep.seeds": {sweep}' in command
    refused = snakemake(workdir, "-n", "--cores", "1", "results/runs/ours/control/sgd/UR/seed0/errors.csv")
    assert refused.returncode != 0 and "seed 0 is not a seed the config lists" in refused.stdout + refused.stderr


def test_the_exploratory_block_is_one_switch_away(workdir):
    plan = planned(workdir, "results/seed_plan.csv", "results/runs/ours/control/sgd/UR/seed0/errors.csv",
                   "--config", "seed_block=exploratory")
    command = next(line for line in plan.splitlines() if SEED_PLAN in line)
    assert "--block exploratory" in command and '"cbo_sweep.seeds": [100, 101, 102, 103, 104]' in command


def test_a_confirmatory_seed_run_before_stops_the_workflow_naming_both_keys(tmp_path):
    # the checkout's own config.yaml lists a confirmatory seed among its exploratory ones (a list given by
    # --config or another file is refused before: replaced_lists)
    workdir = copy_project(tmp_path / "overlap")
    config = workdir / "config.yaml"
    own = config.read_text()
    assert own.count("  control: [") == 1
    seed = locked(workdir)["seed_plan"]["seeds.control"][2]
    config.write_text(own.replace("  control: [", f"  control: [{seed}, ", 1))
    result = snakemake(workdir, "-n", "--cores", "1")
    assert result.returncode != 0
    assert re.search(rf"config key 'confirmatory_block\.counts\.[a-z_.-]+': its confirmatory seeds \[{seed}\] are "
                     r"also exploratory seeds \(config key 'seeds\.control'\).*write a new protocol",
                     result.stdout + result.stderr)
