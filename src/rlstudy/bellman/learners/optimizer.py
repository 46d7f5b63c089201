"""What an optimiser is: the record of it in the registry (registry.py), and what its module holds.

An optimiser fits the network's parameters to a residual estimator's loss. Its module holds its
parameter dataclass (every field documented, its schema definition named by SCHEMA), its train
function, and a `fit` adapter that run_method calls with a Run; its record names them and says how
its settings are read from the config and how its figures and jobs describe it. The record imports
nothing of the module (nor PyTorch): the workflow reads the registry when it parses the Snakefile.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..problem.sde import TASKS

if TYPE_CHECKING:  # the types of a Run, imported where one is made (run_method) and fitted
    import torch

    from ..estimators import Estimator
    from .metrics import ErrorMeter
    from ..numerics.compiled.residuals import TrajectoryTensors
    from ..problem.sde import Problem


@dataclass(frozen=True)
class Run:
    """Everything one run of an optimiser needs but its parameters."""

    traj: TrajectoryTensors
    estimator: Estimator
    task: str
    problem: Problem
    init: torch.Generator  # the initial network(s)
    sampling: torch.Generator  # the transitions and the optimiser's own draws
    meter: ErrorMeter
    label: str  # names the run in messages and progress bars
    mean_reward: float  # of the trajectory (CBO's reward-level start)
    device: torch.device
    stop_on_divergence: bool = False  # end a diverging run at its last finite iterate (sweeps) instead of failing
    numerics: str = "compiled"  # the backend of the optimisers' numerics (numerics/: compiled, reference)


@dataclass(frozen=True)
class Fit:
    """What a run returns: the final parameters and the history, whose `error`, `evaluations`,
    `seconds` and `diagnostics` every optimiser records, and the optimiser's own columns of errors.csv."""

    theta: torch.Tensor
    history: Any
    columns: dict[str, Any]


@dataclass(frozen=True)
class Setting:
    """One named configuration of an optimiser: its name labels files, tables and figures (the
    `setting` column and the runs' folder), and seeds the run's random streams."""

    name: str
    optimizer: str
    estimators: tuple[str, ...]
    seeds: dict[str, tuple[int, ...]]  # task -> the replicate seeds
    params: dict[str, dict]  # task -> the parameters (the optimiser's dataclass's fields)
    where: str  # the config key of the setting, for messages (e.g. "cbo.settings.cbo")


PACKAGE = "rlstudy.bellman.learners"  # every optimiser's module lives here


@dataclass(frozen=True)
class Optimizer:
    name: str
    module: str  # its module, PACKAGE.<module>: named, imported when `params` or `fit` is read
    params_class: str  # the module's parameter dataclass
    fit_function: str  # the module's fit(params, run) -> Fit
    settings: Callable[[dict], list[Setting]]  # its settings in the config (config readers below)
    diagnostics_per: str  # what a row of its diagnostics averages over, for the figure's title
    params_key: str  # the config key of a setting's parameters, for messages ({setting}: the setting's name)
    runtime_minutes: int  # a run's time limit on a cluster (resources: runtime)
    priority: int = 0  # the scheduler starts higher first (long runs, so they do not finish last)

    @property
    def module_name(self) -> str:
        return f"{PACKAGE}.{self.module}"

    def implementation(self):
        """Its module, imported now (with PyTorch)."""
        return importlib.import_module(self.module_name)

    @property
    def params(self) -> type:
        """Its parameter dataclass."""
        return getattr(self.implementation(), self.params_class)

    @property
    def fit(self) -> Callable[[Any, Run], Fit]:
        return getattr(self.implementation(), self.fit_function)


def seeds_per_task(seeds: list[int] | dict[str, list[int]]) -> dict[str, tuple[int, ...]]:
    """A config's seeds, one list for every task or a list per task, as task -> seeds."""
    return {task: tuple(seeds[task] if isinstance(seeds, dict) else seeds) for task in TASKS}


def one_setting_per_task(optimizer: str) -> Callable[[dict], list[Setting]]:
    """Config layout `<optimizer>: {estimators: [...], <task>: {params}}` with the top-level `seeds`
    (a list, or a list per task): one setting named as the optimiser (SGD's)."""
    def read(config: dict) -> list[Setting]:
        section = config[optimizer]
        return [Setting(optimizer, optimizer, tuple(section["estimators"]), seeds_per_task(config["seeds"]),
                        {task: section[task] for task in TASKS}, optimizer)]
    return read


def named_settings(optimizer: str) -> Callable[[dict], list[Setting]]:
    """Config layout `<optimizer>: {settings: {name: {estimators, seeds, params}}}`: one setting per name,
    the same parameters for every task (CBO's)."""
    def read(config: dict) -> list[Setting]:
        return [Setting(name, optimizer, tuple(s["estimators"]), seeds_per_task(s["seeds"]),
                        {task: s["params"] for task in TASKS}, f"{optimizer}.settings.{name}")
                for name, s in config[optimizer]["settings"].items()]
    return read
