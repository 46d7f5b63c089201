"""Adding a residual estimator or an optimiser to the bellman study is one module and one registry
line (and its config): shown on a temporary copy of the project, where a toy of each is registered
so and run through the workflow at smoke scale (one run of each, with only the jobs it needs)."""

import pandas as pd
import pytest
import yaml
from project_copy import copy_project, snakemake

pytestmark = pytest.mark.integration

# A toy estimator: the second next state mirrored through s_m (s^ = 2 s_m - s_{m+1}). Biased, and
# deliberately so: only its plumbing is under test.
TOY_ESTIMATOR = '''
"""MIRROR (a toy of the tests): s^_{m+1} = 2 s_m - s_{m+1}."""

from .base import Draw, Estimator


def mirrored_state(draw: Draw):
    return 2.0 * draw.s - draw.following(1)


MIRROR = Estimator("MIRROR", "s_{m+1} mirrored through s_m", second_state=mirrored_state, lookahead=1,
                   rows_per_sample=3)
'''

# A toy optimiser: random search, keeping the best of `draws` random networks by the residual loss.
TOY_OPTIMIZER = '''
"""Random search (a toy of the tests): the best of `draws` random networks by the residual loss."""

import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import ClassVar

import pandas as pd
import torch

from ..numerics.compiled.qnet import forward_no_grad, init_params
from ..numerics.compiled.residuals import make_batch, residual_pair, start_pool
from ..numerics.loss import bellman_loss
from .optimizer import Fit, Run


@dataclass(frozen=True)
class SearchParams:
    SCHEMA: ClassVar[str] = "search_params"
    draws: int  # random networks tried
    samples: int  # transitions the loss is measured on


def fit_search(params: SearchParams, run: Run) -> Fit:
    pool = start_pool(run.estimator, run.traj.action_indices)
    starts = pool[torch.randint(len(pool), (params.samples,), generator=run.sampling)]
    batch = make_batch(run.traj, starts, run.estimator, run.task, run.problem.dynamics, run.sampling, "recorded")

    def loss(theta):
        q_next = None if batch.next_feats is None else forward_no_grad(theta, batch.next_feats)
        return float(bellman_loss(*residual_pair(forward_no_grad(theta, batch.feats), q_next, batch, run.problem.gamma)))

    start = time.perf_counter()
    best = init_params(1, run.init)[0]
    history = SimpleNamespace(error=[run.meter(best)], evaluations=[0], seconds=[0.0], loss=[loss(best)])
    for draw in range(params.draws):
        theta = init_params(1, run.sampling)[0]
        if loss(theta) < history.loss[-1]:
            best = theta
        history.loss.append(min(history.loss[-1], loss(theta)))
        history.error.append(run.meter(best))
        history.evaluations.append((draw + 1) * params.samples * run.estimator.rows_per_sample)
        history.seconds.append(time.perf_counter() - start)
    history.diagnostics = pd.DataFrame({"iteration": range(len(history.loss)), "loss": history.loss})
    return Fit(best, history, {"loss": history.loss})
'''


def register(path, registry_entry, anchor, import_line=None):
    """The registry line: the record listed in the registry's tuple (and its module imported, where
    the registry imports its records)."""
    text = path.read_text()
    assert anchor in text
    text = text.replace(anchor, f"{anchor}\n    {registry_entry},", 1)
    path.write_text(text if import_line is None else import_line + "\n" + text)


@pytest.fixture(scope="module")
def toy_project(tmp_path_factory):
    workdir = copy_project(tmp_path_factory.mktemp("registries"))
    bellman = workdir / "src" / "rlstudy" / "bellman"
    # The estimator: its module and its registry line, then its use in config.yaml.
    (bellman / "estimators" / "mirror.py").write_text(TOY_ESTIMATOR)
    register(bellman / "estimators" / "__init__.py", "MIRROR",
             "ESTIMATORS: dict[str, Estimator] = {estimator.name: estimator for estimator in (",
             import_line="from .mirror import MIRROR")
    # The optimiser: its module and its registry line (naming the module); its config section and its
    # parameters' schema.
    (bellman / "learners" / "search.py").write_text(TOY_OPTIMIZER)
    register(bellman / "learners" / "registry.py",
             'Optimizer("search", "search", "SearchParams", "fit_search", named_settings("search"), '
             'diagnostics_per="draw", params_key="search.settings.{setting}", runtime_minutes=5)',
             "OPTIMIZERS: dict[str, Optimizer] = {optimizer.name: optimizer for optimizer in (")
    config = (workdir / "config.yaml").read_text()
    assert "  estimators: [DS, UR, BFF]\n  evaluation:" in config
    config = config.replace("  estimators: [DS, UR, BFF]\n  evaluation:",
                            "  estimators: [DS, UR, BFF, MIRROR]\n  evaluation:")
    config += "\nsearch:\n  settings:\n    search:\n      estimators: [UR]\n      seeds: [0]\n" \
              "      params: {draws: 3, samples: 500}\n"
    (workdir / "config.yaml").write_text(config)
    schema_path = workdir / "workflow" / "schemas" / "config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    schema["$defs"]["search_params"] = {
        "type": "object", "additionalProperties": False, "required": ["draws", "samples"],
        "properties": {"draws": {"$ref": "#/$defs/positive_int"}, "samples": {"$ref": "#/$defs/positive_int"}}}
    schema["properties"]["search"] = {"type": "object", "additionalProperties": False, "required": ["settings"],
                                      "properties": {"settings": {"type": "object", "additionalProperties": {
                                          "type": "object", "additionalProperties": False,
                                          "required": ["estimators", "seeds", "params"],
                                          "properties": {"estimators": {"type": "array",
                                                                        "items": {"$ref": "#/$defs/estimator"}},
                                                         "seeds": {"$ref": "#/$defs/seeds"},
                                                         "params": {"$ref": "#/$defs/search_params"}}}}}}
    schema_path.write_text(yaml.safe_dump(schema, sort_keys=False))
    return workdir


TARGETS = ["results/runs/ours/control/sgd/MIRROR/seed0/errors.csv",
           "results/runs/ours/control/search/UR/seed0/errors.csv"]


def test_the_workflow_plans_the_toys_everywhere_the_registries_reach(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "-n")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in ("q_control_search", "diagnostics_control_search", "sgd/MIRROR/seed1", "search/UR/seed0"):
        assert name in result.stdout


def test_a_toy_estimator_and_a_toy_optimizer_run_through_the_workflow(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "--cores", "2", *TARGETS)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    mirror = pd.read_csv(toy_project / TARGETS[0])
    assert set(mirror["estimator"]) == {"MIRROR"} and set(mirror["setting"]) == {"sgd"}
    assert mirror["rel_error"].notna().all() and len(mirror) > 1
    search = pd.read_csv(toy_project / TARGETS[1])
    assert set(search["setting"]) == {"search"} and set(search["estimator"]) == {"UR"}
    assert len(search) == 4 and search["loss"].is_monotonic_decreasing
    # Only what the two runs need ran: no figure, no other run.
    assert not (toy_project / "figures").exists()
    assert sorted(p.parent.name for p in (toy_project / "results" / "runs").rglob("errors.csv")) == ["seed0", "seed0"]


def test_an_unregistered_estimator_in_the_config_stops_the_workflow(toy_project):
    result = snakemake(toy_project, "--profile", "workflow/profiles/smoke", "-n", "--config",
                       "reference={estimator: TD}")
    assert result.returncode != 0
    assert "'reference.estimator': 'TD' is not a registered estimator" in result.stdout + result.stderr
