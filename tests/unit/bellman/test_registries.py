"""The bellman study's registries (estimators/__init__.py, learners/registry.py) are the one list of
estimators and optimisers: the schema, the workflow's wildcards, the settings, the figures' colours
and run_method's choices derive from them, so a registered toy is accepted everywhere."""

import copy
import dataclasses
import re
from pathlib import Path

import pytest
import torch
import yaml

from rlstudy.bellman import estimators as estimator_registry
from rlstudy.bellman.config_checks import registry_config_problems
from rlstudy.core.config import ConfigError, validate_config
from rlstudy.bellman.estimators import ESTIMATORS, Estimator
from rlstudy.bellman.figures import ESTIMATOR_COLOURS
from rlstudy.bellman.learners.registry import OPTIMIZERS, all_settings
from rlstudy.bellman.numerics.compiled.residuals import make_batch, rows_per_sample, start_pool
from bellman_fixtures import dynamics

ROOT = Path(__file__).resolve().parents[3]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())
SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
COMMON = (ROOT / "workflow/rules/bellman_common.smk").read_text()

TOY = Estimator("TOY", "s_{m+1} itself, under another name", second_state=lambda draw: None, lookahead=1,
                rows_per_sample=2)


def test_the_registry_holds_the_four_estimators_in_the_figures_order():
    assert list(ESTIMATORS) == ["UR", "DS", "BFF", "BFF-matched"]
    assert {name: e.rows_per_sample for name, e in ESTIMATORS.items()} == {"UR": 3, "DS": 2, "BFF": 3,
                                                                          "BFF-matched": 3}
    assert {name: e.lookahead for name, e in ESTIMATORS.items()} == {"UR": 1, "DS": 1, "BFF": 2, "BFF-matched": 2}


def test_bff_matched_keeps_the_starts_whose_next_action_repeats():
    actions = torch.tensor([0, 0, 1, 1, 0, 1])  # a_{m+1} == a_m at m = 0 and 2 (m <= 3: two steps ahead)
    assert start_pool("BFF-matched", actions).tolist() == [0, 2]
    assert start_pool("BFF", actions).tolist() == [0, 1, 2, 3]
    assert start_pool("UR", actions).tolist() == [0, 1, 2, 3, 4]


def test_the_colours_follow_the_registry_and_keep_the_notebook_figures_colours():
    import seaborn as sns

    assert list(ESTIMATOR_COLOURS) == list(ESTIMATORS)
    assert list(ESTIMATOR_COLOURS.values()) == list(sns.color_palette("colorblind", 4))


def test_the_schema_names_no_estimator_the_registry_checks_them():
    """An enum in the schema would be a second list to edit; the config check reads the registry."""
    assert "enum" not in SCHEMA["$defs"]["estimator"]
    assert registry_config_problems(CONFIG, SCHEMA) == []
    config = copy.deepcopy(CONFIG)
    config["sgd"]["estimators"].append("TOY")
    assert registry_config_problems(config, SCHEMA) == [
        f"config key 'sgd.estimators': 'TOY' is not a registered estimator; allowed: {list(ESTIMATORS)}"]


def test_a_registered_toy_estimator_is_accepted_everywhere(monkeypatch, small_trajectory):
    monkeypatch.setitem(ESTIMATORS, "TOY", TOY)
    config = copy.deepcopy(CONFIG)
    config["sgd"]["estimators"].append("TOY")
    assert registry_config_problems(config, SCHEMA) == []
    assert rows_per_sample("TOY") == 2
    batch = make_batch(small_trajectory(), torch.arange(5), "TOY", "control", dynamics(), torch.Generator())
    assert batch.next_feats is None and batch.feats.shape == (10, 2)
    assert estimator_registry.get_estimator("TOY") is TOY


def test_the_settings_come_from_every_optimiser_in_config_order():
    settings = all_settings(CONFIG)
    assert list(settings) == ["sgd", *CONFIG["cbo"]["settings"]]
    assert settings["sgd"].optimizer == "sgd" and settings["cbo-adaptive"].optimizer == "cbo"
    assert settings["sgd"].params["control"] == CONFIG["sgd"]["control"]
    assert settings["cbo-adaptive"].estimators == tuple(CONFIG["cbo"]["settings"]["cbo-adaptive"]["estimators"])
    assert settings["cbo-adaptive"].seeds == {task: tuple(CONFIG["cbo"]["settings"]["cbo-adaptive"]["seeds"])
                                              for task in ("evaluation", "control")}


def test_sgd_seeds_are_one_list_or_a_list_per_task():
    per_task = all_settings(CONFIG)["sgd"].seeds
    assert per_task == {task: tuple(CONFIG["seeds"][task]) for task in ("evaluation", "control")}
    assert all_settings({**CONFIG, "seeds": [3, 4]})["sgd"].seeds == {"evaluation": (3, 4), "control": (3, 4)}
    validate_config({**CONFIG, "seeds": [3, 4]}, ROOT / "workflow/schemas/config.schema.yaml")
    with pytest.raises(ConfigError, match="config key 'seeds': 'evaluation' is a required property"):  # a task left out
        validate_config({**CONFIG, "seeds": {"control": [0]}}, ROOT / "workflow/schemas/config.schema.yaml")
    for optimizer in OPTIMIZERS.values():
        for setting in optimizer.settings(CONFIG):
            for params in setting.params.values():
                optimizer.params(**params)  # each setting's parameters are its optimiser's dataclass


def test_a_setting_name_used_twice_is_refused():
    config = copy.deepcopy(CONFIG)
    config["cbo"]["settings"]["sgd"] = config["cbo"]["settings"]["cbo"]
    problems = registry_config_problems(config, SCHEMA)
    assert any("the setting name 'sgd' is used twice" in p for p in problems)


def test_the_workflow_wildcards_derive_from_the_registries():
    """bellman_common.smk spells no estimator, setting or optimiser name: its wildcards are one_of(registry)."""
    constraints = COMMON[COMMON.index("wildcard_constraints:"):]
    constraints = constraints[:constraints.index("\n\n")]
    assert "estimator=one_of(ESTIMATORS)" in constraints and "setting=one_of(SETTINGS)" in constraints
    for name in [*ESTIMATORS, *OPTIMIZERS]:
        assert not re.search(rf'"{re.escape(name)}"', COMMON), name
    methods = (ROOT / "workflow/rules/methods.smk").read_text()
    assert '"sgd"' not in methods and '"cbo"' not in methods


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_every_optimiser_documents_its_parameters_in_the_schema(name):
    optimizer = OPTIMIZERS[name]
    definition = SCHEMA["$defs"][optimizer.params.SCHEMA]
    required = set(definition.get("required", []))
    for part in definition.get("allOf", []):
        required |= set(part.get("required", []))
    if "$ref" in definition:
        required |= set(SCHEMA["$defs"][definition["$ref"].removeprefix("#/$defs/")]["required"])
    assert required == {f.name for f in dataclasses.fields(optimizer.params)}


def test_the_workflows_parse_imports_no_torch_and_no_pandas():
    """docs/bellman.md, "How the registries are written": every module the workflow's rules import when
    Snakemake parses them (the registries, the config checks) stays free of PyTorch, whose import
    was a second of every Snakemake start, and of pandas (a quarter of a second: the loaders and the
    atomic writes import it where a table is read or written); the optimisers' registry names their modules."""
    import subprocess
    import sys

    smk = [*ROOT.glob("workflow/rules/*.smk"), ROOT / "Snakefile"]
    modules = sorted({m for path in smk for m in re.findall(r"^from (rlstudy[\w.]*) import", path.read_text(), re.M)})
    assert "rlstudy.bellman.learners.registry" in modules
    modules += ["rlstudy.bellman.config_checks", "rlstudy.bellman.numerics"]
    probe = f"import sys; import {', '.join(modules)}; print('torch' in sys.modules, 'pandas' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"


@pytest.mark.parametrize("step", ["bellman.cli.run_method", "bellman.cli.train_qstar",
                                  "bellman.cli.budget_finite"])
def test_a_step_reading_the_estimators_depends_on_every_registered_one(step):
    """The estimators' entries are imported, so core/sources.py finds every registered estimator's
    module among the step's imports: editing one reruns its jobs with no per-job list in the rules.
    The optimisers' are named; the rules that fit list their modules (bellman_common.smk:
    optimizer_sources; tests/workflow/test_rerun_on_edit.py edits each)."""
    import inspect

    from rlstudy.core.sources import module_sources

    src = ROOT / "src"
    sources = set(module_sources(f"rlstudy.{step}", src))
    registered = {Path(inspect.getfile(estimator.second_state)) for estimator in ESTIMATORS.values()}
    assert registered and registered <= {path.resolve() for path in sources}


def test_an_optimisers_record_names_what_its_module_holds():
    for optimizer in OPTIMIZERS.values():
        assert dataclasses.is_dataclass(optimizer.params) and callable(optimizer.fit)
        assert optimizer.fit.__module__ == optimizer.module_name == f"rlstudy.bellman.learners.{optimizer.module}"
