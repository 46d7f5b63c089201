"""MPO's rules at smoke scale in a temporary copy of the project: every artefact in its format."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from project_copy import copy_project

pytestmark = pytest.mark.integration
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
TARGETS = ["figures/agents/mpo_vs_ddpg_learning_curve.png", "figures/agents/mpo_vs_ddpg_learning_curve.pdf",
           "figures/agents/mpo_diagnostics.png", "figures/agents/mpo_diagnostics.pdf",
           "figures/agents/mpo_rollout.gif"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("project"))
    result = subprocess.run([SNAKEMAKE, "--profile", "workflow/profiles/smoke", "--cores", "2", *TARGETS],
                            cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return workdir


def test_smoke_builds_every_mpo_figure(workdir):
    for target in TARGETS:
        assert (workdir / target).stat().st_size > 0, target
    assert (workdir / "figures/agents/mpo_rollout.gif").read_bytes()[:6] == b"GIF89a"


@pytest.mark.parametrize("seed", [0, 1])
def test_run_artefacts_have_the_agreed_formats(workdir, seed):
    run = workdir / f"results/agents/mpo/seed{seed}"
    returns = pd.read_csv(run / "returns.csv")
    assert list(returns.columns) == ["episode", "step", "return"]
    assert returns["step"].is_monotonic_increasing and len(returns) >= 1
    assert list(pd.read_csv(run / "evaluation.csv").columns) == ["episode", "return"]
    diagnostics = pd.read_csv(run / "diagnostics.csv")
    for column in ("step", "temperature", "kl_mean", "kl_std", "alpha_mean", "alpha_std", "q_min", "q_mean",
                   "q_max", "skipped_nonfinite_batches", "loss_q", "loss_policy"):
        assert column in diagnostics.columns, column
    for name in ("returns.csv", "evaluation.csv", "diagnostics.csv", "model.pt"):
        assert (run / f"{name}.provenance.json").is_file(), name
