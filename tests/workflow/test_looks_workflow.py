"""The confirmatory block's group-sequential design run look by look (core/looks.py, workflow/rules/looks.smk),
at smoke scale on a copy of the project with a toy lock: a design of 2 looks on three agents' lists and two
toy claims. `toy-qtable-below-dqn` (MountainCar's returns are never positive, CartPole's never below 8: the
paired sign test sees 3 of 3 pairs in its direction, p = 0.125, Pocock's first boundary at level 0.25)
holds at look 1 and stops both its lists there; `toy-linear-q-not-positive` is a share test, tested once at
its maximum, so its list goes on to look 2, where it holds. The launcher (make figures) runs both looks;
a rerun plans nothing; the seed plan the publication checks is the lists the looks ran; a look's file read back is checked, a hostile one stops the workflow in one line."""

import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from project_copy import copy_project, snakemake
from rlstudy.core.config import load_yaml, merged_config
from rlstudy.core.seed_blocks import DERIVED_FLOOR, plan_from, seed_lists

pytestmark = pytest.mark.integration

SMOKE = ["--profile", "workflow/profiles/smoke", "--cores", "2", "--config", "seed_block=confirmatory"]
START = DERIVED_FLOOR
SEED_LINE = re.compile(r"(?m)^ *seeds: \[[0-9, ]*\] *(#.*)?\n")
TOY_CLAIMS = """
  - id: toy-qtable-below-dqn
    source: a test of the looks
    statement: "qtable's final mean return is below dqn's, paired by seed."
    estimand: "the median paired difference of final_mean_return, qtable minus dqn, is below 0"
    family: agents
    tests:
      - {kind: ranking, table: agents, metric: final_mean_return, lower: {agent: qtable}, higher: {agent: dqn}, paired: true}
  - id: toy-linear-q-not-positive
    source: a test of the looks
    statement: "More than half of linear_q's runs end at a mean return of at most 0."
    estimand: "P(a run's final_mean_return <= 0) > 0.5"
    family: agents
    tests:
      - {kind: share, table: agents, metric: final_mean_return, where: {agent: linear_q}, at_most: 0, min_share: 0.5}
"""
DESIGN = {
    "looks": 2, "spending": "pocock",
    "lists": {"dqn.seeds": {"maximum": 6, "looks": [3, 6]}, "qtable.seeds": {"maximum": 6, "looks": [3, 6]},
              "linear_q.seeds": {"maximum": 4, "looks": [2, 4]}},
    "tests": [
        {"claim": "toy-qtable-below-dqn", "test": 1, "kind": "paired", "lists": ["dqn.seeds", "qtable.seeds"],
         "level": 0.25, "power": 0.8, "effect": 0.75, "maximum": 6},
        {"claim": "toy-linear-q-not-positive", "test": 1, "kind": "share", "lists": ["linear_q.seeds"],
         "level": 0.25, "power": 0.8, "effect": 0.99, "maximum": 4},
    ],
}


def smoke_lists(workdir):
    files = [load_yaml(workdir / name, "config file") for name in ("config.yaml", "workflow/profiles/smoke/scale.yaml")]
    return seed_lists(merged_config(*files))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The copy, its looks run to the end by the driver (two runs of the workflow)."""
    workdir = copy_project(tmp_path_factory.mktemp("looks"))
    with open(workdir / "claims.yaml", "a") as claims:
        claims.write(TOY_CLAIMS)
    # The smoke sizes without their exploratory seed lists: the confirmatory block puts its own in every list.
    scale = workdir / "workflow" / "profiles" / "smoke" / "scale.yaml"
    sizes = scale.read_text()
    assert re.search(SEED_LINE, sizes), "the smoke sizes changed: update this test"
    scale.write_text(re.sub(SEED_LINE, "", sizes))
    lists = smoke_lists(workdir)
    counts = {key: DESIGN["lists"][key]["maximum"] if key in DESIGN["lists"] else 1 for key in lists}
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    config["confirmatory_block"]["counts"] = counts
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    lock = {"protocol": 2, "seed_plan": plan_from(counts, START), "design": DESIGN}
    (workdir / "protocol.lock").write_text(json.dumps(lock, indent=1))
    run = subprocess.run([sys.executable, "-m", "rlstudy.runtime.launch", "looks", "results/seed_plan.csv", *SMOKE],
                         cwd=workdir, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "look 1 made and a seed list continues: running look 2" in run.stderr
    return workdir


def test_a_claim_crossing_its_boundary_at_look_1_stops_its_lists(project):
    looks = project / "results" / "looks"
    first = pd.read_csv(looks / "look1" / "claims.csv").set_index("claim")
    assert first.loc["toy-qtable-below-dqn", "claim_status"] == "holds"
    assert first.loc["toy-qtable-below-dqn", "p"] == pytest.approx(0.125)
    assert first.loc["toy-linear-q-not-positive", "claim_status"] == "open"  # a fixed test: at its maximum only
    lists = pd.read_csv(looks / "look1" / "lists.csv").set_index("list")
    assert lists.loc["qtable.seeds", "status"] == "stop" and lists.loc["dqn.seeds", "status"] == "stop"
    assert lists.loc["linear_q.seeds", ["status", "next_count"]].tolist() == ["continue", 4]
    second = pd.read_csv(looks / "look2" / "claims.csv").set_index("claim")
    assert second.loc["toy-linear-q-not-positive", ["claim_status", "n"]].tolist() == ["holds", 4]
    assert second.loc["toy-qtable-below-dqn", "claim_status"] == "holds"  # carried, not tested again
    # held at look 1: its stage-wise p is the fixed one; a fixed test's sequential p is its p
    assert second.loc["toy-qtable-below-dqn", "sequential_p"] == pytest.approx(0.125)
    assert second.loc["toy-linear-q-not-positive", "sequential_p"] == second.loc["toy-linear-q-not-positive", "p"]
    assert (pd.read_csv(looks / "look2" / "lists.csv")["status"] == "stop").all()
    assert (looks / "look2" / "lists.csv.provenance.json").is_file()
    # the stopped lists ran 3 seeds of their 6, the continuing one all 4
    summary = pd.read_csv(project / "results" / "agents" / "summary.csv")
    ran = summary.groupby("agent")["seed"].apply(sorted).to_dict()
    assert ran["qtable"] == ran["dqn"] == [START, START + 1, START + 2]
    assert ran["linear_q"] == [START + k for k in range(4)]
    assert not (project / "results" / "agents" / "qtable" / f"seed{START + 3}").exists()


def test_the_seed_plan_is_the_lists_the_looks_ran(project):
    """results/seed_plan.csv (whose digest the publication compares with the lock) is rewritten at each look:
    the lists where the looks left them (the bug: its rule's lists were a function Snakemake did not track,
    so the first look's plan stood at the end and the publication refused the run)."""
    plan = pd.read_csv(project / "results" / "seed_plan.csv").groupby("list")["seed"].apply(list).to_dict()
    assert plan["qtable.seeds"] == plan["dqn.seeds"] == [START, START + 1, START + 2]
    assert plan["linear_q.seeds"] == [START + k for k in range(4)]


def test_a_rerun_reuses_every_look(project):
    result = snakemake(project, "looks", "-n", *SMOKE)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Nothing to be done" in result.stdout + result.stderr


@pytest.mark.parametrize("look, edit, words", [
    (1, lambda text: text.replace("linear_q.seeds,1,2,continue,4", "linear_q.seeds,1,2.5,continue,4"),
     "count '2.5' is not a count"),
    (1, lambda text: text.replace("dqn.seeds,", "sweep.seeds,", 1), "list 'sweep.seeds' is not a seed list of the design"),
    (2, lambda text: text.replace("qtable.seeds,2,3,stop,3", "qtable.seeds,2,3,continue,6"), "a stopped list stays stopped"),
])
def test_a_hostile_look_file_stops_the_workflow_in_one_line(project, tmp_path, look, edit, words):
    path = project / "results" / "looks" / f"look{look}" / "lists.csv"
    kept = tmp_path / "lists.csv"
    shutil.copy(path, kept)
    text = path.read_text()
    assert edit(text) != text, "the look file changed: update this test"
    try:
        path.write_text(edit(text))
        result = snakemake(project, "looks", "-n", *SMOKE)
    finally:
        shutil.copy(kept, path)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if words in line]
    assert lines and f"results/looks/look{look}/lists.csv" in lines[0], result.stdout[-2000:] + result.stderr[-2000:]
