"""The registry of optimisers: one module per optimiser (optimizer.py says what it holds), one line
here. The workflow's settings and wildcards, run_method's dispatch and the figures' wording all derive
from this registry (tests/unit/bellman/test_registries.py). An entry names its module, its parameter
dataclass and its fit, as the agents' registry does: the workflow reads the entries' settings at parse
time, and naming them keeps PyTorch, which the modules import, out of every Snakemake start. The rules
that fit a setting list its module's sources as their code (bellman_common.smk: optimizer_sources)."""

from .optimizer import Fit, Optimizer, Run, Setting, named_settings, one_setting_per_task

OPTIMIZERS: dict[str, Optimizer] = {optimizer.name: optimizer for optimizer in (
    Optimizer("sgd", "sgd", "SGDParams", "fit_sgd", one_setting_per_task("sgd"), diagnostics_per="epoch",
              params_key="sgd", runtime_minutes=10),
    # CBO runs are the longest jobs: a high priority starts them first so that they do not finish last.
    Optimizer("cbo", "cbo", "CBOParams", "fit_cbo", named_settings("cbo"), diagnostics_per="epoch of the swarm",
              params_key="cbo.settings.{setting}", runtime_minutes=30, priority=5),
)}


def all_settings(config: dict) -> dict[str, Setting]:
    """Every optimiser's settings in the config, by name (names are unique: config_checks.py)."""
    return {setting.name: setting for optimizer in OPTIMIZERS.values() for setting in optimizer.settings(config)}


__all__ = ["OPTIMIZERS", "Fit", "Optimizer", "Run", "Setting", "all_settings"]
