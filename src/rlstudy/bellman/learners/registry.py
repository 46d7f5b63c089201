"""The registry of optimisers: one module per optimiser (optimizer.py says what it fills in), one line
here. The workflow's settings and wildcards, run_method's dispatch and the figures' wording all derive
from this registry (tests/unit/bellman/test_registries.py). The entries are imported, not named by
module and class as the agents' are: the workflow calls their `settings` at parse time (docs/bellman.md,
"How the registries are written")."""

from .cbo import CBO
from .sgd import SGD
from .optimizer import Fit, Optimizer, Run, Setting

OPTIMIZERS: dict[str, Optimizer] = {optimizer.name: optimizer for optimizer in (
    SGD,
    CBO,
)}


def all_settings(config: dict) -> dict[str, Setting]:
    """Every optimiser's settings in the config, by name (names are unique: config_checks.py)."""
    return {setting.name: setting for optimizer in OPTIMIZERS.values() for setting in optimizer.settings(config)}


__all__ = ["OPTIMIZERS", "Fit", "Optimizer", "Run", "Setting", "all_settings"]
