"""The bellman study's checks of the config that its schema cannot express, run by the Snakefile
before any job (core.config.validate_config): the names the registries must know, and the
cross-field rules. One place for them: the solvers and optimisers trust a config that passed."""

from __future__ import annotations

import re
from collections import Counter

from rlstudy.core.seed_blocks import seed_block_problems

from .estimators import ESTIMATORS
from .learners.registry import OPTIMIZERS
from .learners.sweep import sweep_config_problems

# A setting's name is a folder and a wildcard value: letters, digits, '_' and '-', no other optimiser's name.
SETTING_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def registry_config_problems(config: dict, schema: dict) -> list[str]:
    """Every estimator the config names is registered (estimators.ESTIMATORS); every setting of every
    optimiser (optimizers.OPTIMIZERS) has a unique, file-safe name."""
    named = [("reference.estimator", config["reference"]["estimator"]),
             ("cbo_sweep.estimator", config["cbo_sweep"]["estimator"])]
    settings = [setting for optimizer in OPTIMIZERS.values() for setting in optimizer.settings(config)]
    named += [(f"{setting.where}.estimators", name) for setting in settings for name in setting.estimators]
    named += [("budget.estimators", name) for name in config.get("budget", {}).get("estimators", [])]
    problems = [f"config key '{key}': {name!r} is not a registered estimator; allowed: {list(ESTIMATORS)}"
                for key, name in named if name not in ESTIMATORS]
    counts = Counter(setting.name for setting in settings)
    problems += [f"config key '{setting.where}': the setting name {setting.name!r} is used twice (each labels "
                 "its own runs)" for setting in settings if counts[setting.name] > 1]
    problems += [f"config key '{setting.where}': a setting's name must match {SETTING_NAME.pattern}"
                 for setting in settings if not SETTING_NAME.match(setting.name)]
    return problems


def sweep_seed_problems(config: dict, schema: dict) -> list[str]:
    """The sweep tunes CBO; the study tests it: their replicate seeds must not overlap, so that no run
    of the study repeats a run seed the tuning saw (docs/bellman.md, 'Tuning held apart')."""
    if "cbo_sweep" not in config:
        return []
    seeds = config.get("seeds", [])
    study = set().union(*seeds.values()) if isinstance(seeds, dict) else set(seeds)
    for setting in config.get("cbo", {}).get("settings", {}).values():
        study |= set(setting.get("seeds", []))
    shared = sorted(study & set(config["cbo_sweep"].get("seeds", [])))
    if shared:
        return [f"config key 'cbo_sweep.seeds': {shared} are also seeds of the study ('seeds' or "
                "'cbo.settings.<name>.seeds'); the sweep tunes on seeds of its own"]
    return []


# seed_block_problems: no confirmatory seed is an exploratory or tuning one (core/seed_blocks.py)
CHECKS = (registry_config_problems, sweep_config_problems, sweep_seed_problems, seed_block_problems)
