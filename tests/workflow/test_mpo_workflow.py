"""MPO's rules at smoke scale in a temporary copy of the project: every artefact in its format."""

import pandas as pd
import pytest

pytestmark = pytest.mark.integration
TARGETS = ["figures/agents/mpo_vs_ddpg_learning_curve.png", "figures/agents/mpo_vs_ddpg_learning_curve.pdf",
           "figures/agents/mpo_diagnostics.png", "figures/agents/mpo_diagnostics.pdf",
           "figures/agents/mpo_rollout.gif"]


@pytest.fixture
def workdir(smoke_project):
    return smoke_project


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
