"""Adding an offline learner is one module and one registry line (and its config): a toy learner
registered in a copy of the shared smoke build runs through the workflow at smoke scale, and every
step that lists the learners (the figure, the summary) takes it up."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from project_copy import SMOKE, snakemake

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
REGISTRY_END = '    OfflineLearner("dqn", "offline DQN", "double_dqn", "DQN"),\n'
TOY_LINE = '    OfflineLearner("toy", "myopic Q", "toy_learner", "MyopicQ"),\n'
RUN = "results/offline/CartPole-v1/seed0"


def test_a_registered_toy_offline_learner_runs_through_the_workflow(smoke_project, tmp_path):
    # A copy of the finished smoke run: the behavioural policy and the buffer (whose steps do not
    # import the registry) are up to date, so only the toy's training job runs.
    workdir = tmp_path / "project"
    shutil.copytree(smoke_project, workdir, symlinks=True)
    shutil.copy(HERE / "toy_offline_learner.py", workdir / "src/rlstudy/offline/toy_learner.py")
    registry = workdir / "src/rlstudy/offline/learners.py"
    text = registry.read_text()
    assert REGISTRY_END in text, "the registry's last line moved: update this test"
    registry.write_text(text.replace(REGISTRY_END, REGISTRY_END + TOY_LINE))
    planned = snakemake(workdir, "offline_all", "--dry-run", *SMOKE)
    assert planned.returncode == 0, planned.stdout[-2000:] + planned.stderr[-3000:]
    for env in ("CartPole-v1", "PongNoFrameskip-v4"):  # trained, drawn and summarised like BCQ
        assert f"results/offline/{env}/seed0/toy/evaluations.csv" in planned.stdout
        assert f"figures/offline/{env}_toy_diagnostics.png" in planned.stdout

    result = snakemake(workdir, f"{RUN}/toy/evaluations.csv", *SMOKE)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    evaluations = pd.read_csv(workdir / RUN / "toy/evaluations.csv", comment="#")
    assert evaluations["iteration"].tolist() == [1000, 2000]  # the smoke budget, evaluated every 1000 updates
    assert evaluations["mean_return"].notna().all()
    record = json.loads((workdir / RUN / "toy/evaluations.csv.provenance.json").read_text())
    assert record["parameters"]["algorithm"] == "toy"
