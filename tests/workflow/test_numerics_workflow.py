"""The reference backend of the numerics (bellman/numerics/reference.py) runs through the workflow:
a copy of the project builds a few runs and a finite-data budget fit with `--config numerics=reference`,
each step is told so, and where the run is stable its numbers are the compiled smoke build's within
float32 rounding."""

import json

import pandas as pd
import pytest
from project_copy import AUTHORS, SMOKE, copy_project, snakemake

pytestmark = pytest.mark.integration

SGD_RUN = "results/runs/ours/evaluation/sgd/UR/seed0/errors.csv"  # a falling loss: rounding stays rounding
CBO_RUN = "results/runs/ours/control/cbo/DS/seed0/errors.csv"
FINITE = "results/budget/control/finite_data/UR/error.csv"


def test_the_reference_backend_builds_runs_that_match_the_compiled_ones(tmp_path, await_smoke_project):
    workdir = copy_project(tmp_path / "reference")
    config = ["numerics=reference"] if AUTHORS else ["--config", "numerics=reference"]  # one --config list
    result = snakemake(workdir, SGD_RUN, CBO_RUN, FINITE, *SMOKE, *config)  # targets before --config
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for target in (SGD_RUN, CBO_RUN, FINITE):
        record = json.loads((workdir / f"{target}.provenance.json").read_text())
        assert "--numerics reference" in record["command"], record["command"]
    compiled = await_smoke_project()
    ours, theirs = pd.read_csv(workdir / SGD_RUN), pd.read_csv(compiled / SGD_RUN)
    assert len(ours) == len(theirs) > 1
    for column in ("error", "error_exact", "loss"):
        pd.testing.assert_series_equal(ours[column], theirs[column], rtol=1e-4, atol=1e-7)
    ours, theirs = pd.read_csv(workdir / FINITE), pd.read_csv(compiled / FINITE)
    for column in ("error_exact_normalised", "final_loss", "loss_direct"):
        pd.testing.assert_series_equal(ours[column], theirs[column], rtol=1e-6)
    cbo = pd.read_csv(workdir / CBO_RUN)
    assert cbo["rel_error_exact"].notna().all() and len(cbo) == len(pd.read_csv(compiled / CBO_RUN))
